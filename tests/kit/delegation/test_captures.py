"""The delegation hooks over real Claude Code payloads (captures/claude-code/, see
captures/PROVENANCE.md): a dispatched session's turn end refuses on red, a helper-shaped firing
allows, and the captured Agent dispatch meets the dispatch guard's rules."""

from __future__ import annotations

import pytest
import json
from pathlib import Path

from delegation_support import hermetic_env, knob_file
from st2.base.clock import FakeClock
from st2.kit.delegation import task_view
from st2.drivers.claude.hooks import dispatch_guard
from st2.drivers.claude.hooks import subagent_stop_liveness as liveness_hook

CAPTURES = Path(__file__).resolve().parents[3] / "captures" / "claude-code"
REAL_KEYS = (
    "agent_id,agent_transcript_path,agent_type,background_tasks,cwd,effort,hook_event_name,"
    "last_assistant_message,permission_mode,prompt_id,session_crons,session_id,stop_hook_active,transcript_path"
)


def subagent_stops_2_1_197() -> list[str]:
    return (CAPTURES / "2.1.197" / "hooks" / "SubagentStop.jsonl").read_text().splitlines()


def fire_over_a_live_record(tmp_path: Path, payload: str, children) -> liveness_hook.Firing:
    producer = children.sleeper()
    (tmp_path / ".tmp").mkdir(exist_ok=True)
    (tmp_path / ".tmp" / "suite.run").write_text(f"pid={producer.pid} run=suite\n")
    return liveness_hook.fire(payload, hermetic_env(), str(tmp_path), FakeClock(wall_ms=1_788_000_000_000))


@pytest.mark.process
def test_a_captured_dispatched_session_turn_end_refuses_on_red(tmp_path: Path, children) -> None:
    session_end = subagent_stops_2_1_197()[0]
    assert json.loads(session_end)["agent_type"] == "general-purpose"
    firing = fire_over_a_live_record(tmp_path, session_end, children)
    assert firing.code == 2
    assert firing.line == (
        "2026-08-29T10:40:00Z  event=SubagentStop  session=c271f069-e392-4d13-9ca8-173a04bae560  live=yes"
        f"  verdict=red  spawn=-  records=1  runs=suite  decision=refuse  keys={REAL_KEYS}\n"
    )


@pytest.mark.process
def test_a_captured_helper_firing_allows_beside_red(tmp_path: Path, children) -> None:
    helper = subagent_stops_2_1_197()[1]
    assert task_view.helper_marks(json.loads(helper)) == (True, True, True)
    firing = fire_over_a_live_record(tmp_path, helper, children)
    assert (firing.code, firing.stderr) == (0, "")
    assert firing.line == (
        "2026-08-29T10:40:00Z  event=SubagentStop  session=c271f069-e392-4d13-9ca8-173a04bae560  live=yes"
        f"  verdict=red  spawn=-  records=1  runs=suite  decision=allow  keys={REAL_KEYS}\n"
    )


def test_the_2_1_328_firings_and_the_documented_payload_classify_by_their_marks() -> None:
    for name in ("07-SubagentStop.json", "26-SubagentStop.json"):
        payload = json.loads((CAPTURES / "2.1.328" / "hooks" / name).read_text())
        assert task_view.is_helper_firing(payload), name
    documented = json.loads((CAPTURES / "docs-2.1.239" / "hook-inputs" / "SubagentStop.input.json").read_text())
    assert documented["agent_type"] == "Explore"
    assert not task_view.is_helper_firing(documented)
    assert not task_view.holds_own_running_shell_task(documented)


def captured_agent_dispatch() -> str:
    lines = (CAPTURES / "2.1.197" / "hooks" / "PreToolUse.jsonl").read_text().splitlines()
    (dispatch,) = [line for line in lines if json.loads(line)["tool_name"] == "Agent"]
    return dispatch


def test_the_captured_agent_dispatch_passes_an_unconfigured_guard(tmp_path: Path) -> None:
    decision = dispatch_guard.decide(captured_agent_dispatch(), hermetic_env(), str(tmp_path))
    assert (decision.code, decision.stdout, decision.stderr) == (0, "", "")


def test_the_captured_agent_dispatch_meets_d2_and_d5_when_configured(tmp_path: Path) -> None:
    dispatch = captured_agent_dispatch()
    readonly = dispatch_guard.decide(dispatch, hermetic_env(**knob_file(tmp_path / "k.knobs", DELEGATION_KIT_READONLY_TYPES="general-purpose")), str(tmp_path))
    assert readonly.code == 2 and readonly.stderr.startswith("dispatch-guard: blocked by D2 (the read-only claim): 'general-purpose'")
    tiered = dispatch_guard.decide(dispatch, hermetic_env(DELEGATION_KIT_REQUIRE_TIER="on"), str(tmp_path))
    assert tiered.code == 2 and tiered.stderr.startswith("dispatch-guard: blocked by D5 (the chosen tier): this dispatch names no model and 'general-purpose'")


def test_the_guard_relies_on_the_agent_matcher_to_prove_the_tool(tmp_path: Path) -> None:
    documented = (CAPTURES / "docs-2.1.239" / "hook-inputs" / "PreToolUse.input.json").read_text()
    decision = dispatch_guard.decide(documented, hermetic_env(**knob_file(tmp_path / "k.knobs", DELEGATION_KIT_MUTATING_TYPES="mut")), str(tmp_path))
    # The matcher proves the tool (registration: PreToolUse matcher Agent). A Bash payload routed
    # here anyway carries no subagent_type, so D4 reads it as the default type.
    assert decision.code == 2 and "D4 (default isolation): the harness's default type" in decision.stderr
