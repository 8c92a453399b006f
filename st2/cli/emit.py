"""``st2 emit <document>``: the kit's emitting arms (exit 0 document, 2 refusal; never 1).
Parsing glue only: each subcommand forwards its words to its core function."""

from __future__ import annotations

import click

from st2.cli.common import exit_with
from st2.cli.usage import RawCommand


@click.group()
def emit() -> None:
    """Documents generated from the kit's knobs (agent-tiers, knob-roster, knob-values)."""


@emit.command("agent-tiers", cls=RawCommand)
def agent_tiers(words: tuple[str, ...]) -> None:
    """[--write] [--] [AGENT_DIR]: each tiered definition's model:/effort: from the tier binding."""
    from st2.kit.agent_tiers import emit as run

    exit_with(run(list(words)))


@emit.command("knob-roster", cls=RawCommand)
def knob_roster(words: tuple[str, ...]) -> None:
    """Every DELEGATION_KIT_* knob with its shape and rendered default."""
    from st2.kit.knob_documents import roster

    exit_with(roster(list(words)))


@emit.command("knob-values", cls=RawCommand)
def knob_values(words: tuple[str, ...]) -> None:
    """[--] NAME: the knob's resolved value (an indexed knob one element per line)."""
    from st2.kit.knob_documents import values

    exit_with(values(list(words)))
