"""The delegation knobs: names and defaults, the indexed spelling, the table validator's
refusals, the tier binding's matching rule, and the one knob file both sides read (the
delegation hooks and the usage verdict resolve through st2.kit.knobs, with one precedence and one
set of refusals)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from delegation_support import hermetic_env, knob_file, run_hook
from st2.kit.delegation import knobs
from st2.drivers.claude.hooks import dispatch_guard
from st2.drivers.claude.hooks import subagent_stop_liveness as liveness_hook
from st2.kit.delegation.checkout import scratch_dir


def test_defaults() -> None:
    assert knobs.stop_log({}) == ".workflow/subagent-stop-liveness.log"
    assert knobs.stop_log({"GATE_SDK_WORKFLOW_DIR": "wf"}) == "wf/subagent-stop-liveness.log"
    assert knobs.stop_log({"DELEGATION_KIT_STOP_LOG": "x.log", "GATE_SDK_WORKFLOW_DIR": "wf"}) == "x.log"
    assert knobs.indexed({}, knobs.LIVENESS_CMD) == []
    assert knobs.readonly_types({}) == [] and knobs.mutating_types({}) == []
    assert knobs.require_tier({}) is False
    assert knobs.agent_dir({}) == ".claude/agents"
    assert knobs.tier_classes({}) == ["judgment", "routing", "mechanical"]
    assert knobs.tier_model({}) == []
    assert scratch_dir({}, "/") == ".tmp" and scratch_dir({"GATE_SDK_TMP_DIR": ""}, "/") == ".tmp"
    assert knobs.validate({}) == []


@pytest.mark.parametrize("name", ["DELEGATION_KIT_LIVENESS_CMD", "DELEGATION_KIT_READONLY_TYPES", "DELEGATION_KIT_MUTATING_TYPES"])
def test_the_liveness_command_and_the_rosters_take_no_environment_spelling(name: str, tmp_path: Path) -> None:
    # Indexed knobs live in the knob file only: a variable of the name is ignored, malformed or not.
    environment = knob_file(tmp_path / "k.knobs", **{name: "bash\n/path/reader"})
    assert knobs.indexed(environment | {name: "other\n"}, name) == ["bash", "/path/reader"]
    assert knobs.indexed({name: "bash\n\n two words"}, name) == []
    assert knobs.validate({name: "bash\n\n two words"}) == []


@pytest.mark.process
def test_a_roster_in_the_environment_does_not_fire_d2_through_the_real_hook(tmp_path: Path) -> None:
    ignored = run_hook("dispatch-guard", tmp_path, agent_payload("reviewer"), DELEGATION_KIT_READONLY_TYPES="reviewer")
    assert (ignored.returncode, ignored.stdout, ignored.stderr) == (0, "", "")


def tier_knobs_in_a_file(environment: dict[str, str], path: Path) -> dict[str, str]:
    """Indexed knobs have no environment spelling: move them into a knob file at ``path``."""
    tier = {name: value for name, value in environment.items() if knobs.TABLE[name].indexed}
    rest = {name: value for name, value in environment.items() if name not in tier}
    return rest | knob_file(path, **tier) if tier else rest


@pytest.mark.parametrize(
    ("environment", "finding"),
    [
        ({"DELEGATION_KIT_REQUIRE_TIER": "yes"}, "environment DELEGATION_KIT_REQUIRE_TIER='yes' must be on or off"),
        ({"DELEGATION_KIT_READONLY_TYPES": "a b"}, "DELEGATION_KIT_READONLY_TYPES: 'a b' carries whitespace; an agent-type name is one token"),
        ({"DELEGATION_KIT_TIER_CLASSES": "Judgment"}, "DELEGATION_KIT_TIER_CLASSES: 'Judgment' is not a class name ([a-z0-9-])"),
        ({"DELEGATION_KIT_TIER_CLASSES": "a\na"}, "DELEGATION_KIT_TIER_CLASSES: 'a' is given twice"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment"}, "DELEGATION_KIT_TIER_MODEL: 'judgment' is not <class>=<model>[,<effort>]"),
        ({"DELEGATION_KIT_TIER_MODEL": "senior=x"}, "DELEGATION_KIT_TIER_MODEL: class 'senior' is not in DELEGATION_KIT_TIER_CLASSES"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a\njudgment=b"}, "DELEGATION_KIT_TIER_MODEL: class 'judgment' is bound twice"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment="}, "DELEGATION_KIT_TIER_MODEL: class 'judgment' binds an empty model"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a b"}, "DELEGATION_KIT_TIER_MODEL: model 'a b' carries whitespace"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=inherit"}, "DELEGATION_KIT_TIER_MODEL: model 'inherit' binds no tier"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=45"}, "DELEGATION_KIT_TIER_MODEL: model '45' is all digits, a version token that crosses families"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=-"}, "DELEGATION_KIT_TIER_MODEL: a lone - is not a model"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a,"}, "DELEGATION_KIT_TIER_MODEL: effort '' of class 'judgment' is empty, carries whitespace or a second comma"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a,hi,lo"}, "DELEGATION_KIT_TIER_MODEL: effort 'hi,lo' of class 'judgment' is empty, carries whitespace or a second comma"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a,#x"}, "DELEGATION_KIT_TIER_MODEL: effort '#x' is not a letter followed by letters, digits, '.', '_' or '-'"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=a,-"}, "DELEGATION_KIT_TIER_MODEL: effort '-' is not a letter followed by letters, digits, '.', '_' or '-'"),
        ({"DELEGATION_KIT_TIER_MODEL": "judgment=claude\nmechanical=claude-haiku"}, "DELEGATION_KIT_TIER_MODEL: model 'claude' equals the leading token of 'claude-haiku' and would match nothing"),
    ],
)
def test_the_validator_refuses_each_malformed_value(environment, finding: str, tmp_path: Path) -> None:
    path = tmp_path / "k.knobs"
    moved = tier_knobs_in_a_file(environment, path)
    if moved == environment:
        expected = finding
    elif "DELEGATION_KIT_TIER" in finding:
        expected = f"{path}: {finding}"                 # a whole-knob check names the file
    else:
        expected = f"{path}:1: {finding}"               # an element check names its line
    assert knobs.validate(moved) == [expected]


def test_the_validator_reports_every_finding_at_once(tmp_path: Path) -> None:
    environment = tier_knobs_in_a_file({"DELEGATION_KIT_REQUIRE_TIER": "x", "DELEGATION_KIT_TIER_MODEL": "y"}, tmp_path / "k.knobs")
    assert len(knobs.validate(environment)) == 2


def test_the_tier_knobs_take_no_environment_spelling(tmp_path: Path) -> None:
    # A per-session override would red the freshness gate against an unchanged tree: ignored.
    environment = knob_file(tmp_path / "k.knobs", DELEGATION_KIT_TIER_MODEL="judgment=big-model")
    assert knobs.tier_model(environment | {"DELEGATION_KIT_TIER_MODEL": "judgment=other"}) == [knobs.TierRow("judgment", "big-model", None)]
    assert knobs.tier_classes({"DELEGATION_KIT_TIER_CLASSES": "senior"}) == ["judgment", "routing", "mechanical"]
    assert knobs.validate({"DELEGATION_KIT_TIER_MODEL": "not a binding"}) == []


def test_sound_bindings_pass(tmp_path: Path) -> None:
    environment = knob_file(tmp_path / "k.knobs", DELEGATION_KIT_TIER_MODEL="judgment=opus,high\nmechanical=haiku\nrouting=opus")
    assert knobs.validate(environment) == []
    assert knobs.tier_model(environment) == [
        knobs.TierRow("judgment", "opus", "high"), knobs.TierRow("mechanical", "haiku", None), knobs.TierRow("routing", "opus", None)
    ]


@pytest.mark.parametrize(
    ("value", "model_id", "matches"),
    [
        ("claude-opus-4-5", "claude-opus-4-5", True),
        ("opus", "claude-opus-4-5", True),
        ("claude", "claude-opus-4-5", False),
        ("sonnet", "claude-opus-4-5", False),
        ("opus", "opus", True),
        ("op", "claude-opus", False),
    ],
)
def test_a_value_matches_the_id_or_a_token_after_the_first(value: str, model_id: str, matches: bool) -> None:
    assert knobs.model_matches(value, model_id) is matches


def agent_payload(subagent_type: str, isolation: str | None = None) -> str:
    tool_input = {"description": "review", "prompt": "read and report", "subagent_type": subagent_type}
    if isolation:
        tool_input["isolation"] = isolation
    return json.dumps({"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": tool_input})


def write_knobs(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.process
def test_a_roster_in_the_knob_file_fires_d2_through_the_real_hook(tmp_path: Path) -> None:
    knob_file = write_knobs(tmp_path / "delegation-config.knobs", "# the consumer's roster", "DELEGATION_KIT_READONLY_TYPES[] = reviewer")
    blocked = run_hook("dispatch-guard", tmp_path, agent_payload("reviewer"), DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert blocked.returncode == 2 and blocked.stdout == ""
    assert blocked.stderr.startswith("dispatch-guard: blocked by D2 (the read-only claim)"), blocked.stderr
    isolated = run_hook("dispatch-guard", tmp_path, agent_payload("reviewer", "worktree"), DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert (isolated.returncode, isolated.stdout, isolated.stderr) == (0, "", "")


@pytest.mark.process
def test_the_default_knob_file_location_serves_the_hook_and_its_absence_leaves_d2_inert(tmp_path: Path) -> None:
    # The kit's location: <repository top level>/<gates dir>/delegation-config.knobs, where
    # `st2 kit init` installs it; the hook fires from a subdirectory of the repository.
    import subprocess

    repository, inside = tmp_path / "project", tmp_path / "project" / "src" / "deep"
    inside.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    quiet = run_hook("dispatch-guard", inside, agent_payload("reviewer"))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    write_knobs(repository / "checks" / "delegation-config.knobs", "DELEGATION_KIT_READONLY_TYPES[] = reviewer")
    fired = run_hook("dispatch-guard", inside, agent_payload("reviewer"))
    assert fired.returncode == 2 and fired.stderr.startswith("dispatch-guard: blocked by D2 ("), fired.stderr
    moved = run_hook("dispatch-guard", inside, agent_payload("reviewer"), GATE_SDK_GATES_DIR="gates")
    assert (moved.returncode, moved.stderr) == (0, "")   # the gates dir moved: the file is not there


def test_the_environment_overrides_a_file_scalar(tmp_path: Path) -> None:
    knob_file = write_knobs(tmp_path / "k.knobs", "DELEGATION_KIT_AGENT_DIR = from-file", "DELEGATION_KIT_REQUIRE_TIER = on")
    from_file = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert (knobs.agent_dir(from_file), knobs.require_tier(from_file)) == ("from-file", True)
    overridden = from_file | {"DELEGATION_KIT_AGENT_DIR": "from-env", "DELEGATION_KIT_REQUIRE_TIER": "off"}
    assert (knobs.agent_dir(overridden), knobs.require_tier(overridden)) == ("from-env", False)
    # An empty value reads as unset for these, so the file's value stands.
    assert knobs.agent_dir(from_file | {"DELEGATION_KIT_AGENT_DIR": ""}) == "from-file"


def test_d5_switched_on_by_the_file_and_off_by_the_environment(tmp_path: Path) -> None:
    knob_file = write_knobs(tmp_path / "k.knobs", "DELEGATION_KIT_REQUIRE_TIER = on")
    environment = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file))
    fired = dispatch_guard.decide(agent_payload("worker", "worktree"), environment, str(tmp_path))
    assert (fired.code, fired.rule) == (2, "D5")
    quiet = dispatch_guard.decide(agent_payload("worker", "worktree"), environment | {"DELEGATION_KIT_REQUIRE_TIER": "off"}, str(tmp_path))
    assert (quiet.code, quiet.rule) == (0, "fallthrough")


def test_an_indexed_knob_in_the_file_replaces_its_default_and_no_environment_spelling_replaces_it(tmp_path: Path) -> None:
    knob_file = write_knobs(
        tmp_path / "k.knobs",
        "DELEGATION_KIT_TIER_CLASSES[] = senior",
        "DELEGATION_KIT_TIER_CLASSES[] = junior",
        "DELEGATION_KIT_READONLY_TYPES[] = reviewer",
        "DELEGATION_KIT_READONLY_TYPES[] = auditor",
    )
    environment = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert knobs.tier_classes(environment) == ["senior", "junior"]
    assert knobs.readonly_types(environment) == ["reviewer", "auditor"]
    assert knobs.readonly_types(environment | {"DELEGATION_KIT_READONLY_TYPES": "scout\n"}) == ["reviewer", "auditor"]


def test_a_tier_binding_in_the_file_is_validated_against_the_files_roster(tmp_path: Path) -> None:
    knob_file = write_knobs(tmp_path / "k.knobs", "DELEGATION_KIT_TIER_MODEL[] = judgment=big-model,high", "DELEGATION_KIT_TIER_MODEL[] = mechanical=small")
    environment = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert knobs.tier_model(environment) == [knobs.TierRow("judgment", "big-model", "high"), knobs.TierRow("mechanical", "small", None)]
    write_knobs(knob_file, "DELEGATION_KIT_TIER_MODEL[] = senior=big-model", "DELEGATION_KIT_READONLY_TYPES[] = two words")
    assert knobs.validate(environment) == [
        f"{knob_file}:2: DELEGATION_KIT_READONLY_TYPES: 'two words' carries whitespace; an agent-type name is one token",
        f"{knob_file}: DELEGATION_KIT_TIER_MODEL: class 'senior' is not in DELEGATION_KIT_TIER_CLASSES",
    ]


def test_a_malformed_knob_file_is_refused_by_both_sides_with_the_same_findings(tmp_path: Path) -> None:
    from st2.kit.usage.verdict import verdict

    knob_file = write_knobs(
        tmp_path / "k.knobs",
        "DELEGATION_KIT_READONLY_TYPES[] = reviewer",
        "DELEGATION_KIT_NOT_A_KNOB = 1",
        "DELEGATION_KIT_TIER_MODEL[] = judgment",
    )
    findings = [
        f"{knob_file}:2: DELEGATION_KIT_NOT_A_KNOB is not a knob st2 reads",
        f"{knob_file}: DELEGATION_KIT_TIER_MODEL: 'judgment' is not <class>=<model>[,<effort>]",
    ]
    environment = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file), HOME=str(tmp_path))

    guard = dispatch_guard.decide(agent_payload("reviewer"), environment, str(tmp_path))
    assert guard.code == 0 and guard.stderr == ""  # D2 unenforced, loudly: never a wedged dispatch
    assert json.loads(guard.stdout)["hookSpecificOutput"]["additionalContext"] == (
        "dispatch-guard: D2 (the read-only claim), D4 (default isolation), D5 (the chosen tier) and D6 "
        "(the bound tier) went unenforced on this dispatch: the delegation knobs are malformed: " + "; ".join(findings) + "."
    )
    firing = liveness_hook.fire(None, environment, str(tmp_path))
    assert json.loads(firing.stdout) == {
        "systemMessage": "subagent-stop-liveness: this turn end went unguarded — the delegation knobs are malformed: " + "; ".join(findings)
    }
    stderr = io.StringIO()
    line, status = verdict([], environ=environment, now=1_700_000_000, stderr=stderr)
    assert status == 2 and line.startswith("usage-verdict: malformed knob configuration (2 finding(s) on stderr)")
    assert stderr.getvalue() == "".join(f"usage-verdict: {finding}\n" for finding in findings)

    # The same file without the two faults is read by both sides: D2 fires, the verdict reads on.
    write_knobs(knob_file, "DELEGATION_KIT_READONLY_TYPES[] = reviewer", "DELEGATION_KIT_PAUSE_PCT = 70")
    assert dispatch_guard.decide(agent_payload("reviewer"), environment, str(tmp_path)).rule == "D2"
    stderr = io.StringIO()
    line, status = verdict([str(tmp_path / "absent-usage.txt")], environ=environment, now=1_700_000_000, stderr=stderr)
    assert "malformed knob configuration" not in line and stderr.getvalue() == ""


def test_a_kit_knob_file_naming_knobs_st2_does_not_read_carries_over(tmp_path: Path) -> None:
    knob_file = write_knobs(
        tmp_path / "k.knobs",
        "DELEGATION_KIT_FAN_WIDTH = 3",
        "DELEGATION_KIT_GATE_FILES[] = gates/check-*.sh",
        "DELEGATION_KIT_FOREIGN_ADAPTERS[] = other=vendor-cli",
        "DELEGATION_KIT_FOREIGN_TIMEOUT = 900",
        "DELEGATION_KIT_SESSIONS_DIR = sessions",
        "DELEGATION_KIT_MUTATING_TYPES[] = builder",
    )
    environment = hermetic_env(DELEGATION_KIT_KNOB_FILE=str(knob_file))
    assert knobs.validate(environment) == []
    assert knobs.mutating_types(environment) == ["builder"]
    assert knobs.resolve(environment).scalar("DELEGATION_KIT_FAN_WIDTH") == "3"
    write_knobs(knob_file, "DELEGATION_KIT_FOREIGN_TIMEOUT = 0")
    assert knobs.validate(environment) == [f"{knob_file}:1: DELEGATION_KIT_FOREIGN_TIMEOUT='0' must be a positive integer"]


def test_a_derived_default_renders_from_its_input() -> None:
    resolved = knobs.resolve(hermetic_env(DELEGATION_KIT_PAUSE_PCT="70", GATE_SDK_WORKFLOW_DIR="wf"))
    assert resolved.scalar("DELEGATION_KIT_FOREIGN_PAUSE_PCT") == "70"
    assert resolved.scalar("DELEGATION_KIT_FOREIGN_PAUSE_PCT_LONG") == "95"
    assert resolved.scalar("DELEGATION_KIT_STOP_LOG") == "wf/subagent-stop-liveness.log"
