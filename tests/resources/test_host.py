"""The host's acceptance over a real socket (st2.resources.host): a scripted provider runtime
answers honestly or lies, and only well-formed results of open observations reach the state
record; bursts coalesce; a runtime that dies or is replaced settles honestly."""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from pathlib import Path

import pytest

from resources_support import ScriptedRuntime
from st2.resources import demand, host, protocol, registry, state
from st2.runtime import layout

RUNTIME = "h.w.resource-x"


class Harness:
    def __init__(self, tmp_path: Path, timeout: float = 5.0, interval: float = 3600.0) -> None:
        self.seat = tmp_path / "c" / "agents" / "h" / "w"
        self.seat.mkdir(parents=True)
        self.scope = tmp_path / "scope"
        (self.scope / "staging").mkdir(parents=True)
        self.lines: list[str] = []
        self.host = host.ResourceHost(self.scope, lambda: int(time.time() * 1000), self.lines.append)
        self.item = host.Watched("h.w", "doc", "x:doc", "x", str(self.seat), RUNTIME, {"k": 1}, interval,
                                 timeout, True)
        self.host.configure([self.item])

    def run_until(self, predicate, seconds: float = 10.0):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.host.step(0.02)
            value = predicate()
            if value:
                return value
        raise AssertionError(f"timed out; host said: {self.lines}")

    def record(self):
        return state.read_file(self.seat, "h.w", "doc")

    def refused(self) -> list[str]:
        return [line for line in self.lines if "refused" in line]


@pytest.fixture
def harness(tmp_path: Path):
    """On tmpfs when there is one: the burst's 2,000 durable publications would pay a disk fsync each."""
    base = Path("/dev/shm") / f"st2-test-{uuid.uuid4().hex}" if Path("/dev/shm").is_dir() else tmp_path
    made = Harness(base)
    yield made
    made.host.stop()
    if base != tmp_path:
        shutil.rmtree(base, ignore_errors=True)


def honest(observe, runtime):
    return [runtime.result(observe, "Published", {"n": len(runtime.observes)})]


def test_an_honest_result_is_published_with_the_hosts_digest(harness) -> None:
    runtime = ScriptedRuntime(harness.scope, RUNTIME, honest)
    try:
        record = harness.run_until(harness.record)
    finally:
        runtime.close()
    assert (record.revision, record.generation, record.facts) == (1, 1, {"n": 1})
    assert record.host_digest == state.digest_facts({"n": 1})
    assert runtime.observes[0].target == {"k": 1} and runtime.observes[0].registration == "reg-1"


LIES = {
    "own-digest": lambda o, r: [r.result(o, "Published", {"n": 1})[:-2] + b',"hostDigest":"sha256:00"}\n'],
    "own-timestamp": lambda o, r: [r.result(o, "Published", {"n": 1})[:-2] + b',"observedAtMs":1}\n'],
    "non-json": lambda o, r: [b"this is not json\n"],
    "oversized": lambda o, r: [b'{"type":"Published","facts":"' + b"x" * (protocol.LINE_LIMIT + 64) + b'"}\n'],
    "untyped-facts": lambda o, r: [r.result(o, "Published", {"n": {"deep": 1}})],
}


@pytest.mark.parametrize("lie", sorted(LIES))
def test_a_lying_answer_is_refused_logged_and_settles_the_observation_as_failed(harness, lie: str) -> None:
    runtime = ScriptedRuntime(harness.scope, RUNTIME, LIES[lie])
    try:
        record = harness.run_until(lambda: (current := harness.record()) and current.last_failure and current)
    finally:
        runtime.close()
    assert record.last_failure.kind == "refused-output"
    assert (record.revision, record.host_digest, record.facts) == (0, None, {})  # nothing was published
    assert harness.refused() or lie == "untyped-facts"


def test_a_wrong_watermark_and_a_second_result_are_refused_and_change_nothing(tmp_path: Path) -> None:
    harness = Harness(tmp_path, timeout=0.5)

    def twice_then_wrong(observe, runtime):
        if len(runtime.observes) == 1:
            return [runtime.result(observe, "Published", {"n": 1}), runtime.result(observe, "Published", {"n": 2})]
        wrong = observe._replace(watermark=observe.watermark + 1000)
        return [runtime.result(wrong, "Published", {"n": 3})]

    runtime = ScriptedRuntime(harness.scope, RUNTIME, twice_then_wrong)
    try:
        harness.run_until(lambda: len(harness.refused()) >= 1)
        assert (harness.record().revision, harness.record().facts) == (1, {"n": 1})
        demand.admit(harness.scope, "h.w", "doc", 1)
        record = harness.run_until(lambda: (current := harness.record()).last_failure and current)
    finally:
        runtime.close()
        harness.host.stop()
    assert len(harness.refused()) == 2, harness.lines
    assert all("no such open observation" in line for line in harness.refused())
    assert record.facts == {"n": 1} and record.last_failure.kind == "timeout"  # never n=2 or n=3


def test_a_burst_of_a_thousand_demands_coalesces_and_the_bound_refuses_the_257th(harness) -> None:
    gate = threading.Semaphore(0)

    def slow(observe, runtime):
        gate.acquire(timeout=10)
        return [runtime.result(observe, "Published", {"n": len(runtime.observes)})]

    runtime = ScriptedRuntime(harness.scope, RUNTIME, slow)
    queue = layout.resource_demand(harness.scope, "h.w", "doc")
    closed_by: dict[int, int] = {}
    try:
        harness.run_until(lambda: runtime.observes)           # the periodic observation is open
        for round_number in range(4):                          # 4 x 250 = 1,000 arrivals
            seqs = [demand.admit(harness.scope, "h.w", "doc", 1) for _ in range(250)]
            if round_number == 0:
                seqs += [demand.admit(harness.scope, "h.w", "doc", 1) for _ in range(6)]  # 256 queued
                with pytest.raises(demand.AdmissionRefused, match="admission bound is 256"):
                    demand.admit(harness.scope, "h.w", "doc", 1)  # the 257th queued demand
            for _ in range(5):
                harness.host.step(0.01)                       # arrivals while one is open: no new dispatch
            opened = 2 * round_number + 1
            assert len(runtime.observes) == opened
            gate.release()                                    # the open one closes; one trailing follows
            harness.run_until(lambda: len(runtime.observes) == opened + 1)
            gate.release()
            harness.run_until(lambda: not demand.pending(queue))
            trailing = runtime.observes[opened].watermark
            for seq in seqs:
                receipt = demand.read_receipt(queue, "h.w", "doc", seq)
                assert (receipt.state, receipt.result) == ("closed", "Published")
                closed_by[seq] = receipt.watermark
            assert set(closed_by[seq] for seq in seqs) == {trailing}   # never the one open at arrival
            harness.run_until(lambda: harness.host._open == {})
            assert len(runtime.observes) == opened + 1
            harness.host._due[("h.w", "doc")] = 0.0                    # the next round starts with one open
            harness.run_until(lambda: len(runtime.observes) == opened + 2)
    finally:
        gate.release()
        runtime.close()
    assert len(closed_by) == 1006


def test_a_runtime_that_dies_mid_observation_settles_it_failed_never_unchanged(harness) -> None:
    runtime = ScriptedRuntime(harness.scope, RUNTIME, lambda observe, runtime: [None])
    try:
        seq = demand.admit(harness.scope, "h.w", "doc", 1)
        queue = layout.resource_demand(harness.scope, "h.w", "doc")
        harness.run_until(lambda: not demand.pending(queue))
    finally:
        runtime.close()
    receipt = demand.read_receipt(queue, "h.w", "doc", seq)
    assert (receipt.state, receipt.result) == ("closed", "Failed")
    assert harness.record().last_failure.kind == "provider-exited"


def test_a_replaced_runtime_gets_a_new_generation_and_an_older_generation_is_fenced(harness) -> None:
    first = ScriptedRuntime(harness.scope, RUNTIME, honest, registration="reg-a")
    harness.run_until(harness.record)
    first.close()
    harness.run_until(lambda: RUNTIME not in harness.host._connections)
    second = ScriptedRuntime(harness.scope, RUNTIME, honest, registration="reg-b")
    try:
        demand.admit(harness.scope, "h.w", "doc", 1)
        record = harness.run_until(lambda: (current := harness.record()).generation == 2 and current)
    finally:
        second.close()
    assert registry.read(harness.scope, RUNTIME) == ("reg-b", 2)
    # A record already written by a newer generation is never overwritten by an older one.
    state.update(harness.seat, "h.w", "doc", lambda current: current._replace(generation=9), 1)
    third = ScriptedRuntime(harness.scope, RUNTIME, honest, registration="reg-c")
    try:
        harness.host._close(harness.host._connections.pop(RUNTIME))   # as a replaced connection is dropped
        demand.admit(harness.scope, "h.w", "doc", 1)
        harness.run_until(lambda: any("fenced" in line for line in harness.lines))
    finally:
        third.close()
    assert harness.record().generation == 9 and harness.record().facts == record.facts


def test_demand_reaches_only_a_runtime_that_declares_it(harness) -> None:
    runtime = ScriptedRuntime(harness.scope, RUNTIME, honest, capabilities=())
    queue = layout.resource_demand(harness.scope, "h.w", "doc")
    try:
        harness.run_until(harness.record)                     # periodic observation still runs
        seq = demand.admit(harness.scope, "h.w", "doc", 1)
        harness.run_until(lambda: not demand.pending(queue))
    finally:
        runtime.close()
    receipt = demand.read_receipt(queue, "h.w", "doc", seq)
    assert (receipt.state, receipt.result, receipt.reason) == (
        "closed", "Failed", "the provider runtime does not take demand")
    assert len(runtime.observes) == 1                          # the demand never reached it
