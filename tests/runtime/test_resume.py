"""The resume core (issue 24): the resumable-session record, its store beside the runtime scope,
and the one transition function over :class:`st2.runtime.resume.Start`. Unit tier: real temp
directories, a fake clock."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import driver_diagnostic
from st2.runtime import resumable_session as records
from st2.runtime import resume
from st2.runtime.resume import Start
from st2.runtime.scope import RuntimeScope

RID = "h.worker"


@pytest.fixture
def seat(tmp_path: Path) -> Path:
    directory = tmp_path / "catalog" / "agents" / "h" / "worker"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def store(tmp_path: Path) -> records.SessionStore:
    return records.SessionStore.of(tmp_path / "catalog", "h", tmp_path / "state")


def begin(store, seat, token: str, clock, policy: str = "last", harness: str = "claude") -> resume.Binding:
    return resume.begin(store, RID, RID, harness, token, policy, clock, seat)


def test_the_store_is_beside_the_runtime_scope_and_survives_its_removal(tmp_path, store, seat) -> None:
    scope = RuntimeScope(tmp_path / "catalog", "h", tmp_path / "state")
    assert store.directory == tmp_path / "state" / "sessions" / scope.directory.parent.name / "h"
    assert scope.directory == tmp_path / "state" / "scopes" / scope.directory.parent.name / "h"
    clock = FakeClock()
    binding = begin(store, seat, "t1", clock)
    binding.observed("S1")
    scope.ensure()
    shutil.rmtree(tmp_path / "state" / "scopes")  # a simulated reboot: the runtime scope is gone
    assert records.read(store, RID).session_id == "S1"
    assert begin(store, seat, "t2", clock).resume_id == "S1"


def test_the_wire_shape_is_pinned(store, seat) -> None:
    clock = FakeClock(wall_ms=1_788_000_000_000)
    begin(store, seat, "t1", clock).observed("S1")
    assert store.record(RID).read_text() == (
        '{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
        '"incarnation":"t1","start":"fresh","sessionId":"S1","resumedFrom":null,"lost":[],'
        '"writtenAtMs":1788000000000}\n')
    binding = begin(store, seat, "t2", clock)
    clock.advance(1)
    binding.refused()
    assert store.record(RID).read_text() == (
        '{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
        '"incarnation":"t2","start":"fallback","sessionId":null,"resumedFrom":"S1",'
        '"lost":[{"sessionId":"S1","incarnation":"t2","lostAtMs":1788000001000}],"writtenAtMs":1788000001000}\n')
    assert store.stop_marker(RID).exists() is False


def test_every_edge_is_named_and_nothing_else_is_an_edge() -> None:
    assert resume.transition(Start.RESUMING, "observed-resumed") is Start.RESUMED
    assert resume.transition(Start.RESUMING, "observed-other") is Start.FALLBACK
    assert resume.transition(Start.RESUMING, "refused") is Start.FALLBACK
    for start in (Start.FRESH, Start.RESUMED, Start.FALLBACK):
        assert resume.transition(start, "observed") is start
        with pytest.raises(ValueError, match="no edge"):
            resume.transition(start, "refused")  # a fresh session is never refused: no loop
    with pytest.raises(ValueError, match="no edge"):
        resume.transition(Start.RESUMING, "observed")


def record(**fields) -> records.SessionRecord:
    base = dict(runtime_id=RID, agent=RID, harness="claude", incarnation="t0", start="fresh", session_id="S")
    return records.SessionRecord(**(base | fields))


@pytest.mark.parametrize("previous, policy, stopped, expected", [
    (None, "last", False, (Start.FRESH, None)),
    (record(), "last", False, (Start.RESUMING, "S")),
    (record(), "never", False, (Start.FRESH, None)),
    (record(), "last", True, (Start.FRESH, None)),
    (record(harness="pi"), "last", False, (Start.FRESH, None)),
    (record(session_id=None), "last", False, (Start.FRESH, None)),
    # its own id lost before the relaunch (a move st2 could not carry): fresh, labelled a fallback
    (record(lost=(records.Lost("S", "t0", 1),)), "last", False, (Start.FALLBACK, None)),
    (record(lost=(records.Lost("S", "t0", 1),)), "never", False, (Start.FRESH, None)),
], ids=["no-record", "recorded", "never", "stopped-by-down", "other-harness", "no-id", "own-id-lost",
        "own-id-lost-never"])
def test_decide(previous, policy, stopped, expected) -> None:
    plan = resume.decide(previous, policy, stopped, "claude")
    assert (plan.start, plan.session_id) == expected


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown resume policy 'sometimes'"):
        resume.decide(None, "sometimes", False, "claude")


def test_observation_is_fenced_to_the_incarnation_the_record_names(store, seat) -> None:
    clock = FakeClock()
    begin(store, seat, "t1", clock).observed("S1")
    successor = begin(store, seat, "t2", clock)
    # A straggler of t1 (a hook finishing late) cannot rebind the seat to its session.
    assert resume.observe(store, RID, "t1", "S-straggler", clock) is False
    assert records.read(store, RID).session_id == "S1"
    assert successor.observed("S1") is True
    assert (records.read(store, RID).start, successor.start) == ("resumed", Start.RESUMED)
    assert resume.observe(store, RID, "t2", "S1", clock) is False  # already so: nothing written
    assert resume.observe(store, "h.other", "t2", "S1", clock) is False  # no record: nothing


def test_a_refused_resume_falls_back_once_and_the_dead_id_is_never_retried(store, seat) -> None:
    clock = FakeClock()
    begin(store, seat, "t1", clock).observed("S1")
    second = begin(store, seat, "t2", clock)
    assert (second.start, second.resume_id) == (Start.RESUMING, "S1")
    assert second.refused() is True
    assert (second.start, second.resume_id) == (Start.FALLBACK, None)
    with pytest.raises(resume.AlreadyFellBack):
        second.refused()
    diagnostic = driver_diagnostic.read_file(seat / "driver-diagnostic", clock.wall_ms())
    assert (diagnostic.status, diagnostic.driver, diagnostic.stage, diagnostic.reason, diagnostic.source) == (
        "failure", "claude", "resume", "resumeRefused", "resumeAttempt")
    # The fallback crashes before the harness reports a new id: the next launch starts fresh, it
    # does not retry S1.
    third = begin(store, seat, "t3", clock)
    assert (third.start, third.resume_id) == (Start.FRESH, None)
    assert records.read(store, RID).lost_ids() == {"S1"}
    assert not (seat / "driver-diagnostic").exists()  # a start that is not a fallback clears it
    third.observed("S3")
    fourth = begin(store, seat, "t4", clock)
    assert fourth.resume_id == "S3"
    assert [entry.session_id for entry in records.read(store, RID).lost] == ["S1"]  # kept for an operator


def test_a_harness_that_silently_starts_another_session_is_a_fallback(store, seat) -> None:
    clock = FakeClock()
    begin(store, seat, "t1", clock).observed("S1")
    second = begin(store, seat, "t2", clock)
    second.observed("S2")
    current = records.read(store, RID)
    assert (current.start, current.session_id, current.lost_ids()) == ("fallback", "S2", {"S1"})
    assert driver_diagnostic.read_file(seat / "driver-diagnostic", clock.wall_ms()).stage == "resume"


def test_st2_down_makes_the_next_launch_fresh_and_is_consumed(store, seat) -> None:
    clock = FakeClock()
    begin(store, seat, "t1", clock).observed("S1")
    records.mark_stopped(store, RID, clock.wall_ms())
    assert records.stopped_ids(store) == [RID]
    after_down = begin(store, seat, "t2", clock)
    assert (after_down.start, after_down.resume_id) == (Start.FRESH, None)
    assert records.stopped_ids(store) == []
    after_down.observed("S2")
    assert begin(store, seat, "t3", clock).resume_id == "S2"  # a crash after that resumes S2


def test_never_starts_fresh_every_time(store, seat) -> None:
    clock = FakeClock()
    begin(store, seat, "t1", clock, policy="never").observed("S1")
    assert begin(store, seat, "t2", clock, policy="never").start is Start.FRESH


@pytest.mark.parametrize("data", [
    b"not json", b"[]", b'{"schema":"st2.resumable-session.v2"}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.other"}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
    b'"incarnation":"t","start":"rebooted","sessionId":"S","resumedFrom":null,"lost":[],"writtenAtMs":1}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
    b'"incarnation":"t","start":"fresh","sessionId":7,"resumedFrom":null,"lost":[],"writtenAtMs":1}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
    b'"incarnation":"t","start":"fresh","sessionId":"S","sessionId":"T","resumedFrom":null,"lost":[],"writtenAtMs":1}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
    b'"incarnation":"t","start":"fresh","sessionId":"\\u001b]0;pwned\\u0007","resumedFrom":null,"lost":[],"writtenAtMs":1}',
    b'{"schema":"st2.resumable-session.v1","runtimeId":"h.worker","agent":"h.worker","harness":"claude",'
    b'"incarnation":"t","start":"fresh","sessionId":"S","resumedFrom":null,'
    b'"lost":[{"sessionId":"\\u202eevil","incarnation":"t0","lostAtMs":1}],"writtenAtMs":1}',
], ids=["not-json", "array", "foreign-schema", "other-runtime-id", "unknown-start", "wrong-type", "duplicate-key",
        "escape-in-id", "bidi-in-lost-id"])
def test_a_malformed_record_reads_as_absent_and_the_next_launch_starts_fresh(store, seat, data) -> None:
    store.ensure()
    store.record(RID).write_bytes(data)
    assert records.read(store, RID) is None
    binding = begin(store, seat, "t1", FakeClock())
    assert binding.start is Start.FRESH
    assert json.loads(store.record(RID).read_text())["incarnation"] == "t1"


def test_an_oversized_record_reads_as_absent(store) -> None:
    store.ensure()
    store.record(RID).write_bytes(b" " * (records.RUNTIME_LIMIT + 1))
    assert records.read(store, RID) is None


def test_decide_resumes_only_an_id_of_the_harness_shape() -> None:
    shaped = resume.decide(record(session_id="S"), "last", False, "claude", accepts=lambda value: value == "S")
    refused = resume.decide(record(session_id="--yolo"), "last", False, "claude", accepts=lambda value: value == "S")
    assert (shaped.start, shaped.session_id, refused.start, refused.session_id) == (
        Start.RESUMING, "S", Start.FRESH, None)


def test_begin_drops_an_id_of_another_shape_and_names_it(store, seat) -> None:
    store.ensure()
    store.record(RID).write_bytes(record(session_id="--yolo").to_json())
    binding = resume.begin(store, RID, RID, "claude", "t1", "last", FakeClock(), seat, lambda value: value == "S")
    assert (binding.start, binding.resume_id, binding.discarded) == (Start.FRESH, None, "--yolo")
    assert records.read(store, RID).session_id is None  # rewritten fresh; never kept as "lost" either
    assert records.read(store, RID).lost == ()


def test_an_observed_id_of_another_shape_is_not_recorded(store, seat) -> None:
    binding = resume.begin(store, RID, RID, "claude", "t1", "last", FakeClock(), seat, lambda value: value == "S")
    assert binding.observed("--yolo") is False and records.read(store, RID).session_id is None
    assert binding.observed("S") is True and records.read(store, RID).session_id == "S"


@pytest.mark.parametrize("agent, runtime_id, seat_agent, reads", [
    ("h.worker", "h.worker", "h.worker", True),
    ("worker", "h.worker", "h.worker", True),        # the bare identity, as the harness-state fence reads it
    ("h.other", "h.worker", "h.worker", False),
    ("h.other", "h.worker", None, False),
    ("h.worker", "h.worker", None, True),
    ("h.worker", "h.worker.ding", None, True),      # a task of the seat
    ("h.work", "h.worker", None, False),
], ids=["same", "bare", "other", "other-by-runtime-id", "same-by-runtime-id", "task", "prefix-not-a-seat"])
def test_a_record_naming_another_seat_reads_absent(agent, runtime_id, seat_agent, reads) -> None:
    data = records.SessionRecord(runtime_id=runtime_id, agent=agent, harness="claude", incarnation="t",
                                 start="fresh", session_id="S").to_json()
    assert (records.parse(data, runtime_id, seat_agent) is not None) is reads


def test_begin_starts_fresh_over_another_seats_record(store, seat) -> None:
    store.ensure()
    store.record(RID).write_bytes(record(agent="h.other").to_json())
    binding = begin(store, seat, "t1", FakeClock())
    assert (binding.start, records.read(store, RID, RID).agent) == (Start.FRESH, RID)
