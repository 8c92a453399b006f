"""Admission of starts per account: relaunch storms never start two seats of one account together.

Ten or more harness sessions starting together race on their account's shared login token and log
each other out (anthropics/claude-code#88947), and a reboot or a mass crash relaunches every seat
at once. So the supervisor asks :class:`Admission` before it launches (or relaunches) the
canonical agent task of a seat that runs on a declared account; its companions follow the agent
and are never asked. Seats with no account are never asked, never queued.

The contract, per account (``relaunch spacing=… concurrency=…``, default 3 s and 1):

- at most ``concurrency`` starts within any ``spacing`` window; with concurrency 1 no two starts
  of the account are closer than ``spacing``. A start is counted from when its launch returned
  (:meth:`Admission.launched`: the harness's process exists by then), so the next one's process
  is forked at least one spacing after the last one's; a launch that fails still counts (its
  harness may have read the credentials);
- each start is published durably in the account's admission record
  (``<scope>/admission/<account>.json``, :func:`st2.runtime.layout.account_admission`) before
  :meth:`Admission.admit` returns, marked pending until its launch returns, so a supervisor
  SIGKILLed and restarted never bursts: a pending start reads as one just now (its launch was in
  progress); a start of this boot is reckoned on the monotonic clock, one from an earlier boot (or
  with no monotonic stamp) by its wall-clock age, a wall stamp in the future reading as now;
- a malformed record reads as a full window of starts now (fail safe: wait one spacing), never as
  no starts;
- seats waiting form a FIFO queue, ordered by when each first waited, so none is starved; an
  explicit start (an operator's ``st2 up --agent X``, an unpark) goes to the head, behind earlier
  explicit ones, and still waits for the window (it never starts together with another seat of
  its account). A seat not asked again in a pass (it came up, was adopted, stopped) leaves the
  queue when the pass ends (:meth:`Admission.end_pass`), which also returns the monotonic time
  of the next slot so the loop wakes then.

The record (``st2.account-admission.v1``), also read by ``st2 tasks`` and ``st2 top`` through
:func:`read`::

    {"schema":"st2.account-admission.v1","account":"main","spacingMs":3000,"concurrency":1,
     "bootId":"…","starts":[{"runtimeId":"h.a","atMs":1788000000000,"monotonic":1000.0,"launched":true}],
     "queue":[{"runtimeId":"h.b","waitingSinceMs":1788000000000,"startsAtMs":1788000003000,
               "explicit":false}]}

Standard library only.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from st2.runtime import layout

SCHEMA = "st2.account-admission.v1"
RECORD_LIMIT = 1024 * 1024
BOOT_ID = "/proc/sys/kernel/random/boot_id"


class Start(NamedTuple):
    runtime_id: str
    at_ms: int
    monotonic: float | None = None   # this boot's monotonic seconds at the start
    launched: bool = True            # False while its launch is in progress


class Waiting(NamedTuple):
    runtime_id: str
    waiting_since_ms: int
    starts_at_ms: int
    explicit: bool = False


class AdmissionRecord(NamedTuple):
    """An account's admission record as read. ``malformed``: present but not a record (its
    starts and queue are then empty; :class:`Admission` reads it as a full window now)."""

    account: str
    spacing_ms: int = 0
    concurrency: int = 1
    boot_id: str = ""
    starts: tuple = ()
    queue: tuple = ()
    malformed: bool = False

    def position(self, runtime_id: str) -> int | None:
        """The 1-based place of ``runtime_id`` in the queue, or None when it is not waiting."""
        for index, entry in enumerate(self.queue):
            if entry.runtime_id == runtime_id:
                return index + 1
        return None


class Decision(NamedTuple):
    admitted: bool
    position: int | None = None      # 1-based, while waiting
    next_slot: float | None = None   # monotonic seconds the seat may start at, while waiting


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 63


def read(data: bytes | None, account: str) -> AdmissionRecord | None:
    """The record ``data`` holds for ``account``: None when absent (``data`` None), a
    ``malformed`` record when it is not one (never raises)."""
    if data is None:
        return None
    broken = AdmissionRecord(account, malformed=True)
    try:
        body = json.loads(data)
    except ValueError:
        return broken
    if not isinstance(body, dict) or body.get("schema") != SCHEMA or body.get("account") != account:
        return broken
    spacing, concurrency, boot_id = body.get("spacingMs"), body.get("concurrency"), body.get("bootId")
    starts, queue = body.get("starts"), body.get("queue")
    if not (_integer(spacing) and _integer(concurrency) and concurrency >= 1 and isinstance(boot_id, str)
            and isinstance(starts, list) and isinstance(queue, list)):
        return broken
    read_starts = []
    for entry in starts:
        if not isinstance(entry, dict) or not isinstance(entry.get("runtimeId"), str) or not _integer(entry.get("atMs")):
            return broken
        monotonic = entry.get("monotonic")
        if monotonic is not None and (not isinstance(monotonic, (int, float)) or isinstance(monotonic, bool)
                                      or monotonic != monotonic or monotonic < 0):
            return broken
        if not isinstance(entry.get("launched"), bool):
            return broken
        read_starts.append(Start(entry["runtimeId"], entry["atMs"], None if monotonic is None else float(monotonic),
                                 entry["launched"]))
    read_queue = []
    for entry in queue:
        if not (isinstance(entry, dict) and isinstance(entry.get("runtimeId"), str)
                and _integer(entry.get("waitingSinceMs")) and _integer(entry.get("startsAtMs"))
                and isinstance(entry.get("explicit"), bool)):
            return broken
        read_queue.append(Waiting(entry["runtimeId"], entry["waitingSinceMs"], entry["startsAtMs"], entry["explicit"]))
    return AdmissionRecord(account, spacing, concurrency, boot_id, tuple(read_starts), tuple(read_queue))


def read_file(scope, account: str) -> AdmissionRecord | None:
    """The account's record in the runtime scope directory ``scope`` (see :func:`read`); an
    unreadable file reads as malformed."""
    from st2.fs.read import read_bounded

    try:
        data = read_bounded(layout.account_admission(str(scope), account), RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:
        return AdmissionRecord(account, malformed=True)
    return read(data, account)


def record_bytes(record: AdmissionRecord) -> bytes:
    body = {
        "schema": SCHEMA, "account": record.account, "spacingMs": record.spacing_ms,
        "concurrency": record.concurrency, "bootId": record.boot_id,
        "starts": [{"runtimeId": start.runtime_id, "atMs": start.at_ms, "monotonic": start.monotonic,
                    "launched": start.launched} for start in record.starts],
        "queue": [{"runtimeId": entry.runtime_id, "waitingSinceMs": entry.waiting_since_ms,
                   "startsAtMs": entry.starts_at_ms, "explicit": entry.explicit} for entry in record.queue],
    }
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def this_boot() -> str:
    """This boot's id (empty when it cannot be read: every start is then reckoned by wall age)."""
    try:
        with open(BOOT_ID, "rb") as handle:
            return handle.read(64).decode("ascii", "replace").strip()
    except OSError:
        return ""


class _Account:
    """One account's live state: its recent starts (monotonic, wall ms) and its queue."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spacing = 0.0
        self.concurrency = 1
        self.starts: list[tuple[float, int, str]] = []        # (monotonic, wall ms, runtime id)
        self.pending: set[str] = set()                        # admitted, launch not yet returned
        self.queue: list[list] = []                           # [runtime id, waiting since ms, explicit]
        self.asked: set[str] = set()
        self.published: bytes | None = None


class Admission:
    """The supervisor's admission of starts, one per supervisor (see the module's contract).
    ``scope`` is the runtime scope directory; ``clock`` the supervisor's :class:`st2.base.clock.Clock`."""

    def __init__(self, scope, clock, boot_id: str | None = None) -> None:
        self.scope = str(scope)
        self.clock = clock
        self.boot_id = this_boot() if boot_id is None else boot_id
        self.accounts: dict[str, _Account] = {}
        self.pending: dict[str, _Account] = {}   # runtime id -> its account, while its launch runs

    def _load(self, account) -> _Account:
        state = self.accounts.get(account.name)
        if state is None:
            state = _Account(account.name)
            now, now_ms = self.clock.monotonic(), self.clock.wall_ms()
            record = read_file(self.scope, account.name)
            if record is not None and record.malformed:
                # Fail safe: whatever it said, a full window of starts happened now.
                state.starts = [(now, now_ms, "")] * max(1, account.concurrency)
            elif record is not None:
                for start in record.starts:
                    if not start.launched:
                        monotonic, start = now, start._replace(at_ms=now_ms)   # its launch was in progress
                    elif record.boot_id and record.boot_id == self.boot_id and start.monotonic is not None \
                            and start.monotonic <= now:
                        monotonic = start.monotonic
                    else:
                        monotonic = now - max(0, now_ms - start.at_ms) / 1000
                    state.starts.append((monotonic, start.at_ms, start.runtime_id))
                state.starts.sort()
                state.queue = [[entry.runtime_id, entry.waiting_since_ms, entry.explicit] for entry in record.queue]
            self.accounts[account.name] = state
        state.spacing = account.spacing_seconds
        state.concurrency = account.concurrency
        return state

    def begin_pass(self) -> None:
        """Forget which seats were asked: a seat not asked again by :meth:`end_pass` leaves its queue."""
        for state in self.accounts.values():
            state.asked.clear()

    def admit(self, account, runtime_id: str, *, explicit: bool = False) -> Decision:
        """May ``runtime_id``'s agent task start now on ``account`` (an
        :class:`st2.declarations.accounts.Account`)? Admitted: the start is recorded (durably,
        before this returns) and the seat leaves the queue. Otherwise the seat waits in the queue
        (at its head when ``explicit``) and the decision names its place and next slot. Raise
        OSError when the start cannot be recorded (the caller then does not launch)."""
        state = self._load(account)
        state.asked.add(runtime_id)
        now = self.clock.monotonic()
        entry = next((item for item in state.queue if item[0] == runtime_id), None)
        if entry is None:
            entry = [runtime_id, self.clock.wall_ms(), False]
            state.queue.append(entry)
        if explicit and not entry[2]:
            entry[2] = True
            state.queue.remove(entry)
            heads = sum(1 for item in state.queue if item[2])
            state.queue.insert(heads, entry)
        index = state.queue.index(entry)
        in_window = sum(1 for start in state.starts if start[0] > now - state.spacing)
        if index < state.concurrency - in_window:
            state.queue.remove(entry)
            state.starts.append((now, self.clock.wall_ms(), runtime_id))
            state.starts = state.starts[-state.concurrency:]
            state.pending.add(runtime_id)
            self.pending[runtime_id] = state
            self._publish(state, durable=True)
            return Decision(True)
        return Decision(False, index + 1, self._slots(state)[index][0])

    def launched(self, runtime_id: str) -> None:
        """``runtime_id``'s admitted launch returned (its process exists, or it failed): its start
        counts from now. The record is republished atomically, not fsynced: a host that crashes
        now reboots, and a supervisor that dies now leaves a pending start, read as one just now."""
        state = self.pending.pop(runtime_id, None)
        if state is None:
            return
        state.pending.discard(runtime_id)
        now, now_ms = self.clock.monotonic(), self.clock.wall_ms()
        state.starts = sorted((now, now_ms, rid) if rid == runtime_id else (monotonic, at_ms, rid)
                              for monotonic, at_ms, rid in state.starts)
        self._publish(state, durable=False)

    def ready(self) -> list[str]:
        """The queued runtime ids whose slot has come, in each queue's order: the ones a pass
        draining its queue asks :meth:`admit` for next."""
        ready = []
        for state in self.accounts.values():
            slots = self._slots(state)
            now = self.clock.monotonic()   # read after the slots: a slot that came is "now" there
            ready += [entry[0] for entry, slot in zip(state.queue, slots) if slot[0] <= now]
        return ready

    def next_slot(self) -> float | None:
        """The monotonic time of the earliest slot of any queue (None when nothing waits); unlike
        :meth:`end_pass` it changes nothing."""
        slots = [self._slots(state)[0][0] for state in self.accounts.values() if state.queue]
        return min(slots) if slots else None

    def end_pass(self) -> float | None:
        """Drop every seat not asked since :meth:`begin_pass` from its queue, publish each queue
        that changed, and return the monotonic time of the earliest next slot of a non-empty
        queue (None when nothing waits)."""
        for runtime_id in list(self.pending):   # a launch that raised: it counts from now
            self.launched(runtime_id)
        earliest = None
        for state in self.accounts.values():
            state.queue = [entry for entry in state.queue if entry[0] in state.asked]
            self._publish(state, durable=False)   # the queue is for readers: only starts must survive a crash
            if state.queue:
                slot = self._slots(state)[0][0]
                earliest = slot if earliest is None else min(earliest, slot)
        return earliest

    def _slots(self, state: _Account) -> list[tuple[float, int]]:
        """Each waiting seat's expected start, in queue order: (monotonic, wall ms)."""
        now, now_ms = self.clock.monotonic(), self.clock.wall_ms()
        recent = [(start[0], start[1]) for start in state.starts]
        spacing_ms = round(state.spacing * 1000)
        slots = []
        for _ in state.queue:
            if len(recent) < state.concurrency or recent[-state.concurrency][0] + state.spacing <= now:
                slot = (now, now_ms)
            else:
                anchor = recent[-state.concurrency]
                slot = (anchor[0] + state.spacing, anchor[1] + spacing_ms)
            recent.append(slot)
            slots.append(slot)
        return slots

    def _publish(self, state: _Account, *, durable: bool) -> None:
        from st2.fs.atomic import publish

        slots = self._slots(state)
        record = AdmissionRecord(
            state.name, round(state.spacing * 1000), state.concurrency, self.boot_id,
            tuple(Start(runtime_id, at_ms, monotonic, runtime_id not in state.pending)
                  for monotonic, at_ms, runtime_id in state.starts),
            tuple(Waiting(entry[0], entry[1], slot[1], entry[2]) for entry, slot in zip(state.queue, slots)))
        data = record_bytes(record)
        if data == state.published:
            return
        path = layout.account_admission(self.scope, state.name)
        staging = os.path.join(self.scope, layout.STAGING)   # the scope's own (RuntimeScope.staging)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.makedirs(staging, mode=0o700, exist_ok=True)
        publish(path, data, staging, root=self.scope, mode=0o600, durable=durable)
        state.published = data
