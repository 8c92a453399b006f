"""The name grammar of hosts, identities and principals (st2/catalog/names.py): what discovery
refuses, with the reason, so no command lists, launches or prints a name that breaks a terminal
or an output line; and runtime-id uniqueness, which validate checks before `up` would refuse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.catalog.discovery import discover
from st2.catalog.names import name_problem, shown
from support import run_st2, st2_env


@pytest.mark.parametrize("name", ["worker", "w", "a-b_c", "seat.two", "_x", "A9", "x" * 128])
def test_a_grammatical_identity_is_accepted(name: str) -> None:
    assert name_problem(name, "identity") is None


@pytest.mark.parametrize("name, reason", [
    ("bad\x1b[31mred", "control character"), ("two\nlines", "control character"), ("del\x7f", "control character"),
    ("a b", "whitespace"), ("caf\u00e9", "non-ASCII"), ("\u202eevil", "control character"),
    ("-rf", "starts with '-'"), (".hidden", "starts with '.'"), ("x" * 129, "longer than 128"),
    ("a;b", "';'"), ("a$b", "'$'"), ("", "empty"),
])
def test_an_identity_outside_the_grammar_is_refused_with_its_reason(name: str, reason: str) -> None:
    problem = name_problem(name, "identity")
    assert problem is not None and reason in problem, problem


@pytest.mark.parametrize("name", ["seat.sync-conflict-20260101-120000-ABCDEFG", "a.sync-conflict-x"])
def test_an_identity_a_replication_engine_never_carries_is_refused(name: str) -> None:
    assert "replication engine's own file pattern" in name_problem(name, "identity")


@pytest.mark.parametrize("name", ["sync-conflict", "conflict.sync", "seat.sync_conflict-1"])
def test_a_name_near_the_conflict_copy_pattern_is_accepted(name: str) -> None:
    assert name_problem(name, "identity") is None


def test_discovery_refuses_a_seat_directory_named_like_a_conflict_copy(catalog: Path) -> None:
    seat(catalog, "h", "good")
    seat(catalog, "h", "good.sync-conflict-20260101-120000-ABCDEFG")
    found = discover(catalog)
    assert [s.identity for s in found.seats] == ["good"]
    [error] = found.errors
    assert error.code == "catalog-entry-unsafe-name" and "conflict" in error.message


def test_a_host_may_not_hold_a_dot_but_an_identity_may() -> None:
    assert "runtime ids are <host>.<identity>" in name_problem("a.b", "host")
    assert name_problem("a.b", "identity") is None


def test_shown_escapes_every_non_printable_character() -> None:
    assert shown("bad\x1b[31m\nx\u202e") == "bad\\x1b[31m\\nx\\u202e"
    assert shown("plain-name") == "plain-name"


def seat(catalog: Path, host: str, identity: str, body: str = '    argv "sh" "-c" "true"\n') -> None:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}}}\n')


def test_discovery_refuses_a_control_character_identity_and_keeps_its_neighbours(catalog: Path) -> None:
    seat(catalog, "h", "good")
    seat(catalog, "h", "bad\x1b[2J")
    found = discover(catalog)
    assert [s.identity for s in found.seats] == ["good"]
    [error] = found.errors
    assert error.code == "catalog-entry-unsafe-name" and "\x1b" not in str(error)
    assert "agents/h/bad\\x1b[2J" in str(error) and "control character" in str(error)


@pytest.mark.process
def test_no_command_prints_a_raw_control_character_from_a_name(tmp_path: Path, catalog: Path) -> None:
    seat(catalog, "h", "good")
    seat(catalog, "h", "evil\x1b]0;pwned\x07\nfake line")
    env = st2_env(catalog, XDG_STATE_HOME=str(tmp_path / "state"))
    try:
        for argv in (["validate"], ["ls"], ["agents"], ["tasks"], ["doctor"], ["up", "--once"]):
            result = run_st2(*argv, "--host", "h", env=env, timeout=60)
            output = result.stdout + result.stderr
            assert "\x1b" not in output and "\x07" not in output and "\nfake line" not in output, (argv, output)
            assert "Traceback" not in output
    finally:
        run_st2("down", "--host", "h", env=env, timeout=60)


def test_validate_refuses_a_runtime_id_two_tasks_claim(catalog: Path) -> None:
    seat(catalog, "h", "x", '    argv "sh" "-c" "true"\n    ding\n')
    seat(catalog, "h", "x.ding")
    from st2.authoring.validation import validate_catalog

    problems = [d for d in validate_catalog(catalog, "h") if d.code == "duplicate-task"]
    assert len(problems) == 2
    assert {d.source for d in problems} == {"agents/h/x/agent.kdl", "agents/h/x.ding/agent.kdl"}
    assert all("runtime id h.x.ding is claimed by 2 tasks: h.x (ding), h.x.ding (agent)" in d.message for d in problems)
    assert all(d.span is not None and d.span.line == 1 for d in problems)


def test_distinct_runtime_ids_pass_validate(catalog: Path) -> None:
    seat(catalog, "h", "x", '    argv "sh" "-c" "true"\n    ding\n')
    seat(catalog, "h", "x.dong")
    from st2.authoring.validation import validate_catalog

    assert [d for d in validate_catalog(catalog, "h") if d.severity == "error"] == []
