"""Validate refuses a name that takes another seat's mail or is never carried, and a presentation
value that would reorder or hide what a terminal shows: an ``address`` equal to another seat's
identity, bus id or address (mail to it is refused as ambiguous, so that seat is unreachable by
the name), a seat directory named like a replication engine's conflict copy (the sync rules never
carry it, so mail to it from another host is lost), and a bidi or invisible format character
(Unicode Cf) in a ``name`` or ``description`` — each at file:line:column, through the real CLI,
and the authoring verbs refuse to write any of them with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process


def seat(catalog: Path, identity: str, body: str = "") -> Path:
    directory = catalog / "agents" / "h" / identity
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh"\n{body}}}\n')
    return directory


def validate(catalog: Path):
    return run_st2("validate", "--catalog", str(catalog), "--host", "h", env=st2_env(catalog))


@pytest.mark.parametrize("address", ["b", "h.b", "shared"])
def test_an_address_another_seat_answers_to_is_refused_at_its_line(catalog: Path, address: str) -> None:
    seat(catalog, "a", f'    address "{address}"\n')
    seat(catalog, "b", '    address "shared"\n' if address == "shared" else "")
    result = validate(catalog)
    assert result.returncode != 0, result.stdout
    assert (f'agents/h/a/agent.kdl:3:5: error[address-collision]: address "{address}" also names h.b: '
            "mail to it would be refused as ambiguous") in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_distinct_address_and_a_retired_namesake_validate_clean(catalog: Path) -> None:
    seat(catalog, "a", '    address "desk"\n')
    seat(catalog, "b", '    address "b"\n')  # its own identity: names only itself
    seat(catalog, "old", '    address "desk"\n    desired-state "retired" reason="moved"\n')
    result = validate(catalog)
    assert result.returncode == 0, result.stdout


def test_st2_agent_address_refuses_another_seats_name_and_writes_nothing(catalog: Path) -> None:
    a = seat(catalog, "a")
    seat(catalog, "b")
    before = (a / "agent.kdl").read_bytes()
    result = run_st2("agent", "address", "--catalog", str(catalog), "--host", "h", "a", "h.b", env=st2_env(catalog))
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "address-collision" in result.stderr
    assert (a / "agent.kdl").read_bytes() == before


def test_a_seat_directory_named_like_a_conflict_copy_is_refused_at_its_declaration(catalog: Path) -> None:
    seat(catalog, "good")
    seat(catalog, "good.sync-conflict-20260101-120000-ABCDEFG")
    result = validate(catalog)
    assert result.returncode != 0
    assert ("agents/h/good.sync-conflict-20260101-120000-ABCDEFG/agent.kdl:1:1: error[catalog-entry-unsafe-name]"
            in result.stdout), result.stdout
    assert "replication engine's own file pattern" in result.stdout


@pytest.mark.parametrize("field", ["name", "description"])
@pytest.mark.parametrize("character", ["\u202e", "\u200b", "\u2066", "\u2069", "\ufeff"])
def test_a_format_character_in_a_presentation_value_is_refused_at_its_line(catalog: Path, field: str,
                                                                           character: str) -> None:
    seat(catalog, "a", f'    {field} "left\\u{{{ord(character):x}}}right"\n')  # a KDL escape: raw, KDL refuses it
    result = validate(catalog)
    assert result.returncode != 0
    assert f"agents/h/a/agent.kdl:3:{len(field) + 6}: error[presentation-invalid]" in result.stdout, result.stdout
    assert character not in result.stdout + result.stderr


@pytest.mark.parametrize("option", ["--name", "--description"])
def test_st2_agent_describe_refuses_a_format_character_with_one_escaped_line(catalog: Path, option: str) -> None:
    a = seat(catalog, "a")
    before = (a / "agent.kdl").read_bytes()
    result = run_st2("agent", "describe", "--catalog", str(catalog), "--host", "h", "a", option, "x\u202eevil",
                     env=st2_env(catalog))
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "presentation-invalid" in result.stderr and "\u202e" not in result.stderr
    assert (a / "agent.kdl").read_bytes() == before


def test_no_listing_prints_a_format_character_from_a_presentation_value(catalog: Path, tmp_path: Path) -> None:
    seat(catalog, "a", '    name "left\\u{202e}right"\n    description "zero\\u{200b}width\\u{2066}"\n')
    env = st2_env(catalog, XDG_STATE_HOME=str(tmp_path / "state"))
    for argv in (["agents"], ["agents", "--json"], ["top", "--once"], ["doctor"]):
        result = run_st2(*argv, "--catalog", str(catalog), "--host", "h", env=env)
        output = result.stdout + result.stderr
        assert not any(character in output for character in "\u202e\u200b\u2066"), (argv, output)
        assert "Traceback" not in output
