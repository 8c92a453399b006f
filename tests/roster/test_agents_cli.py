"""`st2 agents` over a catalog holding every record state, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, build
from support import run_st2, st2_env

ABSENT = ('{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,'
          '"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"}')

ACCOUNTS = ',"account":null,"budgetHold":null}'
ROW_A = ('{"identity":"alpha.a-fresh","status":"busy","name":"Fresh","description":null,"retired":false,'
         '"resources":[{"name":"spec","uri":"file:///srv/spec.md","reason":"the contract"}],'
         '{enrich}"desiredState":"running","desiredStateReason":null,'
         '"observedState":{"state":"idle","blockedOn":"none","inputBuffer":"empty","ask":"none","harness":"claude",'
         '"since":1788000095000,"reason":null,"exit":null},'
         '"driverDiagnostic":' + ABSENT + ','
         '"context":{"harness":"codex","usedTokens":92283,"windowTokens":258400,"usedPercent":33.0,"model":null,'
         '"costUsd":null,"sessionTotalTokens":2235329,"rateLimits":{"fiveHour":31.0,"sevenDay":55.0},'
         '"rateLimited":false,"compactions":3,"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown",'
         '"observedAtMs":1788000095790,"ageMs":4210,"stale":false},'
         '"id":"alpha.a-fresh","address":"a-fresh","busAddress":"alpha.a-fresh","worktree":null,"deliveryHold":null,"account":null,"budgetHold":null}')


@pytest.fixture
def fixture_catalog(tmp_path: Path) -> Path:
    return build(tmp_path / "catalog")


def agents(catalog: Path, *args: str):
    """The roster as host alpha sees it (alpha's legacy presence word is aged by its mtime: a
    local file; beta's seat is remote), every host's seats listed."""
    return run_st2("--host", "alpha", "agents", *args, env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))


@pytest.mark.process
def test_agents_json_has_the_pinned_wire_shape_for_every_reader_arm(fixture_catalog: Path) -> None:
    result = agents(fixture_catalog, "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["identity"] for row in rows] == [
        "alpha.a-fresh", "alpha.b-stale", "alpha.c-legacy", "alpha.d-garbage", "alpha.e-suspended", "beta.f-retired"]
    wire = [json.dumps(row, separators=(",", ":")) for row in rows]
    assert wire[0] == ROW_A.replace("{enrich}", "")
    assert result.stdout == "[" + ",".join(wire) + "]\n"
    # Each axis independently: stale presence, stale observed state, a stale context that
    # survives it with its age, unclamped above 100, and an unknown trigger word.
    assert rows[1]["status"] == "unknown"
    assert rows[1]["observedState"] == {"state": "unknown", "blockedOn": "unknown", "inputBuffer": "unknown",
                                        "ask": "unknown", "harness": "claude", "since": None, "reason": "stale", "exit": None}
    assert rows[1]["context"]["stale"] is True and rows[1]["context"]["ageMs"] == 61 * 60_000
    assert rows[1]["context"]["usedPercent"] == 585.6
    assert rows[1]["context"]["lastCompactionTrigger"] == "unknown"
    # A legacy word aged by mtime; future skew reads unknown (state) and absent (context).
    assert rows[2]["status"] == "dnd"
    assert rows[2]["observedState"]["reason"] == "future-skew"
    assert rows[2]["context"] is None
    assert json.dumps(rows[2]["driverDiagnostic"], separators=(",", ":")) == (
        '{"status":"failure","driver":"codex","stage":"delivery","reason":"deliveryRejected",'
        '"source":"promptTransport","producerVersion":"0.55.0","support":"supported","observedAt":1788000097500,'
        '"evidenceAgeMs":2500,"recovery":"clearsOnStageRecovery"}')
    # Garbage never reads as a definite value.
    assert rows[3]["status"] == "offline"
    assert rows[3]["observedState"]["state"] == "unknown"
    assert rows[3]["observedState"]["reason"] == "malformed-record"
    assert rows[3]["context"] is None
    assert rows[3]["driverDiagnostic"]["status"] == "indeterminate"
    # Presence, desired state and observed state stay separate axes.
    assert (rows[4]["status"], rows[4]["desiredState"], rows[4]["desiredStateReason"]) == ("offline", "suspended", "waiting for CI")
    assert (rows[4]["observedState"]["state"], rows[4]["observedState"]["blockedOn"]) == ("active", "human")
    assert rows[4]["context"]["usedPercent"] is None and rows[4]["context"]["windowTokens"] == 200000
    # Retired: busAddress null, declared id and address kept; ended survives.
    assert (rows[5]["retired"], rows[5]["busAddress"], rows[5]["id"], rows[5]["address"]) == (True, None, "agent-0007", "archivist")
    assert rows[5]["observedState"]["state"] == "ended" and rows[5]["observedState"]["exit"] == "exit 0"


@pytest.mark.process
def test_agents_json_enrich_inserts_last_activity_and_inbox_after_resources(fixture_catalog: Path) -> None:
    result = agents(fixture_catalog, "--json", "--enrich", "--identity", "alpha.a-fresh")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    # lastActivity is the v1 status origin (newer than the mail files); the settled message is
    # shadowed by its archive receipt, so one unread remains.
    enrich = '"lastActivity":1788000099000.0,"inbox":1,"session":null,'
    # resourceStates comes after every other field; everything before it is unchanged.
    states = ('"resourceStates":[{"schema":"st2.resource-state.v1","agent":"alpha.a-fresh","binding":"spec",'
              '"uri":"file:///srv/spec.md","generation":1,"revision":1,'
              '"hostDigest":"sha256:8fb1cd74d9689a65bdf081941b459a5a575e4923b8c9254bf73ac2df65a6c942",'
              '"hostObservedAtMs":1788000070000,"facts":{"branch":"main","dirty":false},'
              '"lastFailure":{"kind":"provider-failed","message":"/srv/spec.md is not UTF-8 text","atMs":1788000098000},'
              '"writtenAtMs":1788000098000}]')
    plain = ROW_A.replace("{enrich}", enrich)[:-len(ACCOUNTS)]   # the accounts' two fields come after it
    assert result.stdout == "[" + plain + "," + states + ACCOUNTS + "]\n"


@pytest.mark.process
def test_an_empty_roster_is_an_empty_array(catalog: Path) -> None:
    for args in (("--json",), ("--json", "--enrich")):
        result = agents(catalog, *args)
        assert (result.returncode, result.stdout) == (0, "[]\n")


@pytest.mark.process
def test_status_filter_selects_by_presence(fixture_catalog: Path) -> None:
    result = agents(fixture_catalog, "--json", "--status", "offline")
    assert [row["identity"] for row in json.loads(result.stdout)] == ["alpha.d-garbage", "alpha.e-suspended", "beta.f-retired"]
    result = agents(fixture_catalog, "--json", "--status", "away")
    assert result.stdout == "[]\n"


@pytest.mark.process
def test_an_unknown_identity_selector_is_an_error(fixture_catalog: Path) -> None:
    result = agents(fixture_catalog, "--json", "--identity", "alpha.nobody")
    assert result.returncode == 1
    assert "no agent alpha.nobody" in result.stderr


@pytest.mark.process
def test_human_output_shows_each_axis_independently(fixture_catalog: Path) -> None:
    result = agents(fixture_catalog)
    assert result.returncode == 0, result.stderr
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert lines == [
        "AGENT PRESENCE DESIRED OBSERVED CONTEXT NAME",
        "alpha.a-fresh busy running obs:idle ctx:33% ⟳3 Fresh",
        "alpha.b-stale unknown running obs:unknown(stale) ctx:586% ⟳1 stale",
        "alpha.c-legacy dnd running obs:unknown(future-skew) ctx:-",
        "alpha.d-garbage offline running obs:unknown(malformed-record) ctx:-",
        "alpha.e-suspended offline suspended (waiting for CI) obs:active+blocked:human ctx:?",
        "beta.f-retired offline retired (replaced) obs:ended ctx:-",
    ]
