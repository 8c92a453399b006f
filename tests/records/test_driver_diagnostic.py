"""Driver diagnostic reader: bounded vocabulary; absent, malformed, foreign, unknown and wrongly
paired records never read healthy; the roster object is the same field set in every state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import driver_diagnostic
from support import compact

DROP = object()


def record(now: int, **changes) -> dict:
    value = {"schema": "st2.driver-diagnostic.v1", "driver": "opencode", "stage": "seed", "reason": "unknownStatus",
             "source": "statusSnapshot", "producerVersion": "1.18.25", "support": "supported", "observedAt": now - 25,
             "recovery": "clearsOnStageRecovery"}
    value.update(changes)
    return {key: item for key, item in value.items() if item is not DROP}


def wire(value: dict | bytes | None, now: int) -> str:
    data = value if value is None or isinstance(value, bytes) else json.dumps(value).encode()
    return compact(driver_diagnostic.to_wire(driver_diagnostic.read(data, now)))


def indeterminate(reason: str) -> str:
    return ('{"status":"indeterminate","driver":null,"stage":null,"reason":"' + reason + '","source":null,'
            '"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,'
            '"recovery":"replaceWithValidRecordOrClearOnStageRecovery"}')


def test_a_missing_record_projects_exactly_absent(clock: FakeClock) -> None:
    assert wire(None, clock.wall_ms()) == (
        '{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,'
        '"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"}'
    )


def test_a_valid_record_projects_a_failure_with_its_evidence_age(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert wire(record(now, futureField={"ignored": True}), now) == (
        '{"status":"failure","driver":"opencode","stage":"seed","reason":"unknownStatus","source":"statusSnapshot",'
        f'"producerVersion":"1.18.25","support":"supported","observedAt":{now - 25},"evidenceAgeMs":25,'
        '"recovery":"clearsOnStageRecovery"}'
    )
    assert json.loads(wire(record(now, producerVersion=DROP), now))["producerVersion"] is None


@pytest.mark.parametrize("raw", [b"not json", b"{bad", b"[]", b"\xff", b'{"schema":"st2.driver-diagnostic.v1"}'])
def test_undecodable_bytes_are_indeterminate_malformed(clock: FakeClock, raw: bytes) -> None:
    assert wire(raw, clock.wall_ms()) == indeterminate("malformedRecord")


@pytest.mark.parametrize("change", [{"observedAt": -1}, {"observedAt": "1"}, {"support": None}, {"producerVersion": 3}])
def test_wrongly_typed_fields_are_indeterminate_malformed(clock: FakeClock, change: dict) -> None:
    assert wire(record(clock.wall_ms(), **change), clock.wall_ms()) == indeterminate("malformedRecord")


@pytest.mark.parametrize("change", [{"schema": "st2.driver-diagnostic.v9"}, {"recovery": "neverRecovers"}])
def test_a_foreign_schema_or_recovery_is_indeterminate(clock: FakeClock, change: dict) -> None:
    assert wire(record(clock.wall_ms(), **change), clock.wall_ms()) == indeterminate("unsupportedSchema")


@pytest.mark.parametrize(
    "change",
    [{"reason": "futureReason"}, {"driver": "futureDriver"}, {"support": "futureSupport"}, {"stage": "future"},
     {"source": "futureSource"}, {"reason": "notDurable"}, {"source": "eventStream"}],
)
def test_unknown_or_wrongly_paired_vocabulary_is_indeterminate(clock: FakeClock, change: dict) -> None:
    assert wire(record(clock.wall_ms(), **change), clock.wall_ms()) == indeterminate("unknownVocabulary")


def test_a_credential_rejection_counts_only_from_a_turn_result(clock: FakeClock) -> None:
    now = clock.wall_ms()
    credential = record(now, driver="claude", stage="providerAuth", reason="providerAuthRejected", source="turnResult")
    assert driver_diagnostic.read(json.dumps(credential).encode(), now).status == "failure"
    credential["source"] = "eventStream"
    assert driver_diagnostic.read(json.dumps(credential).encode(), now).reason == "unknownVocabulary"


def test_future_skew_beyond_sixty_seconds_is_indeterminate(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert driver_diagnostic.read(json.dumps(record(now, observedAt=now + 60_000)).encode(), now).status == "failure"
    assert wire(record(now, observedAt=now + 60_001), now) == indeterminate("futureSkew")


def test_every_vocabulary_word_pairs_with_a_known_stage_and_source() -> None:
    for reason, (stage, sources) in driver_diagnostic.REASONS.items():
        assert stage in driver_diagnostic.STAGES and sources
        assert all(source in driver_diagnostic.SOURCES for source in sources)
        assert "unknown" not in (reason, stage)
    assert {stage for stage, _ in driver_diagnostic.REASONS.values()} == set(driver_diagnostic.STAGES)


def test_no_state_of_the_projection_is_healthy(clock: FakeClock) -> None:
    statuses = {driver_diagnostic.read(data, clock.wall_ms()).status for data in (None, b"{", b"{}")}
    assert statuses == {"absent", "indeterminate"}
    assert all(driver_diagnostic.repair_text(driver_diagnostic.read(data, 0)) for data in (None, b"{"))


# --- writer ---------------------------------------------------------------------------------------


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


def projected(seat: Path, clock: FakeClock):
    return driver_diagnostic.read_file(seat / "driver-diagnostic", clock.wall_ms())


def test_the_earliest_failing_stage_is_published_and_recovery_clears_only_its_own(seat: Path, clock: FakeClock) -> None:
    publisher = driver_diagnostic.Publisher(seat, "codex", clock, "codex-cli 0.151.0", "supported")
    publisher.publish("readBack", "readBackUnavailable", "messageReadBack")
    publisher.publish("delivery", "deliveryUnavailable", "promptTransport")
    publisher.publish("providerAuth", "providerAuthRejected", "turnResult")
    assert projected(seat, clock).stage == "providerAuth"
    publisher.publish("sse", "sseDisconnected", "eventStream")
    assert projected(seat, clock).stage == "sse"
    publisher.clear("readBack")
    assert projected(seat, clock).stage == "sse"
    publisher.clear("sse")
    assert projected(seat, clock).stage == "providerAuth"
    for stage in ("providerAuth", "delivery"):
        publisher.clear(stage)
    assert projected(seat, clock).status == "absent"


def test_a_wrongly_paired_failure_is_never_published(seat: Path, clock: FakeClock) -> None:
    publisher = driver_diagnostic.Publisher(seat, "claude", clock)
    assert not publisher.publish("delivery", "providerAuthRejected", "turnResult")
    assert projected(seat, clock).status == "absent"


def test_a_successor_removes_an_unreadable_predecessor(seat: Path, clock: FakeClock) -> None:
    (seat / "driver-diagnostic").write_bytes(b"{bad")
    assert projected(seat, clock).reason == "malformedRecord"
    driver_diagnostic.Publisher(seat, "opencode", clock)
    assert projected(seat, clock).status == "absent"


def test_a_rejected_credential_carries_no_remedy_text(clock: FakeClock) -> None:
    """docs/records.md §Driver diagnostic: no credential knowledge or remedy text enters st2. The failure is named by its
    stage and reason; what to do about a provider credential is not st2's to say."""
    now = clock.wall_ms()
    credential = record(now, driver="codex", stage="providerAuth", reason="providerAuthRejected", source="turnResult")
    diagnostic = driver_diagnostic.read(json.dumps(credential).encode(), now)
    assert (diagnostic.status, diagnostic.stage) == ("failure", "providerAuth")
    assert driver_diagnostic.repair_text(diagnostic) is None
    assert "providerAuth" not in driver_diagnostic.REPAIR_TEXT_BY_STAGE
    delivery = record(now, driver="codex", stage="delivery", reason="deliveryRejected", source="promptTransport")
    assert driver_diagnostic.repair_text(driver_diagnostic.read(json.dumps(delivery).encode(), now))  # its twin


def test_only_a_published_failure_is_failed(clock: FakeClock) -> None:
    # Doctor's driver-diagnostic advisory decides through it; absent and indeterminate never fail.
    now = clock.wall_ms()
    assert driver_diagnostic.read(json.dumps(record(now)).encode(), now).failed is True
    assert driver_diagnostic.read(None, now).failed is False
    assert driver_diagnostic.read(b"{bad", now).failed is False
