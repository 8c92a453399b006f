"""check-agent-tier-explicit's good/bad fixture pair, and `st2 emit agent-tiers [--write]`:
its report lines, its byte-exact rewrite, its refusal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kit_support import hermetic_environment, run_st2

pytestmark = pytest.mark.process

FIXTURES = Path(__file__).resolve().parent / "agent-tiers"


def st2(args, sandbox, cwd, knob_file=None):
    environ = hermetic_environment(sandbox)
    if knob_file is not None:
        environ["DELEGATION_KIT_KNOB_FILE"] = str(knob_file)
    result = run_st2(args, environ, cwd=cwd)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


@pytest.fixture
def tree(tmp_path):
    def copy(side: str) -> Path:
        target = tmp_path / side
        shutil.copytree(FIXTURES / side, target)
        return target
    return copy


def test_good_side_is_clean_omission_told_from_choice(sandbox, tree) -> None:
    good = tree("good")
    assert st2(["check", "agent-tier-explicit", "agents"], sandbox, good, good / "delegation-config.knobs") == (
        0, "check-agent-tier-explicit: clean (3 definition(s) scanned, 2 holding their class's bound model)\n", "")


def test_bad_side_reds_on_both_assertions(sandbox, tree) -> None:
    bad = tree("bad")
    status, out, err = st2(["check", "agent-tier-explicit", "agents"], sandbox, bad, bad / "delegation-config.knobs")
    assert (status, err) == (1, "")
    assert out == (
        "check-agent-tier-explicit: A: agents/silent.md: declares no model: (omission rides the dispatcher's tier; state a tier:, or model: inherit to choose that)\n"
        "check-agent-tier-explicit: B: agents/stale-effort.md: tier: judgment is stale (effort: low is not high)\n"
        "check-agent-tier-explicit: B: agents/stale-model.md: tier: mechanical is stale (model: big-model is not small)\n"
        "check-agent-tier-explicit: B: agents/unbound.md: tier: routing names a class the binding leaves unbound\n"
        "help: every agent definition states model: (or tier: <class> and run st2 emit agent-tiers --write)\n"
        "help: regenerate the tiered lines from DELEGATION_KIT_TIER_MODEL: st2 emit agent-tiers --write\n"
    )


def test_binding_off_keeps_assertion_a_only(sandbox, tree) -> None:
    bad = tree("bad")
    status, out, _ = st2(["check", "agent-tier-explicit", "agents"], sandbox, bad)
    assert status == 1
    assert out.splitlines()[:1] == [
        "check-agent-tier-explicit: A: agents/silent.md: declares no model: (omission rides the dispatcher's tier; state a tier:, or model: inherit to choose that)"]
    assert [line for line in out.splitlines() if ": B:" in line] == []
    good = tree("good")
    assert st2(["check", "agent-tier-explicit", "agents"], sandbox, good)[:2] == (
        0, "check-agent-tier-explicit: clean (3 definition(s) scanned, binding off)\n")


def test_an_absent_agent_dir_scans_zero_and_reads_clean(sandbox, tmp_path) -> None:
    assert st2(["check", "agent-tier-explicit"], sandbox, tmp_path) == (
        0, "check-agent-tier-explicit: clean (0 definition(s) scanned, binding off)\n", "")


def test_a_model_with_no_tier_reds_under_a_binding_and_inherit_does_not(sandbox, tmp_path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "hand.md").write_text("---\nmodel: big-model\n---\n")
    (tmp_path / "agents" / "free.md").write_text("---\nmodel: inherit\n---\n")
    knobs = tmp_path / "k.knobs"
    knobs.write_text("DELEGATION_KIT_TIER_MODEL[] = judgment=big-model\n")
    status, out, _ = st2(["check", "agent-tier-explicit", "agents"], sandbox, tmp_path, knobs)
    assert status == 1
    assert out.splitlines()[0] == "check-agent-tier-explicit: B: agents/hand.md: model: big-model with no tier: names no class of the binding"
    assert "free.md" not in out


def test_emit_reports_each_tiered_definition(sandbox, tree) -> None:
    good = tree("good")
    assert st2(["emit", "agent-tiers", "agents"], sandbox, good, good / "delegation-config.knobs") == (
        0, "agents/cheap.md: current\nagents/pair.md: current\n", "")
    bad = tree("bad")
    (bad / "agents" / "unbound.md").unlink()
    assert st2(["emit", "agent-tiers", "agents"], sandbox, bad, bad / "delegation-config.knobs") == (
        0,
        "agents/stale-effort.md: model: big-model -> big-model, effort: low -> high\n"
        "agents/stale-model.md: model: big-model -> small\n",
        "",
    )


def test_emit_write_touches_only_the_generated_lines_and_the_gate_then_passes(sandbox, tmp_path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "new.md").write_bytes(b"---\r\nname: new\r\ntier: judgment\r\ndescription: x\r\n---\r\nkeep: me\r\n")
    (agents / "old.md").write_bytes(b"---\ntier: mechanical\nmodel: big-model\neffort: max\n---\nbody\n")
    knobs = tmp_path / "k.knobs"
    knobs.write_text("DELEGATION_KIT_TIER_MODEL[] = judgment=big-model,high\nDELEGATION_KIT_TIER_MODEL[] = mechanical=small\n")
    assert st2(["check", "agent-tier-explicit", "agents"], sandbox, tmp_path, knobs)[0] == 1
    assert st2(["emit", "agent-tiers", "--write", "agents"], sandbox, tmp_path, knobs) == (
        0, "agents/new.md: model: - -> big-model, effort: - -> high\nagents/old.md: model: big-model -> small\n", "")
    assert (agents / "new.md").read_bytes() == (
        b"---\r\nname: new\r\ntier: judgment\r\nmodel: big-model\r\neffort: high\r\ndescription: x\r\n---\r\nkeep: me\r\n")
    # the class binds no effort, so the effort line is left as written
    assert (agents / "old.md").read_bytes() == b"---\ntier: mechanical\nmodel: small\neffort: max\n---\nbody\n"
    assert st2(["check", "agent-tier-explicit", "agents"], sandbox, tmp_path, knobs)[:2] == (
        0, "check-agent-tier-explicit: clean (2 definition(s) scanned, 2 holding their class's bound model)\n")


def test_emit_refuses_an_unbound_class_and_writes_nothing(sandbox, tree) -> None:
    bad = tree("bad")
    before = {path.name: path.read_bytes() for path in (bad / "agents").iterdir()}
    assert st2(["emit", "agent-tiers", "--write", "agents"], sandbox, bad, bad / "delegation-config.knobs") == (
        2, "", "agent-tiers: agents/unbound.md: tier: routing names a class the binding leaves unbound; nothing written\n")
    assert {path.name: path.read_bytes() for path in (bad / "agents").iterdir()} == before


def test_emit_binding_off_and_shape_refusals(sandbox, tmp_path) -> None:
    assert st2(["emit", "agent-tiers"], sandbox, tmp_path) == (0, "agent-tiers: binding off\n", "")
    assert st2(["emit", "agent-tiers", "--force"], sandbox, tmp_path) == (
        2, "", "agent-tiers: unrecognized option: --force\nusage: st2 emit agent-tiers [--write] [--] [<agent-dir>]\n")
    assert st2(["check", "agent-tier-explicit", "a", "b"], sandbox, tmp_path) == (
        2, "", "check-agent-tier-explicit: unexpected argument: b\nusage: st2 check agent-tier-explicit [--] [<agent-dir>]\n")
