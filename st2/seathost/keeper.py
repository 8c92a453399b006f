"""Keep registrations: the seat host runs the five-minute duties of every anchored session wrapper.

A Claude seat's wrapper is the slim anchor while Claude runs (:mod:`st2.drivers.anchor`): a
bare interpreter that cannot import the record modules. Its two periodic duties — the presence
refresh (:func:`st2.records.status.refresh`, every ``STATUS_REFRESH``, 5 min; stale at 15) and
the observed-state heartbeat (:meth:`st2.records.harness_state.Writer.heartbeat`, checked every
:data:`HEARTBEAT_CHECK_SECONDS`, re-stamping once ``HARNESS_STATE_REFRESH`` is due) — are served
here, on the host's one thread, for every registration:

- ``keep`` ``{seat, agent, harness, runtimeId, incarnation, claimedSeq, refreshSeconds,
  dueInSeconds}`` → ``{"ok": true, "pid": …}``; the connection stays open for the
  registration's lifetime, and its end (the wrapper exec'd back, or died) ends it. The full
  wrapper registers just before it execs into the anchor (the descriptor is inherited); the
  anchor re-registers with ``dueInSeconds`` 0 when a new host answers after one went away.
- Fenced by the incarnation: presence is refreshed only while the seat's observed-state record
  is this incarnation's and not its terminal ``ended`` (its relaunch claim, ``ended`` /
  ``superseded`` under its own token, counts as live; a record that cannot be read does not
  stop it, as it would not stop the wrapper); the heartbeat is the session's own
  :class:`~st2.records.harness_state.Writer`, which never re-stamps another incarnation's or a
  terminal record. A registration whose record names another incarnation does nothing.
- A failure of one registration's duty is logged and never ends the host or another's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from st2.records import harness_state, status

OPERATION = "keep"
HEARTBEAT_CHECK_SECONDS = 30.0
REFRESH_SECONDS = status.STATUS_REFRESH_MS / 1000


@dataclass
class Kept:
    seat: Path
    incarnation: str
    pid: int | None
    refresh_seconds: float
    writer: harness_state.Writer
    next_presence: float
    next_heartbeat: float
    refreshes: int = 0


def request(seat: Path, agent: str, harness: str, runtime_id: str, incarnation: str, claimed_seq: int,
            refresh_seconds: float, due_in_seconds: float) -> dict:
    """The ``keep`` request body (field order pinned)."""
    return {"op": OPERATION, "seat": str(seat), "agent": agent, "harness": harness, "runtimeId": runtime_id,
            "incarnation": incarnation, "claimedSeq": claimed_seq, "refreshSeconds": refresh_seconds,
            "dueInSeconds": due_in_seconds}


def parse(body: dict) -> tuple | None:
    """``(seat, agent, harness, runtime id, incarnation, claimed seq, refresh s, due in s)`` of a
    well-formed ``keep`` request, else None."""
    words = [body.get(name) for name in ("seat", "agent", "harness", "runtimeId", "incarnation")]
    seq, refresh, due = body.get("claimedSeq"), body.get("refreshSeconds"), body.get("dueInSeconds")
    if not all(isinstance(word, str) and word for word in words) or not Path(words[0]).is_absolute():
        return None
    if type(seq) is not int or seq < 0:
        return None
    if not all(type(value) in (int, float) and 0 <= value < 86400 for value in (refresh, due)) or refresh <= 0:
        return None
    return (Path(words[0]), *words[1:], seq, float(refresh), float(due))


def live_here(seat: Path, incarnation: str) -> bool:
    """Whether the seat's observed-state record lets this incarnation's presence be refreshed."""
    try:
        data = (Path(seat) / harness_state.RECORD_NAME).read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return True
    try:
        record = harness_state.decode(data)
    except Exception:
        return True
    if record.incarnation != incarnation:
        return False
    return record.state != harness_state.ENDED or record.reason == harness_state.SUPERSEDED


class Keeper:
    def __init__(self, clock, log: Callable[[str], None]) -> None:
        self.clock = clock
        self.log = log
        self.kept: dict[int, Kept] = {}

    def register(self, key: int, body: dict, pid: int | None) -> bool:
        """Serve the ``keep`` request ``body`` as registration ``key``; False when malformed."""
        parsed = parse(body)
        if parsed is None:
            return False
        seat, agent, harness, runtime_id, incarnation, seq, refresh, due = parsed
        writer = harness_state.Writer(seat, agent, harness, self.clock, pty_session=runtime_id,
                                      incarnation=incarnation, claimed_seq=seq)
        now = self.clock.monotonic()
        self.kept[key] = Kept(seat, incarnation, pid, refresh, writer, now + due,
                              now + min(due, HEARTBEAT_CHECK_SECONDS))
        return True

    def unregister(self, key: int) -> None:
        self.kept.pop(key, None)

    def seconds_until_due(self) -> float | None:
        if not self.kept:
            return None
        due = min(min(kept.next_presence, kept.next_heartbeat) for kept in self.kept.values())
        return max(0.0, due - self.clock.monotonic())

    def run_due(self) -> None:
        """Every duty that is due, once."""
        now = self.clock.monotonic()
        for kept in list(self.kept.values()):
            if now >= kept.next_presence:
                kept.next_presence = now + kept.refresh_seconds
                self._duty(kept, self._refresh)
            if now >= kept.next_heartbeat:
                kept.next_heartbeat = now + HEARTBEAT_CHECK_SECONDS
                self._duty(kept, lambda kept_: kept_.writer.heartbeat())

    def _refresh(self, kept: Kept) -> None:
        if live_here(kept.seat, kept.incarnation):
            status.refresh(kept.seat, self.clock)
            kept.refreshes += 1

    def _duty(self, kept: Kept, duty) -> None:
        try:
            duty(kept)
        except Exception as error:   # one seat's record never ends the host or another's duty
            self.log(f"keeping {kept.seat} ({kept.incarnation}) failed: {error}")

    def summary(self) -> list[dict]:
        """For ``hello``: each registrant's PID and how many presence refreshes it was served."""
        return [{"pid": kept.pid, "refreshes": kept.refreshes}
                for kept in sorted(self.kept.values(), key=lambda kept: kept.pid or 0)]
