"""The notifier loop behind ``st2 ding <runtime-id>``: one per PTY seat.

One pass (:meth:`Notifier.pass_once`):

1. read the ownership record (a malformed one holds delivery and is reported, never guessed);
   with no record this is a fresh start, and the unread backlog becomes one generic notice;
2. list the seat's unread mail (net of archive receipts) and forget settled names that left it;
3. unless fresh ``dnd`` is declared (``busy`` never defers), and unless a held head's 15 s
   backoff is still running, work the FIFO head through :mod:`st2.ding.ownership`:

   - a fresh head is owned only when the live composer is positively empty (a human's draft is
     never pasted over), then loaded into a named tmux buffer and pasted once with
     ``paste-buffer -d -p`` (one bracketed-paste frame);
   - Return is sent only after two adjacent observations within the observation window show
     the exact notice as the whole composer with Return safe; the Return is recorded before it
     is sent, and at most one bare retry Return ever follows;
   - the head is settled only on an adapter's ``ACCEPTED`` receipt; a positive ``NOT_RETAINED``
     releases only a head whose mail is already archived; everything else keeps ownership and
     blocks later FIFO work until a retry (inspection only) proves something.

Between passes the loop sleeps on mutation-only inotify events of the seat's inbox and status,
with the poll interval as fallback, and checks the target session each tick by connecting to its
tmux socket (no process spawned). A quiet seat — its last pass found no unread mail and nothing
owned — is passed again only on a wake or once :attr:`Settings.quiet_pass_interval` has gone by
(the fallback for a missed event): the DING service runs every seat's loop in one process, and
627 idle passes a second under one interpreter lock delayed every delivery. A wake starts the pass at once (no debounce by default): a
message is published by one rename, and events that arrive during a pass stay pending, so a
burst coalesces into the next pass anyway. Three consecutive
misses after the session was once seen alive end the notifier.
"""

from __future__ import annotations

import enum
import socket as socket_module
import sys
from dataclasses import dataclass, replace
from typing import Callable

from st2.bus.mailbox import list_inbox
from st2.catalog.layout import SeatPaths
from st2.base.clock import Clock
from st2.ding import ownership
from st2.ding.notice import BACKLOG_NOTICE, message_notice
from st2.ding.ownership import (Event, Head, MalformedOwnership, Ownership, OwnershipStore, Phase,
                                transition)
from st2.drivers.screen import ComposerState, ReceiptState, classify, receipt
from st2.delivery.hold import delivery_hold

DELIVERY_RETRY_BACKOFF_SECONDS = 15.0
SESSION_GONE_MISSES = 3


@dataclass(frozen=True)
class Settings:
    poll_interval: float = 1.0
    retry_backoff: float = DELIVERY_RETRY_BACKOFF_SECONDS
    observation_window: float = 0.45     # two adjacent observations must fall within this
    observation_poll: float = 0.01
    paste_visible_timeout: float = 2.0   # how long a fresh paste may take to show up
    receipt_timeout: float = 2.0         # how long a Return may take to show as accepted
    startup_grace: float = 0.25          # let a startup burst land before the backlog is taken
    debounce: float = 0.0                # wait this long after a wake before the pass (was 20 ms)
    quiet_pass_interval: float = 5.0     # a quiet seat's fallback pass without a wake
    gone_misses: int = SESSION_GONE_MISSES
    trace_progress: bool = False         # log one progress line per loop pass (tests read it)


class Outcome(enum.Enum):
    SETTLED = "settled"    # the head left the FIFO; the next one may go now
    HELD = "held"          # the head keeps ownership (or was not taken); retry after backoff
    IDLE = "idle"          # nothing to do


def socket_listening(path: str) -> bool:
    """A server accepts connections on the unix socket ``path`` (no client process spawned)."""
    probe = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


class SessionWatch:
    """Exit when the target is gone: only after it was seen alive (a notifier may start before
    its session), and only after ``misses`` consecutive misses."""

    def __init__(self, misses: int = SESSION_GONE_MISSES) -> None:
        self.limit = misses
        self.seen_alive = False
        self.misses = 0

    def step(self, alive: bool) -> bool:
        """Record one check; True when the session is gone for good."""
        if alive:
            self.seen_alive = True
            self.misses = 0
            return False
        if not self.seen_alive:
            return False
        self.misses += 1
        return self.misses >= self.limit


class Notifier:
    def __init__(self, seat: SeatPaths, terminal, store: OwnershipStore, adapters, clock: Clock,
                 settings: Settings = Settings(), log: Callable[[str], None] | None = None,
                 scope=None) -> None:
        """``scope`` is the seat's runtime scope directory: with it the budget reason of the
        delivery hold is asked too (the target is ``store.target``, the agent task's runtime id)."""
        self.seat = seat
        self.scope = scope
        self.terminal = terminal
        self.store = store
        self.adapters = tuple(adapters)
        self.clock = clock
        self.settings = settings
        self.log = log or (lambda line: print(f"st2 ding: {line}", file=sys.stderr, flush=True))
        self.state: Ownership | None = None
        self.next_attempt: float | None = None
        self.deliveries = 0
        self.pasted_at: tuple[str, float] | None = None  # (head token, monotonic) of this process's last paste
        self.gate: tuple[str, str] | None = None         # (head token, how long its first Return waited)
        self.attempts = 0          # delivery attempts that probed the terminal
        self.passes = 0            # loop passes (each looks at the session; at the inbox when alive and due)
        self.quiet = False         # the last pass found no unread mail and nothing owned
        self.paste_unpublished = False  # PASTED is held in memory, the record still says LOADED
        self._reported: str | None = None

    # --- state ---------------------------------------------------------------------------------

    def _apply(self, event: Event, **arguments) -> None:
        self.state = transition(self.state, event, **arguments)
        if event is Event.PASTE_LANDED:
            # Not published here: a restart that finds LOADED with the head's buffer gone reads
            # the paste as landed, which is what PASTED would have told it. The Return's save
            # follows at once; a head held instead publishes PASTED then (see _submit_and_confirm).
            self.paste_unpublished = True
            return
        self.paste_unpublished = False
        # A resumed head's LOADED stands for state of the tmux server, which a host crash takes
        # with it (the next server is a replaced terminal): published, not fsynced.
        self.store.save(self.state, durable=event is not Event.BUFFER_LOADED)

    def _load(self, unread: list[str]) -> bool:
        """Make ``self.state`` current; False (holding) when the record is malformed."""
        if self.state is not None:
            return True
        try:
            loaded = self.store.load()
        except MalformedOwnership as error:
            self._report(f"ownership record {self.store.path} is malformed ({error}); "
                         "holding delivery until it is repaired or removed")
            return False
        if loaded is None:
            loaded = Ownership(self.store.target, backlog=tuple(unread), started=True)
            self.store.save(loaded)
            if unread:
                self.log(f"found {len(unread)} unread message(s) at start; queued one backlog notice")
        self.state = loaded
        self._reported = None
        return True

    def _report(self, line: str) -> None:
        if line != self._reported:
            self.log(line)
            self._reported = line

    def _prune(self, unread: set[str]) -> None:
        state = self.state
        settled = tuple(name for name in state.settled if name in unread)
        backlog = tuple(name for name in state.backlog if name in unread)
        if (settled, backlog) != (state.settled, state.backlog):
            self.state = replace(state, settled=settled, backlog=backlog)
            self.store.save(self.state)

    def _candidate(self, messages: dict) -> Head | None:
        state = self.state
        if state.backlog:
            return Head("backlog", self._typed(BACKLOG_NOTICE), state.backlog, ownership.new_token())
        pending = sorted(name for name in messages if name not in state.settled)
        if not pending:
            return None
        message = messages[pending[0]]
        return Head("message", self._typed(message_notice(message.filename, message.subject,
                                                                        message.sender, message.tags)),
                    (message.filename,), ownership.new_token())

    def _typed(self, notice: str) -> str:
        """The notice in the form the seat's surface takes it (its grammar's ``notice``)."""
        render = getattr(self.adapters[0], "notice", None) if self.adapters else None
        return render(notice) if render is not None else notice

    # --- one pass ------------------------------------------------------------------------------

    def dnd(self) -> bool:
        """The seat's delivery hold (:func:`st2.delivery.hold.delivery_hold`) is up."""
        return self.hold() is not None

    def hold(self) -> str | None:
        """The hold's name (``"dnd"``, ``"budget"``) or None."""
        return delivery_hold(self.seat.status, self.clock.wall_ms(), self.scope,
                             self.store.target if self.scope is not None else None)

    def pass_once(self) -> None:
        messages = {message.filename: message for message in list_inbox(self.seat.directory)}
        self.quiet = not messages and self.state is not None and self.state.phase is Phase.IDLE
        if not self._load(sorted(messages)):
            return
        self._prune(set(messages))
        while True:
            if self.state.phase is Phase.IDLE and self._candidate(messages) is None:
                return
            now = self.clock.monotonic()
            if self.next_attempt is not None and now < self.next_attempt:
                return
            held = self.hold()
            if held == "budget":
                self._report("the seat's account budget holds (hold-on-pause); delivery deferred")
                return
            if held is not None:
                self._report("fresh dnd declared; delivery deferred")
                return
            # Read the inbox again as late as possible: a message the seat archived while the
            # hold was asked (it reads records) is not noticed.
            messages = {message.filename: message for message in list_inbox(self.seat.directory)}
            if self.state.phase is Phase.IDLE and self._candidate(messages) is None:
                return
            self.attempts += 1
            outcome = self.attempt(messages)
            if outcome is Outcome.SETTLED:
                self.next_attempt = None
                self._reported = None
                continue
            if outcome is Outcome.HELD:
                self.next_attempt = self.clock.monotonic() + self.settings.retry_backoff
            return

    # --- the delivery transaction --------------------------------------------------------------

    def _screen_state(self, expected: str) -> ComposerState:
        return self._composer(self.terminal.capture(), expected)

    def _composer(self, screen, expected: str) -> ComposerState:
        return ComposerState.AMBIGUOUS if screen is None else classify(screen, expected, self.adapters)

    def attempt(self, messages: dict) -> Outcome:
        unread = set(messages)
        observed: list = []
        if self.state.phase is Phase.IDLE:
            head = self._candidate(messages)
            composer = self._screen_state(head.notice)
            if composer is not ComposerState.EMPTY_SAFE:
                self._report(f"holding {head.notice[:60]!r}: composer is {composer.value}")
                return Outcome.HELD
            outcome = self._own_loaded(replace(head, terminal=self.terminal.server_pid), observed)
            return outcome if outcome is not None else self._submit_and_confirm(False, observed)
        else:
            # A resumed head: is it still the terminal it was pasted into? A new tmux server
            # means the seat restarted and whatever was pasted died with the old terminal.
            server = self.terminal.current_server()
            if server is None:
                return Outcome.HELD
            if self.state.head.terminal is not None and server != self.state.head.terminal:
                self.log("the target terminal was replaced; the owned notice goes to the new one")
                self._apply(Event.TERMINAL_REPLACED, terminal=server)
        head = self.state.head
        archived = not any(name in unread for name in head.filenames)
        if self.state.phase in (Phase.OWNED, Phase.LOADED):
            outcome = self._load_and_paste(head, archived, observed)
            if outcome is not None:
                return outcome
        return self._submit_and_confirm(archived, observed)

    def _own_loaded(self, head: Head, observed: list) -> Outcome | None:
        """Take a fresh head: load its notice into the buffer its new token names, look once
        more in the same client (a human may have started typing since the first look), then
        persist the head as owned and loaded, durably, in one save before the paste. Nothing is
        recorded before that save: a load that failed, or a buffer left by a notifier killed
        before it, is named by a token no record holds and is never pasted (the next attempt
        takes a new one). None when the paste landed (see :meth:`_paste`)."""
        loaded, look = self.terminal.load_and_look(head.buffer_name, head.notice)
        if not loaded:
            return Outcome.HELD
        composer = self._composer(look, head.notice)
        if composer is not ComposerState.EMPTY_SAFE:
            self.terminal.delete_buffer(head.buffer_name)
            self._report(f"holding {head.notice[:60]!r}: composer is {composer.value}")
            return Outcome.HELD
        self.state = transition(transition(self.state, Event.OWN, head=head), Event.BUFFER_LOADED)
        self.store.save(self.state)
        return self._paste(head, observed)

    def _load_and_paste(self, head: Head, archived: bool, observed: list) -> Outcome | None:
        """Drive a resumed OWNED/LOADED head to PASTED; None when the paste landed. Whether its
        named buffer is still in the terminal decides: in OWNED an absent one was never loaded
        (so it is loaded now), in LOADED an absent one was pasted. The look right before the
        paste is taken in the loading client when there is one."""
        look, looked = None, False
        if self.state.phase is Phase.OWNED:
            if archived:
                self._apply(Event.RELEASED)  # read before any paste: nothing to notify
                return Outcome.SETTLED
            present = self.terminal.buffer_exists(head.buffer_name)
            if present is None:
                return Outcome.HELD
            if not present:
                loaded, look = self.terminal.load_and_look(head.buffer_name, head.notice)
                if not loaded:
                    return Outcome.HELD  # the load may or may not have run: OWNED decides by presence
                looked = True
            self._apply(Event.BUFFER_LOADED)
            present = True
        else:
            present = self.terminal.buffer_exists(head.buffer_name)
            if present and archived:
                # Read while its notice waited loaded and unpasted (a draft held the paste): there
                # is nothing to notify. The buffer goes too; one left behind is never pasted, since
                # every head names a buffer of its own.
                self.terminal.delete_buffer(head.buffer_name)
                self._apply(Event.RELEASED)
                return Outcome.SETTLED
        if present is None:
            return Outcome.HELD
        if present:
            composer = self._composer(look, head.notice) if looked else self._screen_state(head.notice)
            if composer is not ComposerState.EMPTY_SAFE:
                return Outcome.HELD  # stays LOADED: the buffer is ours and unpasted
            return self._paste(head, observed)
        self._apply(Event.PASTE_LANDED)
        return None

    def _paste(self, head: Head, observed: list) -> Outcome | None:
        """Paste a LOADED head's buffer once; None when it landed, with the observations taken
        right after it appended to ``observed``."""
        started = self.clock.monotonic()
        pasted, screens = self.terminal.paste_and_observe(head.buffer_name, 2, self.settings.observation_poll)
        if not pasted:
            again = self.terminal.buffer_exists(head.buffer_name)
            if again is not False:
                return Outcome.HELD  # not pasted, or not knowable now: still LOADED
        ended = self.clock.monotonic()
        observed.extend((started, ended, screen) for screen in screens)
        self.pasted_at = (head.token, started)
        self._apply(Event.PASTE_LANDED)
        return None

    def _observe(self, expected: str, timeout: float, observed=()) -> tuple[str, ReceiptState]:
        """Observe until ACCEPTED, two adjacent RETAINED_SAFE observations within the window
        ("return"), or ``timeout``; returns the verdict and the last receipt state. ``observed``
        are observations already taken (``(started, ended, screen)`` of the client that took
        them) and are judged first. Two observations are within the window when the later one's
        client ended within it of the earlier one's client's start (never less than the time
        between them)."""
        deadline = self.clock.monotonic() + timeout
        pending = list(observed)
        previous: tuple[float, ReceiptState] | None = None
        last = ReceiptState.UNPROVEN
        while True:
            if pending:
                started, ended, screen = pending.pop(0)
            else:
                started = self.clock.monotonic()
                screen = self.terminal.capture()
                ended = self.clock.monotonic()
            last = ReceiptState.UNPROVEN if screen is None else receipt(screen, expected, self.adapters)
            if last is ReceiptState.ACCEPTED:
                return "accepted", last
            if (last is ReceiptState.RETAINED_SAFE and previous is not None
                    and previous[1] is ReceiptState.RETAINED_SAFE
                    and ended - previous[0] <= self.settings.observation_window):
                return "return", last
            previous = (started, last)
            if pending:
                continue
            if self.clock.monotonic() >= deadline:
                return "timeout", last
            self.clock.sleep(self.settings.observation_poll)

    def _submit_and_confirm(self, archived: bool, observed=()) -> Outcome:
        head = self.state.head
        verdict, last = self._observe(head.notice, self.settings.paste_visible_timeout, observed)
        if verdict == "return" and head.returns < ownership.MAX_RETURNS:
            first = head.returns == 0
            self._apply(Event.RETURN_SENT)  # recorded before it is sent
            started = self.clock.monotonic()
            if first and self.pasted_at is not None and self.pasted_at[0] == head.token:
                # How long the two-observation gate held the first Return after this process's paste.
                self.gate = (head.token, f" (Return {round((started - self.pasted_at[1]) * 1000)} ms after the paste)")
            _, screens = self.terminal.return_and_observe(1, self.settings.observation_poll)
            ended = self.clock.monotonic()
            verdict, last = self._observe(head.notice, self.settings.receipt_timeout,
                                          [(started, ended, screen) for screen in screens])
            if verdict == "return":
                verdict = "timeout"  # still sitting there: a later retry decides
        if verdict == "accepted":
            if self.gate is not None and self.gate[0] == head.token:
                gate = self.gate[1]
            else:
                gate = " (accepted with no Return)" if head.returns == 0 else ""
            if self.state.head.returns > 1:
                gate += " (after one retry Return)"
            self._apply(Event.ACCEPTED)
            self.deliveries += 1
            self.log(f"delivered {head.notice[:100]!r}{gate}")
            return Outcome.SETTLED
        if last is ReceiptState.NOT_RETAINED and archived:
            self._apply(Event.RELEASED)
            return Outcome.SETTLED
        if self.paste_unpublished:
            self.store.save(self.state, durable=False)
            self.paste_unpublished = False
        self._report(f"staged {head.notice[:60]!r}: receipt {last.value}; retrying by inspection only")
        return Outcome.HELD


def run(notifier: Notifier, watch, terminal_socket: str, stop: Callable[[], bool],
        wake_fd: int | None = None) -> int:
    """The loop: returns 0 when stopped or when the target session is gone."""
    settings = notifier.settings
    sessions = SessionWatch(settings.gone_misses)
    started = notifier.clock.monotonic()
    woken, last_pass = True, None
    while not stop():
        alive = socket_listening(terminal_socket)
        if sessions.step(alive):
            notifier.log("target session is gone; exiting")
            return 0
        now = notifier.clock.monotonic()
        if alive and now - started >= settings.startup_grace and (
                woken or not notifier.quiet or last_pass is None or now - last_pass >= settings.quiet_pass_interval):
            notifier.pass_once()
            last_pass = now
        notifier.passes += 1
        if settings.trace_progress:
            notifier.log(f"progress passes={notifier.passes} attempts={notifier.attempts} "
                         f"wakeups={watch.wakeups}")
        timeout = settings.poll_interval
        if notifier.next_attempt is not None:
            timeout = min(timeout, max(0.0, notifier.next_attempt - notifier.clock.monotonic()))
        if not sessions.seen_alive or notifier.clock.monotonic() - started < settings.startup_grace:
            timeout = min(timeout, settings.startup_grace)
        woken = watch.wait(timeout, wake_fd)
        if woken:
            if settings.debounce > 0:
                notifier.clock.sleep(settings.debounce)
            watch.drain()
    return 0
