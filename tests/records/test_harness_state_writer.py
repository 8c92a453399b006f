"""The harness-state writer discipline (docs/records.md §Harness state, writer
half), on a FakeClock through the real writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import harness_state
from st2.records.harness_state import Writer, claim

REFRESH_S = harness_state.HARNESS_STATE_REFRESH_MS / 1000


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


def on_disk(seat: Path) -> dict:
    return json.loads((seat / "harness-state").read_bytes())


def session(seat: Path, clock: FakeClock, token: str = "session-1") -> Writer:
    seq = claim(seat, "host.worker", "claude", token, clock)
    clock.advance(1)  # the session's first observation comes after its claim
    return Writer(seat, "host.worker", "claude", clock, pty_session="host.worker", incarnation=token, claimed_seq=seq)


def test_the_record_has_the_original_field_order(seat: Path, clock: FakeClock) -> None:
    w = Writer(seat, "host.worker", "claude", clock, pty_session="host.worker", incarnation="t")
    w.observe("active", "human", "empty", "permission", reason="PermissionRequest")
    now = clock.wall_ms()
    assert (seat / "harness-state").read_text() == (
        '{"schema":"st2.harness-state.v1","agent":"host.worker","harness":"claude","state":"active",'
        '"blockedOn":"human","inputBuffer":"empty","ask":"permission","reason":"PermissionRequest",'
        f'"ptySession":"host.worker","incarnation":"t","seq":1,"sinceMs":{now},"writtenAtMs":{now},"transitions":0}}\n'
    )


def test_a_transition_writes_immediately(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    clock.advance(1)
    assert w.observe("active")
    clock.advance(1)
    assert w.observe("idle")
    record = on_disk(seat)
    assert (record["state"], record["sinceMs"], record["transitions"]) == ("idle", clock.wall_ms(), 2)


def test_restating_an_unchanged_state_writes_only_when_the_refresh_is_due(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    w.observe("active")
    first = on_disk(seat)
    clock.advance(REFRESH_S - 0.001)
    assert not w.observe("active")
    assert on_disk(seat) == first
    clock.advance(0.001)
    assert w.observe("active")
    record = on_disk(seat)
    assert (record["sinceMs"], record["transitions"], record["writtenAtMs"]) == (
        first["sinceMs"], first["transitions"], clock.wall_ms())


def test_ten_thousand_identical_restatements_write_zero_times(seat: Path, clock: FakeClock, monkeypatch) -> None:
    w = session(seat, clock)
    w.observe("active", input_buffer="empty")
    before = (seat / "harness-state").stat()
    publications = []
    monkeypatch.setattr(harness_state, "_publish", lambda *args: publications.append(args))
    for _ in range(10_000):
        clock.advance(0.025)  # 250 s in all: inside the refresh interval
        assert not w.observe("active", input_buffer="empty")
    assert publications == []
    after = (seat / "harness-state").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_unknown_cannot_be_written(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    for bad in ({"state": "unknown"}, {"state": "idle", "ask": "unknown"}, {"state": "idle", "blocked_on": "robot"},
                {"state": "idle", "ask": "permission"}):
        with pytest.raises(ValueError):
            w.observe(**bad)
    assert w.observe("idle")


def test_a_live_state_needs_a_pty_session_but_ended_does_not(seat: Path, clock: FakeClock) -> None:
    w = Writer(seat, "host.worker", "claude", clock)
    with pytest.raises(ValueError):
        w.observe("active")
    assert w.ended("exit 0")


def test_the_claim_supersedes_and_mints_the_next_sequence(seat: Path, clock: FakeClock) -> None:
    first = session(seat, clock, "session-1")
    first.observe("active")
    clock.advance(1)
    second = session(seat, clock, "session-2")
    record = on_disk(seat)
    assert (record["state"], record["reason"], record["seq"], record["incarnation"]) == (
        "ended", "superseded", 2, "session-2")
    assert "exit" not in record
    assert harness_state.read_file(seat / "harness-state", clock.wall_ms()).reason == "claimed"
    clock.advance(1)
    assert second.observe("idle")
    assert harness_state.read_file(seat / "harness-state", clock.wall_ms()).state == "idle"


def test_a_predecessor_session_never_writes_or_re_stamps_its_successor(seat: Path, clock: FakeClock) -> None:
    first = session(seat, clock, "session-1")
    first.observe("active")
    clock.advance(1)
    second = session(seat, clock, "session-2")
    second.observe("idle")
    successor = on_disk(seat)
    clock.advance(REFRESH_S)
    assert not first.observe("active")
    assert not first.heartbeat()
    assert not first.ended("exit 0")
    assert on_disk(seat) == successor
    assert second.heartbeat()  # the twin: the owning session does re-stamp


def test_a_token_only_writer_never_claims_over_another_session(seat: Path, clock: FakeClock) -> None:
    session(seat, clock, "session-1").observe("active")
    stranger = Writer(seat, "host.worker", "claude", clock, pty_session="host.worker", incarnation="stranger")
    assert not stranger.observe("idle")
    sibling = Writer(seat, "host.worker", "claude", clock, pty_session="host.worker", incarnation="session-1")
    clock.advance(1)
    assert sibling.observe("idle")  # a sibling process of the owning session adopts its sequence
    assert on_disk(seat)["seq"] == 1


def test_unparseable_or_foreign_bytes_are_superseded_only_by_the_claim(seat: Path, clock: FakeClock) -> None:
    for raw in (b"{torn", b'{"schema":"st2.harness-state.v2","agent":"a","harness":"h","state":"idle",'
                          b'"blockedOn":"none","inputBuffer":"empty","sinceMs":1,"writtenAtMs":1,"transitions":1}'):
        (seat / "harness-state").write_bytes(raw)
        assert not Writer(seat, "host.worker", "claude", clock, pty_session="p").observe("idle")
        assert (seat / "harness-state").read_bytes() == raw
    assert claim(seat, "host.worker", "claude", "fresh", clock) >= 1
    assert on_disk(seat)["incarnation"] == "fresh"


def test_a_heartbeat_re_stamps_when_due_and_a_blind_writer_stops(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    w.observe("active")
    clock.advance(60)
    assert not w.heartbeat()  # not yet due
    clock.advance(REFRESH_S)
    assert w.heartbeat()
    w.lose_sight()
    clock.advance(REFRESH_S)
    assert not w.heartbeat()
    clock.advance(harness_state.HARNESS_STATE_STALE_MS / 1000)
    assert harness_state.read_file(seat / "harness-state", clock.wall_ms()).reason == "stale"
    assert w.observe("active")  # sight regained: a new transition, not continuity
    assert on_disk(seat)["sinceMs"] == clock.wall_ms()


def test_a_terminal_record_is_never_re_stamped(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    w.ended("exit 0")
    clock.advance(REFRESH_S)
    assert not w.heartbeat()


def test_a_late_hook_never_revives_a_terminal_record(seat: Path, clock: FakeClock) -> None:
    wrapper = session(seat, clock)
    hook = Writer(seat, "host.worker", "claude", clock, pty_session="host.worker", incarnation="session-1")
    wrapper.observe("active")
    clock.advance(1)
    assert wrapper.ended("signal 9")
    terminal = on_disk(seat)
    clock.advance(1)
    assert not hook.observe("idle")  # e.g. a Stop hook that fired after the harness was reaped
    assert on_disk(seat) == terminal
    clock.advance(1)
    assert wrapper.ended("exit 0")  # the terminal record itself may still be corrected
    assert on_disk(seat)["exit"] == "exit 0"


def test_the_claims_ended_placeholder_does_not_fence_its_own_session(seat: Path, clock: FakeClock) -> None:
    writer = session(seat, clock)  # on disk: ended/superseded under this session's token
    assert on_disk(seat)["state"] == "ended"
    assert writer.observe("idle")
    assert on_disk(seat)["state"] == "idle"


@pytest.mark.process
def test_the_terminal_record_carries_the_real_exit_of_a_reaped_provider(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    w.observe("active")
    provider = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    returncode = provider.wait(timeout=30)
    assert w.ended(harness_state.exit_description(returncode))
    observed = harness_state.read_file(seat / "harness-state", clock.wall_ms(), lambda session: "dead")
    assert (observed.state, observed.exit) == ("ended", "signal 9")
    assert harness_state.exit_description(0) == "exit 0" and harness_state.exit_description(3) == "exit 3"


def test_every_landed_write_is_byte_distinct(seat: Path, clock: FakeClock) -> None:
    w = session(seat, clock)
    seen = {(seat / "harness-state").read_bytes()}
    for state in ["active", "idle"] * 10:  # same millisecond throughout
        assert w.observe(state)
        data = (seat / "harness-state").read_bytes()
        assert data not in seen
        seen.add(data)
