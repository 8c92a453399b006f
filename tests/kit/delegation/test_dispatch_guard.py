"""`st2 hook dispatch-guard`: the decision table (dispatch-guard-cases.tsv) with a firing and a
non-firing case per rule, the wire shapes, and the fail-open-but-loud degradation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from delegation_support import hermetic_env, knob_file, run_hook
from st2.kit.delegation import agent_definitions
from st2.drivers.claude.hooks import dispatch_guard

TABLE = Path(__file__).with_name("dispatch-guard-cases.tsv")


def rows() -> list[list[str]]:
    cases = []
    for line in TABLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            columns = line.split("\t")
            assert len(columns) == 7, f"malformed case row: {line!r}"
            cases.append(columns)
    return cases


def payload_for(subagent_type: str, isolation: str, nested: str, model: str) -> str:
    tool_input = {"description": "audit sweep", "prompt": "read and report"}
    for key, value in (("subagent_type", subagent_type), ("isolation", isolation), ("model", model)):
        if value != "-":
            tool_input[key] = value
    payload = {
        "session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Agent",
        "tool_input": tool_input, "tool_use_id": "toolu_1",
    }
    if nested == "yes":
        payload["agent_id"] = "a1"
        payload["agent_type"] = "stage"
    return json.dumps(payload)


def scenario(type_column: str, agent_dir: Path) -> tuple[str, dict[str, str]]:
    env = {"DELEGATION_KIT_AGENT_DIR": str(agent_dir)}
    indexed = {"DELEGATION_KIT_READONLY_TYPES": "ro-type"}      # indexed knobs live in the knob file only
    prefix, _, bare = type_column.rpartition(":")
    if prefix == "noroster":
        indexed = {}
    elif prefix == "armed":
        indexed["DELEGATION_KIT_MUTATING_TYPES"] = "mut-type"
        env["DELEGATION_KIT_REQUIRE_TIER"] = "on"
    elif prefix == "bound":
        indexed["DELEGATION_KIT_TIER_MODEL"] = "judgment=big-model\nmechanical=small"
    env.update(knob_file(agent_dir.parent / "scenario.knobs", **indexed))
    return bare, env


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "agents"
    (directory / "nested").mkdir(parents=True)
    (directory / "nested" / "file-stem.md").write_text("---\nname: tiered-type\nmodel: small\n---\nbody\n")
    (directory / "mut-type.md").write_text("---\ndescription: no model stated\n---\n")
    return directory


def table_coverage(cases: list[list[str]]) -> list[str]:
    """What the table lacks, judged on its outcome and rule columns only: each rule needs a row
    where it decides (block, or advise for D3) and a fallthrough row naming it as the quiet
    twin; the degraded row must exist."""
    pairs = {(row[0], row[1]) for row in cases}
    missing = []
    for rule in ("D1", "D2", "D3", "D4", "D5", "D6"):
        if ("advise" if rule == "D3" else "block", rule) not in pairs:
            missing.append(f"{rule} fires")
        if ("fallthrough", rule) not in pairs:
            missing.append(f"{rule} quiet")
    if not any(row[:3] == ["advise", "degraded", "UNPARSEABLE"] for row in cases):
        missing.append("degraded")
    return missing


def test_the_table_covers_every_rule_both_ways() -> None:
    assert table_coverage(rows()) == []


def test_the_coverage_check_reads_the_columns_not_the_labels() -> None:
    cases = rows()
    # Relabelling a row changes nothing; dropping every row whose columns fire D5 is caught even
    # when a description still says "D5 fires".
    relabelled = [[*row[:6], "D5 fires: " + row[6]] for row in cases if row[:2] != ["block", "D5"]]
    assert table_coverage(relabelled) == ["D5 fires"]
    assert table_coverage([row for row in cases if row[:2] != ["fallthrough", "D2"]]) == ["D2 quiet"]
    assert table_coverage([row for row in cases if row[1] != "degraded"]) == ["degraded"]


@pytest.mark.parametrize("row", rows(), ids=[row[6] for row in rows()])
def test_the_decision_table_routes_every_case(row: list[str], agent_dir: Path, tmp_path: Path) -> None:
    expected, rule, type_column, isolation, nested, model, description = row
    if type_column == "UNPARSEABLE":
        payload, env = "{not json", knob_file(tmp_path / "k.knobs", DELEGATION_KIT_READONLY_TYPES="ro-type")
    else:
        subagent_type, env = scenario(type_column, agent_dir)
        payload = payload_for(subagent_type, isolation, nested, model)
    decision = dispatch_guard.decide(payload, hermetic_env(**env), str(tmp_path))
    if expected == "block":
        assert decision.rule == rule, description
        assert decision.code == 2 and decision.stdout == "", description
        assert decision.stderr.startswith(f"dispatch-guard: blocked by {rule} ("), decision.stderr
        assert "Two lawful shapes" in decision.stderr
    elif expected == "advise":
        assert decision.rule == ("degraded" if rule == "degraded" else "advise"), description
        assert decision.code == 0 and decision.stderr == "", description
        output = json.loads(decision.stdout)
        assert list(output) == ["hookSpecificOutput"]
        assert list(output["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
        assert output["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
        marker = "D3 (nested dispatch)" if rule == "D3" else "WITHOUT enforcing the fork ban (D1)"
        assert marker in output["hookSpecificOutput"]["additionalContext"], description
    else:
        assert decision.rule == "fallthrough", description
        assert (decision.code, decision.stdout, decision.stderr) == (0, "", ""), description


def test_the_degraded_advisory_is_the_exact_envelope(tmp_path: Path) -> None:
    decision = dispatch_guard.decide("", hermetic_env(), str(tmp_path))
    assert decision.stdout == (
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"dispatch-guard: allowed '
        "this dispatch WITHOUT enforcing the fork ban (D1), the read-only claim (D2), default isolation "
        "(D4), the chosen tier (D5) or the bound tier (D6): the hook payload did not parse, or carried no "
        "tool_input object. Check the dispatch by hand: no fork; a read-only or undeclared type takes "
        "isolation: worktree; the dispatch names its model unless its type's definition states one; a "
        'named model is one of the bound tiers."}}\n'
    )


def test_a_tool_input_that_is_not_an_object_degrades(tmp_path: Path) -> None:
    decision = dispatch_guard.decide('{"tool_input":"fork"}', hermetic_env(), str(tmp_path))
    assert (decision.code, decision.rule) == (0, "degraded")


def test_malformed_knobs_cost_the_roster_rules_loudly_and_never_the_dispatch(tmp_path: Path) -> None:
    env = hermetic_env(**knob_file(tmp_path / "k.knobs", DELEGATION_KIT_READONLY_TYPES="ro-type", DELEGATION_KIT_TIER_MODEL="judgment"))
    decision = dispatch_guard.decide(payload_for("ro-type", "-", "no", "-"), env, str(tmp_path))
    assert decision.code == 0 and decision.stderr == ""
    assert json.loads(decision.stdout)["hookSpecificOutput"]["additionalContext"] == (
        "dispatch-guard: D2 (the read-only claim), D4 (default isolation), D5 (the chosen tier) and D6 "
        "(the bound tier) went unenforced on this dispatch: the delegation knobs are malformed: "
        f"{tmp_path / 'k.knobs'}: DELEGATION_KIT_TIER_MODEL: 'judgment' is not <class>=<model>[,<effort>]."
    )


def test_a_knob_fault_leaves_the_fork_ban_and_the_nested_advisory_standing(tmp_path: Path) -> None:
    env = hermetic_env(DELEGATION_KIT_REQUIRE_TIER="yes")
    fork = dispatch_guard.decide(payload_for("fork", "-", "no", "-"), env, str(tmp_path))
    assert fork.code == 2 and fork.stderr.startswith("dispatch-guard: blocked by D1 (")
    assert "dispatch-guard: also: D2 (the read-only claim), D4" in fork.stderr
    nested = dispatch_guard.decide(payload_for("x", "-", "yes", "-"), env, str(tmp_path))
    context = json.loads(nested.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "went unenforced" in context and "D3 (nested dispatch)" in context


def test_an_unreadable_definition_directory_costs_d5_alone(tmp_path: Path, monkeypatch) -> None:
    def unreadable(directory, subagent_type):
        raise agent_definitions.UnreadableAgentDirectory(f"{directory}: cannot be read")

    monkeypatch.setattr(agent_definitions, "type_is_tiered", unreadable)
    env = hermetic_env(DELEGATION_KIT_REQUIRE_TIER="on", DELEGATION_KIT_AGENT_DIR="/defs")
    decision = dispatch_guard.decide(payload_for("worker", "worktree", "no", "-"), env, str(tmp_path))
    assert decision.code == 0
    assert json.loads(decision.stdout)["hookSpecificOutput"]["additionalContext"] == (
        "dispatch-guard: D5 (the chosen tier) went unenforced on this dispatch: /defs: cannot be read."
    )
    fork = dispatch_guard.decide(payload_for("ro", "-", "no", "-"), env | knob_file(tmp_path / "ro.knobs", DELEGATION_KIT_READONLY_TYPES="ro"), str(tmp_path))
    assert fork.code == 2 and "blocked by D2" in fork.stderr


def test_the_d6_block_names_the_bound_values(tmp_path: Path) -> None:
    env = hermetic_env(**knob_file(tmp_path / "k.knobs", DELEGATION_KIT_TIER_MODEL="judgment=big-model\nmechanical=small,low"))
    decision = dispatch_guard.decide(payload_for("x", "-", "no", "opus"), env, str(tmp_path))
    assert decision.stderr == (
        "dispatch-guard: blocked by D6 (the bound tier): this dispatch names model 'opus', which matches "
        "none of the bound tiers (big-model, small; DELEGATION_KIT_TIER_MODEL). Two lawful shapes: name "
        "one of the bound values; or, where the class you need is pinned to an exact model id, dispatch a "
        "type whose definition declares that class.\n"
    )


def test_a_definition_is_found_by_name_before_stem_and_must_state_model(tmp_path: Path) -> None:
    assert agent_definitions.defined_type("---\nname: sweep\nmodel: x\n---\n", "file") == "sweep"
    assert agent_definitions.defined_type("---\nmodel: x\n---\n", "file") == "file"
    assert agent_definitions.defined_type("no front matter", "file") == "file"
    assert not agent_definitions.states_model("---\nname: sweep\n---\n")
    assert not agent_definitions.states_model("---\nname: sweep\nmodel:\n---\n")
    assert not agent_definitions.states_model("---\nname: sweep\nmodel: x\n")  # unterminated
    (tmp_path / "a.md").write_text("---\nname: 'sweep'\nmodel: \"small\"\n---\n")
    assert agent_definitions.type_is_tiered(str(tmp_path), "sweep")
    assert not agent_definitions.type_is_tiered(str(tmp_path), "a")
    assert not agent_definitions.type_is_tiered(str(tmp_path / "absent"), "sweep")
    assert not agent_definitions.type_is_tiered(str(tmp_path), "")


@pytest.mark.process
@pytest.mark.parametrize(
    ("payload", "env", "code", "stdout_start", "stderr_start"),
    [
        (payload_for("fork", "-", "no", "-"), {}, 2, "", "dispatch-guard: blocked by D1 (the fork ban)"),
        (payload_for("x", "-", "yes", "-"), {}, 0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"dispatch-guard: D3', ""),
        (payload_for("x", "-", "no", "-"), {}, 0, "", ""),
        ("{not json", {}, 0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"dispatch-guard: allowed', ""),
    ],
    ids=["block", "advise", "fallthrough", "degraded"],
)
def test_the_real_hook_speaks_exit_codes_and_hook_json(tmp_path: Path, payload, env, code, stdout_start, stderr_start) -> None:
    result = run_hook("dispatch-guard", tmp_path, payload, **env)
    assert result.returncode == code, result.stderr
    assert result.stdout.startswith(stdout_start) and (stdout_start or result.stdout == "")
    assert result.stderr.startswith(stderr_start) and (stderr_start or result.stderr == "")
