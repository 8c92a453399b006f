"""No fabricated roster value, through the real `st2 agents`: a context percent outside its
domain reads absent, a harness-state record naming another seat reads unknown, a declaration
that does not load reads ``invalid`` (never ``running``); and the text roster a user reads
(header, enrich columns, bare identity selector, warnings that name their seat)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, _json, _seat, context_record, state_record
from support import run_st2, st2_env

pytestmark = pytest.mark.process


def agents(catalog: Path, *args: str):
    return run_st2("agents", "--host", "alpha", *args, env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))


def seat_with_context(catalog: Path, identity: str, percent) -> Path:
    seat = _seat(catalog, "alpha", identity, f'agent "{identity}" {{\n    argv "sh" "-c" "true"\n}}\n')
    _json(seat / "harness-context", context_record(f"alpha.{identity}", "codex", NOW_MS - 1000, usedPercent=percent))
    return seat


@pytest.mark.parametrize("percent", [-5, -0.4, -1e-9])
def test_a_percent_below_zero_reads_absent_not_a_fill(catalog: Path, percent) -> None:
    seat_with_context(catalog, "w", percent)
    rows = json.loads(agents(catalog, "--json").stdout)
    assert rows[0]["context"]["usedPercent"] is None
    human = agents(catalog).stdout.splitlines()[1]
    assert "ctx:?" in human and "ctx:0%" not in human and "ctx:-5%" not in human


@pytest.mark.parametrize("percent, shown", [(0, "ctx:0%"), (33.4, "ctx:33%"), (585.6, "ctx:586%"), (999, "ctx:999%")])
def test_a_percent_in_the_domain_is_carried_and_shown(catalog: Path, percent, shown: str) -> None:
    seat_with_context(catalog, "w", percent)
    rows = json.loads(agents(catalog, "--json").stdout)
    assert rows[0]["context"]["usedPercent"] == float(percent)
    assert shown in agents(catalog).stdout.splitlines()[1]


@pytest.mark.parametrize("percent, shown", [(1e308, "1e308%"), (1234.5, "1.2e3%"), (999.6, "1e3%")])
def test_a_huge_overrun_is_carried_unclamped_in_json_and_never_clamped_in_text(catalog: Path, percent, shown) -> None:
    seat_with_context(catalog, "w", percent)
    assert json.loads(agents(catalog, "--json").stdout)[0]["context"]["usedPercent"] == percent
    line = agents(catalog).stdout.splitlines()[1]
    assert f"ctx:{shown}" in line and ">999%" not in line and len(line) < 120
    doctor = run_st2("doctor", "--host", "alpha", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert f"context window {shown} full" in doctor.stdout and "0000000" not in doctor.stdout


def test_a_harness_state_naming_another_seat_reads_unknown(catalog: Path) -> None:
    mine = _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _json(mine / "harness-state", state_record("alpha.other", "active", NOW_MS - 1000))
    observed = json.loads(agents(catalog, "--json").stdout)[0]["observedState"]
    assert observed["state"] == "unknown" and observed["reason"] == "foreign-agent"


@pytest.mark.parametrize("agent", ["alpha.w", "w"])
def test_a_harness_state_naming_this_seat_reads_its_state(catalog: Path, agent: str) -> None:
    mine = _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _json(mine / "harness-state", state_record(agent, "idle", NOW_MS - 1000))
    observed = json.loads(agents(catalog, "--json").stdout)[0]["observedState"]
    assert observed["state"] == "idle"


def test_an_unparseable_declaration_reads_invalid_not_running(catalog: Path) -> None:
    _seat(catalog, "alpha", "broken", 'agent "broken" {\n    desired-state "retired"\n    argv "sh" {\n')
    result = agents(catalog, "--json")
    row = json.loads(result.stdout)[0]
    keys = list(row)
    assert keys == ["identity", "status", "name", "description", "retired", "resources", "desiredState",
                    "desiredStateReason", "observedState", "driverDiagnostic", "context", "id", "address", "busAddress",
                    "worktree", "deliveryHold", "account", "budgetHold"]
    assert row["desiredState"] == "invalid"
    assert row["desiredStateReason"].startswith("agents/alpha/broken/agent.kdl:")
    assert "invalid (agents/alpha/broken/agent.kdl:" in agents(catalog).stdout


def test_an_invalid_declarations_diagnostic_stays_on_its_seats_row(catalog: Path) -> None:
    # The quoted value carries a newline and an escape sequence; the diagnostic has a help line.
    _seat(catalog, "alpha", "broken", 'agent "broken" {\n    argv "sh"\n    restart { delay "a\\nb\\u{1b}[31mRED" }\n}\n')
    _seat(catalog, "alpha", "fine", 'agent "fine" {\n    argv "sh" "-c" "true"\n}\n')
    lines = agents(catalog).stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["AGENT", "alpha.broken", "alpha.fine"], lines
    assert ('invalid (agents/alpha/broken/agent.kdl:3:21: error[restart-invalid]: restart `delay` '
            '"a\\nb\\x1b[31mRED" is not a duration; help: write a number with a unit:') in lines[1]
    # The JSON keeps the diagnostic itself (JSON escapes what it must).
    row = json.loads(agents(catalog, "--json").stdout)[0]
    assert row["desiredStateReason"].startswith('agents/alpha/broken/agent.kdl:3:21: error[restart-invalid]: '
                                                'restart `delay` "a\\nb\\x1b[31mRED" is not a duration\n  help: ')


def test_a_valid_declaration_keeps_its_desired_state(catalog: Path) -> None:
    _seat(catalog, "alpha", "fine", 'agent "fine" {\n    desired-state "retired" reason="done"\n    argv "sh" "-c" "true"\n}\n')
    row = json.loads(agents(catalog, "--json").stdout)[0]
    assert row["desiredState"] == "retired" and row["desiredStateReason"] == "done"


def test_text_roster_has_a_header_and_enrich_adds_its_columns(catalog: Path) -> None:
    seat = _seat(catalog, "alpha", "w", 'agent "w" {\n    name "Worker"\n    argv "sh" "-c" "true"\n}\n')
    (seat / "resources" / "inbox" / "1788000000000-abcdef.md").write_text("---\nfrom: alpha.x\nsubject: s\n---\nb\n")
    plain = agents(catalog).stdout.splitlines()
    assert plain[0].split() == ["AGENT", "PRESENCE", "DESIRED", "OBSERVED", "CONTEXT", "NAME"]
    enriched = agents(catalog, "--enrich").stdout.splitlines()
    assert enriched[0].split() == ["AGENT", "PRESENCE", "DESIRED", "OBSERVED", "CONTEXT", "LAST-ACTIVITY", "INBOX", "NAME"]
    cells = enriched[1].split()
    assert cells[-2:] == ["1", "Worker"] and cells[-3] == "ago"


def test_identity_selector_accepts_a_bare_identity_of_this_host(catalog: Path) -> None:
    _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _seat(catalog, "beta", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    bare = json.loads(agents(catalog, "--json", "--identity", "w").stdout)
    assert [row["identity"] for row in bare] == ["alpha.w"]
    full = json.loads(agents(catalog, "--json", "--identity", "beta.w").stdout)
    assert [row["identity"] for row in full] == ["beta.w"]
    missing = agents(catalog, "--identity", "nobody")
    assert missing.returncode == 1 and "no agent nobody" in missing.stderr


def test_a_record_warning_names_its_seat(catalog: Path) -> None:
    seat = _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _json(seat / "harness-context", context_record("alpha.w", "nonesuch", NOW_MS - 1000))
    result = agents(catalog)
    assert "alpha.w: harness 'nonesuch'" in result.stderr, result.stderr


def surfaces(catalog: Path) -> dict[str, str]:
    """What a user reads of the seat through every surface that shows context: roster (text and
    JSON), Doctor, `st2 events` (no journal: what the records prove) and `st2 top --once`."""
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS))
    return {
        "json": agents(catalog, "--json").stdout,
        "text": agents(catalog).stdout,
        "doctor": run_st2("doctor", "--host", "alpha", env=env).stdout,
        "events": run_st2("--host", "alpha", "events", "--json", env=env).stdout,
        "top": run_st2("top", "--once", "--host", "alpha", env=env).stdout,
    }


def test_a_harness_context_naming_another_seat_reads_absent_everywhere(catalog: Path) -> None:
    # A seat directory copied to make a new seat keeps the old seat's record, at 85 % with two
    # compactions: none of it is the new seat's context.
    seat = _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _json(seat / "harness-context", context_record("alpha.other", "codex", NOW_MS - 1000, usedPercent=85,
                                                   compactions=2, lastCompactionMs=NOW_MS - 2000))
    shown = surfaces(catalog)
    assert json.loads(shown["json"])[0]["context"] is None
    assert "ctx:85%" not in shown["text"] and shown["text"].splitlines()[1].endswith("ctx:-")
    assert "context window" not in shown["doctor"]
    assert '"kind":"context"' not in shown["events"] and '"kind":"compaction"' not in shown["events"]
    assert "85%" not in shown["top"]


@pytest.mark.parametrize("agent", ["alpha.w", "w"])
def test_a_harness_context_naming_this_seat_is_its_context_everywhere(catalog: Path, agent: str) -> None:
    seat = _seat(catalog, "alpha", "w", 'agent "w" {\n    argv "sh" "-c" "true"\n}\n')
    _json(seat / "harness-context", context_record(agent, "codex", NOW_MS - 1000, usedPercent=85,
                                                   compactions=2, lastCompactionMs=NOW_MS - 2000))
    shown = surfaces(catalog)
    assert json.loads(shown["json"])[0]["context"]["usedPercent"] == 85.0
    assert "ctx:85%" in shown["text"]
    assert "context window 85% full" in shown["doctor"]
    assert '"kind":"context"' in shown["events"] and '"kind":"compaction"' in shown["events"]
    assert "85%" in shown["top"]
