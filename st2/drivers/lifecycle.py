"""Every session wrapper's lifecycle and records, whatever runs the harness (docs/drivers.md
§Wrapper terminal write; docs/records.md §Harness state, docs/records.md §Status).

- The lifecycle machine (:class:`Phase`, :func:`transition`): STARTING → RUNNING → (STOPPING) →
  ENDED, each edge named.
- :class:`SessionRecords`: the relaunch claim (the written harness-state claim under a fresh
  token, which also removes ``harness-context``), the five-minute presence refresh and the
  observed-state heartbeat, both only while the provider lives, and the terminal ``ended``
  record carrying the real exit.
- :func:`install_stop_handlers`: SIGTERM/SIGHUP only enqueue, ^C is the harness's.
- :func:`stop_with_cover`: the stop path — signal the provider, give it a grace, and past the
  grace write ``ended``/``signal 9`` *before* the SIGKILL (nothing can be written after a kill of
  a whole group), then rewrite from the reap if the real status differs.
"""

from __future__ import annotations

import enum
import signal
import sys
from typing import Callable

from st2.records import harness_state, status

HEARTBEAT_CHECK_SECONDS = 30.0
STOP_GRACE_SECONDS = 2.0
"""Below the supervisor's 3 s stop escalation, so the wrapper's own cover lands first."""
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Phase(enum.Enum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    ENDED = "ended"


# Allowed edges, named: a wrapper asks transition() and never assigns a phase directly.
EDGES = {
    (Phase.STARTING, "spawned"): Phase.RUNNING,       # STARTING -> RUNNING
    (Phase.STARTING, "spawn-failed"): Phase.ENDED,    # STARTING -> ENDED (exit 127)
    (Phase.RUNNING, "stop-requested"): Phase.STOPPING,  # RUNNING -> STOPPING
    (Phase.RUNNING, "reaped"): Phase.ENDED,           # RUNNING -> ENDED
    (Phase.STOPPING, "reaped"): Phase.ENDED,          # STOPPING -> ENDED
    (Phase.STOPPING, "grace-expired"): Phase.ENDED,   # STOPPING -> ENDED (escalation cover)
}


def transition(phase: Phase, event: str) -> Phase:
    """The one transition function. Raise ValueError for an edge the machine does not have."""
    try:
        return EDGES[(phase, event)]
    except KeyError:
        raise ValueError(f"no edge from {phase.value} on {event!r}") from None


def take_launch(wrapper, seat, runtime_id: str, argv: list[str], clock, environment: dict | None,
                stop_grace: float) -> None:
    """Set what every wrapper is launched with on ``wrapper``: its seat, runtime id, the harness
    argv, clock, environment (default this process's) and stop grace, and an empty queue of the
    stop signals its handlers record. Raise ValueError for an empty harness argv."""
    import os
    from collections import deque

    if not argv:
        raise ValueError(f"no {wrapper.harness} argv after --")
    wrapper.seat, wrapper.runtime_id, wrapper.argv, wrapper.clock = seat, runtime_id, list(argv), clock
    wrapper.environment = dict(os.environ if environment is None else environment)
    wrapper.stop_grace = stop_grace
    wrapper.requests = deque()


def returncode_status(returncode: int) -> int:
    """The wrapper's own exit status for the provider's return code (128 + n for signal n)."""
    return 128 - returncode if returncode < 0 else returncode


def exit_words(returncode: int) -> str:
    return f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"


def say(prefix: str, message: str) -> None:
    """Diagnostics go to stderr, which is the PTY; once the terminal is gone that may fail."""
    try:
        sys.stderr.write(f"{prefix}: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class SessionRecords:
    """One session's claim, presence, heartbeat and terminal record over a seat directory."""

    def __init__(self, seat_directory, agent: str, harness: str, runtime_id: str, clock,
                 prefix: str = "st2 session") -> None:
        self.seat_directory = seat_directory
        self.agent = agent
        self.harness = harness
        self.runtime_id = runtime_id
        self.clock = clock
        self.prefix = prefix
        self.token: str | None = None
        self.seq: int | None = None
        self.writer: harness_state.Writer | None = None
        self.refresh_seconds = status.STATUS_REFRESH_MS / 1000
        self._next_presence = 0.0
        self._next_heartbeat = 0.0

    def claim(self) -> harness_state.Writer:
        """Make the relaunch claim and refresh presence; return this session's state writer."""
        self.token = harness_state.session_token()
        self.seq = harness_state.claim(self.seat_directory, self.agent, self.harness, self.token, self.clock)
        self.writer = harness_state.Writer(self.seat_directory, self.agent, self.harness, self.clock,
                                           pty_session=self.runtime_id, incarnation=self.token,
                                           claimed_seq=self.seq)
        self.refresh_presence()
        self._schedule()
        return self.writer

    def adopt(self, token: str, seq: int) -> harness_state.Writer:
        """Take over the session a predecessor image of this process claimed (the slim anchor's
        way back, :mod:`st2.drivers.session_anchor`): the same token and sequence, no new claim."""
        self.token, self.seq = token, seq
        self.writer = harness_state.Writer(self.seat_directory, self.agent, self.harness, self.clock,
                                           pty_session=self.runtime_id, incarnation=token, claimed_seq=seq)
        self._schedule()
        return self.writer

    def _schedule(self) -> None:
        now = self.clock.monotonic()
        self._next_presence = now + self.refresh_seconds
        self._next_heartbeat = now + HEARTBEAT_CHECK_SECONDS

    @property
    def next_presence(self) -> float:
        """When (monotonic seconds) the next presence refresh is due."""
        return self._next_presence

    def refresh_now(self) -> None:
        """Both five-minute duties at once (the anchor found no seat host to serve them)."""
        self.refresh_presence()
        self._heartbeat()
        self._schedule()

    def refresh_presence(self) -> None:
        try:
            status.refresh(self.seat_directory, self.clock)
        except Exception as error:  # presence is best effort; the session goes on
            say(self.prefix, f"presence refresh failed: {error}")

    def tick(self) -> None:
        """Call while — and only while — the provider lives: presence every five minutes, the
        observed-state heartbeat when its refresh is due."""
        now = self.clock.monotonic()
        if now >= self._next_presence:
            self.refresh_presence()
            self._next_presence = now + self.refresh_seconds
        if now >= self._next_heartbeat:
            self._heartbeat()
            self._next_heartbeat = now + HEARTBEAT_CHECK_SECONDS

    def _heartbeat(self) -> None:
        try:
            self.writer.heartbeat()
        except Exception as error:
            say(self.prefix, f"observed-state heartbeat failed: {error}")

    def ended(self, returncode: int) -> None:
        """The terminal record with the real exit (``exit 0``, ``signal 15``)."""
        self.writer.ended(harness_state.exit_description(returncode))


def stop_with_cover(child, records: SessionRecords, clock, grace: float, terminate: Callable[[], None],
                    kill: Callable[[], None]) -> tuple[int, bool]:
    """Stop ``child`` (a Popen-like object): ``terminate()``, wait ``grace`` seconds for the reap,
    else write the ``signal 9`` cover, ``kill()``, reap, and rewrite from the reap if it differs.
    Return the child's return code and whether the grace expired (the lifecycle's edge)."""
    try:
        terminate()
    except OSError:
        pass
    deadline = clock.monotonic() + grace
    while clock.monotonic() < deadline:
        returncode = child.poll()
        if returncode is not None:
            records.ended(returncode)
            return returncode, False
        clock.sleep(0.05)
    cover = -signal.SIGKILL
    records.ended(cover)
    try:
        kill()
    except OSError:
        pass
    returncode = child.wait()
    if returncode != cover:
        records.ended(returncode)
    return returncode, True


def replay_writers(seat, harness: str, clock, runtime_id: str | None = None):
    """A replay's relaunch claim over ``seat`` and its two writers under the claimed token:
    ``(harness_state.Writer, harness_context.Writer)`` — the same records the live wrapper writes."""
    from st2.records import harness_context

    token = harness_state.session_token()
    seq = harness_state.claim(seat.directory, seat.agent, harness, token, clock)
    state_writer = harness_state.Writer(seat.directory, seat.agent, harness, clock,
                                        pty_session=runtime_id or seat.agent, incarnation=token, claimed_seq=seq)
    return state_writer, harness_context.Writer(seat.directory, seat.agent, harness, token, clock)


def resolve_seat(catalog, identity: str, prefix: str):
    """The seat a wrapper verb serves, or None after saying why on the PTY (the verb exits 2)."""
    from st2.drivers import seat as seat_module

    try:
        return seat_module.resolve(catalog, identity)
    except seat_module.SeatNotFound as error:
        say(prefix, str(error))
        return None


def install_stop_handlers(enqueue) -> None:
    """SIGTERM and SIGHUP only record (``enqueue(number, frame)``; the loop acts). ^C reaches the
    whole foreground group; it is the harness's key, never the wrapper's end: a Python handler
    (not SIG_IGN, which exec would pass on) keeps the wrapper running."""
    for number in STOP_SIGNALS:
        signal.signal(number, enqueue)
    signal.signal(signal.SIGINT, lambda number, frame: None)
