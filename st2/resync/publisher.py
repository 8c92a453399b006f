"""Capture and publication of resync events, beside the reconcile pass and never inside it.

After every pass the supervisor calls :meth:`ResyncPublisher.refresh` with this host's
subscriptions (each subscriber's ``subscribe`` lines, active while the subscriber's desired state
is running). ``refresh`` only swaps tables under the publisher's own short lock — no file is read,
no lock of the catalog or of a stream is taken — so a pass never waits for publication.

The flush thread (:meth:`ResyncPublisher.flush`, woken by a refresh, by a mutation of a watched
``resource-state`` tree, by a finished publication, or every :attr:`poll_seconds`) captures: for
each active subscription with nothing reserved it reads the owner's state record (the replicated
``<owner seat>/resource-state/<binding>.json``, :mod:`st2.resources.state`) and, when its
transition — revision and host digest — is not the one last settled, reserves the exact event.
It then hands each queued reservation whose subscription has no publication outstanding to the
workers, and drops a queued one whose subscription the last refresh deactivated.

A worker publishes one reservation through :func:`st2.bus.stream.emit` on the subscriber's
stream — event id ``<owner>/<binding>@<revision>:<digest prefix>``, key ``<owner>/<binding>``,
superseding that binding's previous unread event — and classifies a refusal
(:class:`st2.resync.machine.Refusal`): a recipient that is declared but not running parks the
reservation; an ambiguous recipient, one owned by another host and a stream it does not declare
are permanent; anything else (an absent declaration, a held lock that timed out, a full disk) is
retried after :attr:`retry_seconds`. The receipt ring makes every replay of one transition the
same file, so a supervisor restarted with nothing in memory publishes nothing twice.
"""

from __future__ import annotations

import os
import queue
import select
import threading
from collections import namedtuple
from pathlib import Path
from typing import Callable

from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.bus import AmbiguousRecipient, BusError
from st2.fs.pipe import drain
from st2.resync.machine import (EMPTY, EVENT_OF_REFUSAL, Event, Phase, Refusal, Reservation, Slot,
                                transition)

Key = namedtuple("Key", ("subscriber", "owner", "binding", "stream"))
"""One subscription: the subscriber's bus id, the owner as declared (its name, or the subscriber's
own bus id), the binding and the subscriber's stream."""

Entry = namedtuple("Entry", ("key", "recipient", "active"))
"""A refresh row: the subscription, the name the bus resolves the subscriber by (its address) and
whether the pass decided it receives events (its desired state is running)."""


def entries_from_plans(plans) -> list[Entry]:
    """This host's subscriptions from the supervisor's seat plans (``agent``, ``running``,
    ``declaration``)."""
    found = []
    for plan in plans:
        declaration = plan.declaration
        if declaration is None:
            continue
        recipient = declaration.address or plan.agent
        for subscription in declaration.subscriptions:
            key = Key(plan.agent, subscription.agent or plan.agent, subscription.binding, subscription.stream)
            found.append(Entry(key, recipient, plan.running))
    return found


class ResyncPublisher:
    def __init__(self, catalog: Path, host: str, *, clock: Clock = SYSTEM_CLOCK,
                 say: Callable[[str], None] = lambda line: None, workers: int = 2,
                 retry_seconds: float = 5.0, poll_seconds: float = 2.0) -> None:
        self.catalog = Path(catalog)
        self.host = host
        self.clock = clock
        self.say = say
        self.retry_seconds = retry_seconds
        self.poll_seconds = poll_seconds
        self.published = 0
        self.outcomes: list[tuple[Key, str, Refusal | None]] = []  # (subscription, event id, refusal), bounded
        self._lock = threading.Lock()
        self._entries: dict[Key, Entry] = {}
        self._slots: dict[Key, Slot] = {}
        self._removed: set[Key] = set()      # gone from the table while a publication is outstanding
        self._owners: dict[str, tuple | None] = {}
        self._signatures: dict[Key, tuple] = {}
        self._said: set[str] = set()
        self._work: queue.Queue = queue.Queue()
        self._stopped = threading.Event()
        self._threads: list[threading.Thread] = []
        self._worker_count = workers
        self._watch = None
        self._pipe = os.pipe()
        for descriptor in self._pipe:
            os.set_blocking(descriptor, False)

    # --- the pass's side: never blocks on publication ------------------------------------------

    def refresh(self, entries: list[Entry]) -> None:
        """Install this pass's subscriptions. A removed subscription drops its reservation (an
        outstanding one is forgotten when it finishes); a deactivated one drops a queued
        reservation; a parked one whose recipient the pass carries as running again re-arms."""
        with self._lock:
            table = {entry.key: entry for entry in entries}
            for key in list(self._slots):
                if key in table:
                    continue
                if self._slots[key].phase is Phase.OUTSTANDING:
                    self._removed.add(key)
                else:
                    del self._slots[key]
            for key, entry in table.items():
                self._removed.discard(key)
                slot = self._slots.get(key, EMPTY)
                if not entry.active and slot.phase is Phase.QUEUED:
                    slot = transition(slot, Event.DEACTIVATED)
                elif entry.active and slot.phase is Phase.PARKED:
                    slot = transition(slot, Event.RE_ARMED)
                self._slots[key] = slot
            self._entries = table
            self._owners = {}
            self._signatures = {}  # each pass re-reads every record once: nothing is skipped for good
        self._wake_up()

    def slot(self, key: Key) -> Slot | None:
        with self._lock:
            return self._slots.get(key)

    # --- capture and dispatch (the flush thread) -------------------------------------------------

    def flush(self) -> None:
        """Capture new transitions and hand queued reservations to the workers."""
        with self._lock:
            entries = dict(self._entries)
            idle = [key for key, slot in self._slots.items()
                    if slot.phase is Phase.IDLE and key in entries and entries[key].active]
        captured = {}
        for key in idle:
            reservation = self._capture(key)
            if reservation is not None:
                captured[key] = reservation
        now = self.clock.monotonic()
        handed = []
        with self._lock:
            for key, reservation in captured.items():
                slot = self._slots.get(key)
                entry = self._entries.get(key)
                if slot is None or slot.phase is not Phase.IDLE or entry is None or not entry.active:
                    self._signatures.pop(key, None)  # a refresh changed it meanwhile: read it again
                    continue
                if reservation.event_id == slot.baseline:
                    continue
                self._slots[key] = transition(slot, Event.CAPTURED, reservation=reservation)
            for key, slot in self._slots.items():
                entry = self._entries.get(key)
                if slot.phase is not Phase.QUEUED or entry is None or slot.not_before > now:
                    continue
                self._slots[key] = transition(slot, Event.DISPATCHED)
                handed.append((key, entry.recipient, slot.reservation))
        if handed:
            from st2.bus.addressing import reading

            seats = reading(self.catalog)  # one reading of the catalog for the whole batch
            for key, recipient, reservation in handed:
                self._work.put((key, recipient, reservation, self.recipient_of(recipient, seats)))

    def _capture(self, key: Key) -> Reservation | None:
        from st2.resources import state as resource_state

        owner = self._owner(key.owner)
        if owner is None:
            return None
        bus_id, directory = owner
        try:
            signature = _signature(resource_state.path(directory, key.binding))
        except ValueError:
            return None
        with self._lock:
            slot = self._slots.get(key, EMPTY)
            if signature is not None and self._signatures.get(key) == signature and slot.baseline is not None:
                return None
        record = resource_state.read_file(directory, bus_id, key.binding)
        with self._lock:
            self._signatures[key] = signature
        if record is None or record.host_digest is None:
            return None
        return render(bus_id, key.binding, record)

    def _owner(self, name: str) -> tuple[str, str] | None:
        """The owning seat's (bus id, directory), resolved once per refresh; None (said once) when
        the name resolves to nothing or several: nothing is captured until it does."""
        with self._lock:
            if name in self._owners:
                return self._owners[name]
        from st2.bus.addressing import resolve_seat

        try:
            seat = resolve_seat(self.catalog, name, for_delivery=False)
            found = (seat.bus_id, os.fspath(seat.directory))
        except BusError as error:
            self._say_once(f"resync: the owner {name!r} of a subscription does not resolve: {error}")
            found = None
        with self._lock:
            self._owners[name] = found
        return found

    # --- publication (the workers) ----------------------------------------------------------------

    def recipient_of(self, recipient: str, seats=None):
        """The recipient's seat, resolved as the bus resolves a name (against ``seats``, one
        :func:`st2.bus.addressing.reading`, when given), or ``(refusal, reason)``."""
        from st2.bus.addressing import reading, resolve_among

        try:
            return resolve_among(reading(self.catalog) if seats is None else seats, self.catalog, recipient,
                                 for_delivery=False)
        except AmbiguousRecipient as error:
            return Refusal.PERMANENT, str(error)
        except BusError as error:  # an absent declaration may arrive (replication, an author)
            return Refusal.RETRY, str(error)

    def publish(self, key: Key, recipient: str, reservation: Reservation, resolved=None) -> Refusal | None:
        """Publish one reservation to ``recipient`` (its seat as :meth:`recipient_of` resolved it,
        or resolved now); None when it is in the recipient's inbox (or settled there), else how
        the refusal is classified."""
        from st2.bus.addressing import Seat
        from st2.bus.stream import emit

        seat = self.recipient_of(recipient) if resolved is None else resolved
        if not isinstance(seat, Seat):
            return self._refused(key, *seat)
        if seat.host != self.host:
            return self._refused(key, Refusal.PERMANENT, f"{seat.bus_id} is owned by host {seat.host}, not {self.host}")
        if key.stream not in seat.streams:
            return self._refused(key, Refusal.PERMANENT, f"{seat.bus_id} declares no stream {key.stream!r}")
        if not seat.running:
            return self._refused(key, Refusal.PARK, f"{seat.bus_id} is {seat.desired_state}")
        try:
            emit(self.catalog, seat, stream=key.stream, event_id=reservation.event_id, key=reservation.key,
                 supersede=True, subject=reservation.subject, body=reservation.body, clock=self.clock)
        except (BusError, OSError, TimeoutError) as error:
            return self._refused(key, Refusal.RETRY, str(error))
        return None

    def _refused(self, key: Key, refusal: Refusal, reason: str) -> Refusal:
        self._say_once(f"resync of {key.owner}/{key.binding} to {key.subscriber} on {key.stream}: "
                       f"{refusal.value}: {reason}")
        return refusal

    def _settle(self, key: Key, reservation: Reservation, refusal: Refusal | None) -> None:
        with self._lock:
            self.outcomes = (self.outcomes + [(key, reservation.event_id, refusal)])[-256:]
            if refusal is None:
                self.published += 1
            slot = self._slots.get(key)
            if slot is None or slot.phase is not Phase.OUTSTANDING:
                return
            if key in self._removed:
                self._removed.discard(key)
                del self._slots[key]
                return
            if refusal is None:
                self._slots[key] = transition(slot, Event.PUBLISHED)
            else:
                self._slots[key] = transition(slot, EVENT_OF_REFUSAL[refusal],
                                              not_before=self.clock.monotonic() + self.retry_seconds)
        self._wake_up()

    def _work_loop(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            self._publish_one(item)

    def _publish_one(self, item) -> None:
        key, recipient, reservation, resolved = item
        try:
            refusal = self.publish(key, recipient, reservation, resolved)
        except Exception as error:  # a worker outlives one bad publication; it is retried
            refusal = self._refused(key, Refusal.RETRY, repr(error))
        self._settle(key, reservation, refusal)

    def publish_handed(self) -> int:
        """Publish every reservation handed off so far on the calling thread (the workers' loop
        body, for a publisher whose threads were not started); return how many."""
        count = 0
        while True:
            try:
                item = self._work.get_nowait()
            except queue.Empty:
                return count
            if item is not None:
                self._publish_one(item)
                count += 1

    # --- threads ------------------------------------------------------------------------------------

    def start(self) -> "ResyncPublisher":
        from st2.fs.watch import MutationWatch

        self._watch = MutationWatch()
        self._threads = [threading.Thread(target=self._flush_loop, name="st2-resync", daemon=True)]
        self._threads += [threading.Thread(target=self._work_loop, name=f"st2-resync-{index}", daemon=True)
                          for index in range(self._worker_count)]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        try:
            os.write(self._pipe[1], b"x")  # ends the flush thread's select
        except BlockingIOError:
            pass
        for _ in range(self._worker_count):
            self._work.put(None)
        for thread in self._threads:
            thread.join(timeout=2)
        for descriptor in self._pipe:
            os.close(descriptor)

    def _flush_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                self._watch_owners()
                self.flush()
            except Exception as error:  # the thread outlives one bad sweep; the pass goes on
                self._say_once(f"resync: a sweep failed: {error!r}")
            self._sleep()

    def _watch_owners(self) -> None:
        """Watch each owner's seat directory and its ``resource-state`` tree (mutations only)."""
        from st2.catalog.layout import RESOURCE_STATE

        watch = self._watch
        if watch is None or not watch.active:
            return
        with self._lock:
            owners = [found for found in self._owners.values() if found is not None]
        for _, directory in owners:
            for path in (Path(directory), Path(directory) / RESOURCE_STATE):
                if not watch.watching(path) and path.is_dir():
                    watch.add(path, "owner")

    def _sleep(self) -> None:
        """Until a wake (refresh, settled publication, stop), a watched mutation, or the poll
        interval: one ``select`` on the wake pipe and the watch, no polling loop."""
        watch = self._watch
        descriptors = [self._pipe[0]] + ([watch.fileno()] if watch is not None and watch.active else [])
        ready, _, _ = select.select(descriptors, [], [], self.poll_seconds)
        if self._pipe[0] in ready:
            drain(self._pipe[0])
        if watch is not None and watch.active and watch.fileno() in ready:
            watch.events()

    def _wake_up(self) -> None:
        if self._stopped.is_set():
            return  # the pipe is closed (or closing): a worker finishing late wakes no one
        try:
            os.write(self._pipe[1], b"x")
        except BlockingIOError:
            pass  # the pipe is full: a wake is pending anyway

    def _say_once(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.say(line)


def render(owner: str, binding: str, record) -> Reservation:
    """The exact event one accepted transition publishes."""
    from st2.resources import state as resource_state

    digest = record.host_digest.partition(":")[2]
    body = (f"Resource {binding} of {owner} changed: revision {record.revision}, generation "
            f"{record.generation}, {record.host_digest}.\n\n"
            + resource_state.encode(record).decode("utf-8"))
    return Reservation(record.revision, f"{owner}/{binding}@{record.revision}:{digest[:12]}", f"{owner}/{binding}",
                       f"{binding} of {owner} is at revision {record.revision}", body)


def _signature(path: str) -> tuple | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino)
