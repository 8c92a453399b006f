"""The opencode producers over the verbatim 1.18.33 capture (captures/opencode/1.18.33/lab/): the
assistant total over the providers window, and the wrong numbers it must never publish (a summary
message's tokens, the cumulative session total)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from st2.drivers.opencode import SUPPORTED_VERSIONS
from st2.drivers.opencode.api import events_of
from st2.drivers.opencode.context import ContextProducer, credential_rejected, session_total
from st2.drivers.opencode.observed import Observed
from st2.drivers.opencode.replay import providers_answer

REPO = Path(__file__).resolve().parents[3]
CAPTURE = REPO / "captures" / "opencode" / "1.18.33" / "lab"
EVENTS = [event for event in events_of((CAPTURE / "event.sse").read_text())]


def producer() -> ContextProducer:
    made = ContextProducer()
    made.on_providers(providers_answer(CAPTURE / "config_providers.fake.json"))
    return made


def test_the_capture_is_the_pinned_build() -> None:
    versions = {event["properties"]["info"].get("version") for event in EVENTS
                if event.get("type") in ("session.created", "session.updated")}
    assert versions == {"1.18.33"} and SUPPORTED_VERSIONS == ("1.18.25", "1.18.33")


def test_the_assistant_total_over_the_providers_window_unrounded() -> None:
    made = producer()
    readings = [reading for reading, _ in (made.on_event(event, 1) for event in EVENTS) if reading is not None]
    # Four finished non-summary assistant messages (hi, tool call, tool result, after compact).
    assert [(r.used_tokens, r.window_tokens, r.used_percent, r.model) for r in readings] == [
        (9942, 200000, 4.971, "fake/fake-model")] * 4
    # The wrong number: the cumulative session tokens (34800 + 168 + 4800) are the session total only.
    assert made.session_total == 39768
    assert readings[-1].session_total_tokens == 39768  # folded in, riding the numerator
    assert all(reading.used_tokens != 39768 for reading in readings)


def test_neither_summary_shape_is_ever_the_reading() -> None:
    made = producer()
    summary = next(event for event in EVENTS if event["type"] == "message.updated"
                   and event["properties"]["info"].get("summary") is True)
    user = next(event for event in EVENTS if event["type"] == "message.updated"
                and isinstance(event["properties"]["info"].get("summary"), dict))
    poisoned = json.loads(json.dumps(summary))
    poisoned["properties"]["info"]["tokens"]["total"] = 1462  # what the summarizer's call costs
    for event in (summary, poisoned, user):
        assert made.on_event(event) == (None, None)


def test_a_first_update_without_the_total_key_is_never_zero() -> None:
    first = next(event for event in EVENTS if event["type"] == "message.updated"
                 and event["properties"]["info"].get("role") == "assistant")
    assert "total" not in first["properties"]["info"]["tokens"]
    assert producer().on_event(first) == (None, None)


def test_an_unjoined_model_withholds_the_window_and_the_percent() -> None:
    made = ContextProducer()
    finished = next(event for event in EVENTS if event["type"] == "message.updated"
                    and "total" in (event["properties"]["info"].get("tokens") or {}))
    reading, _ = made.on_event(finished)
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent, made.window_due) == (9942, None, None, True)


def test_session_total_sums_the_cumulative_tokens() -> None:
    assert session_total({"input": 1, "output": 2, "reasoning": 3, "cache": {"read": 4, "write": 5}}) == 15
    assert session_total({"input": 1}) is None


def test_provider_auth_comes_from_the_typed_error_only() -> None:
    assert credential_rejected({"name": "ProviderAuthError", "data": {"providerID": "fake", "message": "x"}})
    assert credential_rejected({"name": "APIError", "data": {"statusCode": 401, "message": "no"}})
    assert not credential_rejected({"name": "APIError", "data": {"statusCode": 429, "message": "unauthorized"}})
    assert not credential_rejected({"name": "UnknownError", "data": {"message": "401 Unauthorized"}})


def test_the_permission_blocks_on_a_human_until_replied() -> None:
    observed = Observed()
    trail = []
    for event in EVENTS:
        if observed.on_event(event):
            projection = observed.project()
            if not trail or trail[-1] != projection:
                trail.append(projection)
    words = [(p.state, p.blocked_on, p.ask) for p in trail]
    assert ("active", "human", "permission") in words
    after = words[words.index(("active", "human", "permission")) + 1]
    assert after == ("active", "none", "none") and words[-1] == ("idle", "none", "none")


def test_seeding_replaces_the_facts_and_names_a_bad_snapshot() -> None:
    observed = Observed()
    assert observed.project() is None
    assert observed.seed({"ses_a": {"type": "busy"}}, [{"id": "per_1", "sessionID": "ses_a"}], []) is None
    assert observed.project().ask == "permission"
    assert observed.seed({}, [], []) is None and observed.project().state == "idle"
    assert observed.seed([], [], []) == "malformedStatus"
    assert observed.seed({"s": {"type": "odd"}}, [], []) == "unknownStatus"
    assert observed.seed({}, [{"sessionID": "s"}], []) == "missingAskId"
    assert observed.seed({}, [], None) == "malformedQuestions"


@pytest.mark.process
def test_replay_through_the_cli_publishes_one_reading_and_one_compaction(tmp_path) -> None:
    seat = tmp_path / "agents" / "host" / "oc"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "oc" {\n    opencode\n}\n')
    result = subprocess.run([sys.executable, "-m", "st2", "driver", "opencode", "replay", str(CAPTURE / "event.sse"),
                             "--identity", "host.oc", "--catalog", str(tmp_path)],
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0 and result.stderr == ""
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    context = [row for row in rows if row["record"] == "harness-context"]
    assert [(row["event"], row["usedTokens"], row["windowTokens"], row["usedPercent"], row["model"],
             row["sessionTotalTokens"], row["compactions"], row["lastCompactionTrigger"]) for row in context] == [
        (48, 9942, 200000, 4.971, "fake/fake-model", 0, 0, None),
        (140, 9942, 200000, 4.971, "fake/fake-model", 0, 1, "unknown")]
    assert context[1]["observedAtMs"] == context[0]["observedAtMs"]  # the edge never re-stamps
    record = json.loads((seat / "harness-context").read_text())
    assert record["compactions"] == 1 and record["usedTokens"] == 9942
    states = [(row["state"], row["blockedOn"], row["ask"]) for row in rows if row["record"] == "harness-state"]
    assert ("active", "human", "permission") in states and states[-1] == ("idle", "none", "none")
