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
