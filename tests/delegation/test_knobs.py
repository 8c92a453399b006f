"""The delegation knobs: names and defaults, the indexed spelling, the table validator's
refusals, and the tier binding's matching rule."""

from __future__ import annotations

import pytest

from st2.delegation import knobs
from st2.delegation.checkout import scratch_dir


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


def test_an_indexed_knob_is_one_element_per_line() -> None:
    assert knobs.indexed({"K": "bash\n/path/reader.sh\n"}, "K") == ["bash", "/path/reader.sh"]
    with pytest.raises(knobs.KnobError, match="K: element 2 is empty"):
        knobs.indexed({"K": "bash\n\nx"}, "K")


@pytest.mark.parametrize(
    ("environment", "finding"),
    [
        ({"DELEGATION_KIT_REQUIRE_TIER": "yes"}, "DELEGATION_KIT_REQUIRE_TIER: 'yes' is neither on nor off"),
        ({"DELEGATION_KIT_READONLY_TYPES": "a b"}, "DELEGATION_KIT_READONLY_TYPES: 'a b' carries whitespace; an agent-type name is one token"),
        ({"DELEGATION_KIT_MUTATING_TYPES": "x\n\ny"}, "DELEGATION_KIT_MUTATING_TYPES: element 2 is empty (one element per line)"),
        ({"DELEGATION_KIT_LIVENESS_CMD": "a\n \nb"}, "DELEGATION_KIT_LIVENESS_CMD: element 2 is empty (one element per line)"),
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
def test_the_validator_refuses_each_malformed_value(environment, finding: str) -> None:
    assert knobs.validate(environment) == [finding]


def test_the_validator_reports_every_finding_at_once() -> None:
    assert len(knobs.validate({"DELEGATION_KIT_REQUIRE_TIER": "x", "DELEGATION_KIT_TIER_MODEL": "y"})) == 2


def test_sound_bindings_pass() -> None:
    environment = {"DELEGATION_KIT_TIER_MODEL": "judgment=opus,high\nmechanical=haiku\nrouting=opus"}
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
