"""The delegation kit's top-level verbs (``st2 model-verdict``, ``st2 foreign …``, ``st2 kit
…``). Parsing glue only: each forwards its words unparsed to its core function, whose own argv
grammar (the ``--`` escape, the dash-led refusal) is the contract."""

from __future__ import annotations

import click

from st2.cli.common import exit_with
from st2.cli.usage import RawCommand


@click.command("model-verdict", cls=RawCommand)
def model_verdict(words: tuple[str, ...]) -> None:
    """[--expect CLASS] [--] [TRANSCRIPT.jsonl | SESSION8]: the model this session runs on
    (READ/OK exit 0, BELOW/UNBOUND 1, UNKNOWN 2)."""
    from st2.kit.model_verdict import main

    exit_with(main(list(words)))


@click.group()
def foreign() -> None:
    """The foreign-vendor run: an audit or sweep on another vendor's agent in a throwaway clone."""


@foreign.command("run", cls=RawCommand)
def foreign_run(words: tuple[str, ...]) -> None:
    """ADAPTER PROMPT_FILE [--mode audit|sweep] [--class CLASS] [--key KEY] | ADAPTER --budget
    (exit 0 OK, 1 REFUSED or PAUSE, 2 FAILED)."""
    from st2.kit.foreign.executor import run

    exit_with(run(list(words)))


@foreign.command("resume", cls=RawCommand)
def foreign_resume(words: tuple[str, ...]) -> None:
    """KEY PROMPT_FILE: the next turn of an open session."""
    from st2.kit.foreign.executor import resume

    exit_with(resume(list(words)))


@foreign.command("close", cls=RawCommand)
def foreign_close(words: tuple[str, ...]) -> None:
    """KEY: end an open session (its clone removed, every report kept)."""
    from st2.kit.foreign.executor import close

    exit_with(close(list(words)))


@click.group()
def kit() -> None:
    """The delegation kit: install its templates, gate declarations and registration snippets."""


@kit.command("init", cls=RawCommand)
def kit_init(words: tuple[str, ...]) -> None:
    """[--] [PROJECT_DIR]: install the kit into a project (nothing written on a conflict, exit 2)."""
    from st2.kit.install import init

    exit_with(init(list(words)))
