"""The agent-facing bus guide: every command it tells an agent to run parses with the real CLI,
and it states the presence discipline."""

from __future__ import annotations

import shlex

import click
import pytest

from st2.bus.guide import guide_text
from st2.cli import cli


def guide_commands() -> list[list[str]]:
    lines = [line.strip().strip("`") for line in guide_text().splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("st2 ")]


def parse(words: list[str]) -> None:
    """Resolve the subcommand path and parse the rest as the real CLI would, without running."""
    command: click.Command = cli
    context = cli.make_context("st2", [], resilient_parsing=True)
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        found = command.get_command(context, words[0])
        assert found is not None, f"no command {words[0]!r}"
        command, words = found, words[1:]
        context = click.Context(command, parent=context, info_name=command.name)
    command.make_context(command.name, list(words), parent=context)


def test_the_guide_names_commands_that_exist() -> None:
    commands = guide_commands()
    assert len(commands) >= 10
    for words in commands:
        parse(words)


def test_a_misspelled_guide_command_would_be_caught() -> None:
    with pytest.raises(AssertionError, match="no command"):
        parse(["message", "lsx"])
    with pytest.raises(click.UsageError):
        parse(["message", "ls", "--no-such-flag"])


def test_the_guide_states_the_presence_discipline() -> None:
    flat = " ".join(guide_text().split())
    assert ["status", "--set", "busy"] in guide_commands()
    assert ["status", "--set", "available"] in guide_commands()
    assert ["status", "--set", "dnd"] in guide_commands()
    assert "Immediately before you start executing a unit of work" in flat
    assert "available only while you are yielding or ready for new work" in flat
    assert "Use dnd only for an explicit hold. It is the only presence that holds back new-mail notices; busy does not" in flat
