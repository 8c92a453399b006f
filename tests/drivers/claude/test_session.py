"""The Claude wrapper (`st2 driver claude-session`): the claim, presence, the exported session,
and the terminal `ended` record carrying the real exit — run as a real process around a
stand-in `claude` that writes marker files (tests poll for them; no bare sleeps)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import poll_for
from support_claude import make_seat, record

from st2.drivers import lifecycle
from st2.drivers.claude.seat import Seat
from st2.drivers.claude.session import ClaudeSession, Phase, transition
from st2.records import harness_context

POLL_TIMEOUT = 30.0


def stand_in(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n" f"env | grep '^ST2_CLAUDE_' | sort > '{tmp_path}/env'\n"
                      f"command -v st2 > '{tmp_path}/st2-on-path' || true\n" + body)
    script.chmod(0o755)
    return script


def start_wrapper(catalog: Path, script: Path, *arguments: str) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST2_CLAUDE_", "ST_AGENT"))}
    return subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "claude-session", "--identity",
         "host.worker", "--runtime-id", "host.worker", "--", str(script), *arguments],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen) -> int:
    try:
        return process.wait(timeout=POLL_TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def state(seat: Seat):
    value = record(seat, "harness-state")
    return (value["state"], value.get("exit")) if value else None


@pytest.mark.process
def test_claude_exiting_writes_ended_with_its_exit_after_claiming_the_session(catalog, clock, tmp_path) -> None:
    seat = make_seat(catalog)
    harness_context.Writer(seat.directory, seat.agent, "claude", "previous", clock).publish(
        harness_context.Reading(used_tokens=190000, window_tokens=200000, used_percent=95))
    script = stand_in(tmp_path, f"ls '{seat.directory}' > '{tmp_path}/seat-at-start'\nexit 3\n")
    wrapper = start_wrapper(catalog, script)
    assert finish(wrapper) == 3
    assert state(seat) == ("ended", "exit 3")
    # The claim removed the previous incarnation's fill before Claude started.
    assert "harness-context" not in (tmp_path / "seat-at-start").read_text().split()
    # Presence was refreshed while Claude lived (a missing status starts as available).
    lines = (seat.directory / "status").read_text().splitlines()
    assert lines[0] == "available" and lines[1].startswith("v1 ")
    # Hooks write as the wrapper's session: the exported token and sequence are the record's.
    final = record(seat, "harness-state")
    assert (tmp_path / "env").read_text() == (
        f"ST2_CLAUDE_RUNTIME_ID=host.worker\nST2_CLAUDE_SESSION={final['incarnation']}\n"
        f"ST2_CLAUDE_SESSION_SEQ={final['seq']}\n")
    assert (tmp_path / "st2-on-path").read_text().strip() == str(Path(sys.executable).parent / "st2")


@pytest.mark.process
def test_sigkill_of_the_provider_mid_turn_reads_ended_not_active(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = stand_in(tmp_path, (
        f"printf '{{}}' | st2 driver claude-observe --identity host.worker --event UserPromptSubmit --catalog '{catalog}'\n"
        f"echo $$ > '{tmp_path}/pid'\nexec sleep 60\n"))
    wrapper = start_wrapper(catalog, script)
    try:
        pid = int(poll_for(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip(), "the pid"))
        assert state(seat) == ("active", None)  # the hook wrote under the wrapper's session
        os.kill(pid, signal.SIGKILL)
        assert finish(wrapper) == 128 + signal.SIGKILL
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
    assert state(seat) == ("ended", "signal 9")


@pytest.mark.process
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_to_the_group_is_survived_and_ends_with_claudes_real_exit(catalog, tmp_path, number) -> None:
    # SIGHUP is what the pane's group gets when tmux kill-server closes the terminal.
    seat = make_seat(catalog)
    script = stand_in(tmp_path, f"echo up > '{tmp_path}/up'\nexec sleep 60\n")
    wrapper = start_wrapper(catalog, script)
    poll_for(lambda: (tmp_path / "up").exists(), "the stand-in")
    os.killpg(wrapper.pid, number)
    assert finish(wrapper) == 128 + number
    assert state(seat) == ("ended", f"signal {int(number)}")


@pytest.mark.process
def test_a_provider_ignoring_sigterm_gets_the_escalation_cover_then_sigkill(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = stand_in(tmp_path, f"trap '' TERM HUP\necho up > '{tmp_path}/up'\nwhile :; do sleep 0.2; done\n")
    wrapper = start_wrapper(catalog, script)
    poll_for(lambda: (tmp_path / "up").exists(), "the stand-in")
    os.killpg(wrapper.pid, signal.SIGTERM)
    assert finish(wrapper) == 128 + signal.SIGKILL
    assert state(seat) == ("ended", "signal 9")


def living(pid: int) -> bool:
    """``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def has_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` holds a descriptor on ``path`` now."""
    try:
        links = [os.readlink(entry) for entry in Path(f"/proc/{pid}/fd").iterdir()]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return str(path) in links


@pytest.mark.process
def test_the_escalation_cover_lands_while_a_real_stubborn_provider_still_lives(catalog, tmp_path) -> None:
    # A real provider that ignores SIGTERM. The test holds the harness-state record's lock, so once
    # the grace expires the wrapper's cover write waits on it (seen as the wrapper holding the
    # lock file open): while it waits the provider must still run — the SIGKILL comes only after
    # the cover is on disk. Released, the cover lands, then the kill, and the record reads
    # ended / signal 9.
    from st2.fs.lock import lock_path_for, record_lock

    seat = make_seat(catalog)
    script = stand_in(tmp_path, f"trap '' TERM HUP\necho $$ > '{tmp_path}/pid'\nwhile :; do sleep 0.2; done\n")
    wrapper = start_wrapper(catalog, script)
    lock_file = Path(lock_path_for(seat.directory / "harness-state"))
    try:
        provider = int(poll_for(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip(),
                                "the provider"))
        with record_lock(seat.directory / "harness-state"):
            os.killpg(wrapper.pid, signal.SIGTERM)
            poll_for(lambda: has_open(wrapper.pid, lock_file), "the wrapper's cover write to wait on the record's lock")
            assert living(provider), "the provider was killed before its cover was written"
            assert state(seat) != ("ended", "signal 9")
        assert finish(wrapper) == 128 + signal.SIGKILL
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
            wrapper.wait()
    assert state(seat) == ("ended", "signal 9")
    assert not living(provider)


@pytest.mark.process
def test_an_unknown_seat_is_refused_before_anything_runs(catalog, tmp_path) -> None:
    script = stand_in(tmp_path, f"touch '{tmp_path}/ran'\n")
    wrapper = start_wrapper(catalog, script)
    assert finish(wrapper) == 2
    assert b"no seat 'host.worker'" in wrapper.stderr.read()
    assert not (tmp_path / "ran").exists()


class StubbornChild:
    """A child that ignores SIGTERM; its kill() checks what the record says at that moment."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat
        self.killed_while = None
        self.returncode = None

    def poll(self):
        return self.returncode

    def terminate(self) -> None:
        pass

    def kill(self) -> None:
        self.killed_while = state(self.seat)
        self.returncode = -signal.SIGKILL

    def wait(self):
        return self.returncode


def test_the_escalation_cover_lands_before_the_kill(catalog, clock, monkeypatch) -> None:
    seat = make_seat(catalog)
    run = ClaudeSession(seat, seat.agent, ["claude"], clock, environment={})
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: StubbornChild(seat))
    monkeypatch.setattr(os, "getpgrp", lambda: -1)  # never signal the test's own group
    run.start()
    run.requests.append(signal.SIGTERM)
    assert run.run() == 128 + signal.SIGKILL
    assert run.child.killed_while == ("ended", "signal 9")
    assert run.phase is Phase.ENDED


def test_a_reap_in_the_escalation_window_rewrites_the_cover_with_the_real_exit(catalog, clock, monkeypatch) -> None:
    seat = make_seat(catalog)

    class ExitsAsKilled(StubbornChild):
        def kill(self) -> None:  # Claude exited on its own just as the kill was sent
            self.killed_while = state(self.seat)
            self.returncode = 0

    run = ClaudeSession(seat, seat.agent, ["claude"], clock, environment={})
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: ExitsAsKilled(seat))
    monkeypatch.setattr(os, "getpgrp", lambda: -1)
    run.start()
    run.requests.append(signal.SIGHUP)
    assert run.run() == 0
    assert run.child.killed_while == ("ended", "signal 9")
    assert state(seat) == ("ended", "exit 0")


def test_presence_and_observed_state_are_refreshed_only_while_claude_lives(catalog, clock, monkeypatch) -> None:
    seat = make_seat(catalog)

    class Child:
        def __init__(self) -> None:
            self.polls = 0

        def poll(self):
            self.polls += 1
            # Alive for 11 simulated minutes of 0.25 s ticks, then exits 0.
            return 0 if self.polls > 11 * 60 * 4 else None

    run = ClaudeSession(seat, seat.agent, ["claude"], clock, environment={})
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: Child())
    stamps = []
    real_refresh = lifecycle.status.refresh
    monkeypatch.setattr(lifecycle.status, "refresh",
                        lambda directory, clock_: stamps.append(clock_.wall_ms()) or real_refresh(directory, clock_))
    start_ms = clock.wall_ms()
    assert run.run() == 0
    assert [round((stamp - start_ms) / 60000) for stamp in stamps] == [0, 5, 10]
    assert state(seat) == ("ended", "exit 0")


def test_the_lifecycle_has_only_its_named_edges() -> None:
    assert transition(Phase.STARTING, "spawned") is Phase.RUNNING
    assert transition(Phase.RUNNING, "reaped") is Phase.ENDED
    assert transition(Phase.STOPPING, "grace-expired") is Phase.ENDED
    for phase, event in [(Phase.ENDED, "reaped"), (Phase.STARTING, "reaped"), (Phase.RUNNING, "grace-expired")]:
        with pytest.raises(ValueError):
            transition(phase, event)


@pytest.mark.process
def test_a_missing_claude_ends_the_session_with_127(catalog, clock, tmp_path) -> None:
    seat = make_seat(catalog)
    run = ClaudeSession(seat, seat.agent, [str(tmp_path / "no-such-claude")], clock, environment={})
    with pytest.raises(OSError):
        run.run()
    assert state(seat) == ("ended", "exit 127")
