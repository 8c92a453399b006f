"""The DING notifier (st2/ding/notifier.py) in process on a FakeClock: bounded probe churn (held
notices back off 15 s whatever the inbox does), dnd deferral without a probe, and the session
watch. Its end-to-end tests against a real tmux pane are test_notifier_process.py."""

from __future__ import annotations

import pytest

from ding_support import make_seat, write_message
from st2.bus.mailbox import list_inbox
from st2.catalog.layout import CatalogPaths
from st2.base.clock import FakeClock
from st2.ding.harness import adapters_for
from st2.ding.notifier import DELIVERY_RETRY_BACKOFF_SECONDS, Notifier, SessionWatch, Settings
from st2.ding.ownership import Event, OwnershipStore, transition
from st2.drivers.screen import Screen


class DraftTerminal:
    """A terminal whose composer always holds a human draft; counts probes."""

    def __init__(self, text: str = "a human draft") -> None:
        self.text = text
        self.probes = 0
        self.server_pid = 7

    def capture(self):
        self.probes += 1
        return Screen.parse(self.text + "\n", len(self.text), 0, 200)


def notifier_over(catalog, tmp_path, terminal, clock):
    store = OwnershipStore(tmp_path / "ding", tmp_path / "staging", "h.builder")
    return Notifier(CatalogPaths(catalog).seat("h", "builder"), terminal, store, adapters_for(None), clock,
                    Settings(), log=lambda line: None)


def test_held_delivery_probes_once_per_backoff_however_often_mail_arrives(catalog, tmp_path, clock: FakeClock):
    seat = make_seat(catalog, "builder")
    terminal = DraftTerminal()
    notifier = notifier_over(catalog, tmp_path, terminal, clock)
    notifier.pass_once()  # fresh start, empty backlog
    for _ in range(60):  # one minute of one-second polls, each with new mail
        write_message(seat, "more work")
        notifier.pass_once()
        clock.advance(1.0)
    assert DELIVERY_RETRY_BACKOFF_SECONDS == 15.0
    assert terminal.probes == 4  # t=0, 15, 30, 45
    assert notifier.attempts == 4


def test_without_the_backoff_every_poll_would_probe(catalog, tmp_path, clock: FakeClock):
    seat = make_seat(catalog, "builder")
    terminal = DraftTerminal()
    notifier = notifier_over(catalog, tmp_path, terminal, clock)
    notifier.settings = Settings(retry_backoff=0.0)
    notifier.pass_once()
    for _ in range(60):
        write_message(seat, "more work")
        notifier.pass_once()
        clock.advance(1.0)
    assert terminal.probes == 60


def test_dnd_defers_without_any_terminal_probe(catalog, tmp_path, clock: FakeClock):
    from st2.records import status

    seat = make_seat(catalog, "builder")
    status.write(seat, "dnd", clock)
    terminal = DraftTerminal()
    notifier = notifier_over(catalog, tmp_path, terminal, clock)
    notifier.pass_once()
    write_message(seat, "held")
    for _ in range(30):
        notifier.pass_once()
        clock.advance(1.0)
    assert terminal.probes == 0
    clock.advance(15 * 60)  # an abandoned dnd goes stale (unknown) and stops deferring
    notifier.pass_once()
    assert terminal.probes > 0


def test_session_watch_needs_three_misses_after_being_seen_alive():
    watch = SessionWatch()
    assert [watch.step(False) for _ in range(5)] == [False] * 5  # never seen: a startup miss
    assert watch.step(True) is False
    assert [watch.step(False), watch.step(False)] == [False, False]
    assert watch.step(True) is False  # a blip resets the count
    assert [watch.step(False), watch.step(False), watch.step(False)] == [False, False, True]


class LoadedThenDraftTerminal:
    """A composer empty at the first look that holds a human draft by the look right before the
    paste (typed in between), then empty again; records what is pasted and deleted."""

    def __init__(self) -> None:
        self.server_pid = 7
        self.draft = ""
        self.buffers: dict[str, str] = {}
        self.pasted: list[str] = []
        self.deleted: list[str] = []

    def _screen(self):
        return Screen.parse(self.draft + "\n", len(self.draft), 0, 200)

    def capture(self):
        return self._screen()

    def current_server(self):
        return self.server_pid

    drafts_on_load = True

    def load_and_look(self, name, text):
        self.buffers[name] = text
        if self.drafts_on_load:
            self.draft = "a human draft"
        return True, self._screen()

    def buffer_exists(self, name):
        return name in self.buffers

    def delete_buffer(self, name):
        self.deleted.append(name)
        return self.buffers.pop(name, None) is not None

    def paste_and_observe(self, name, observations, gap):
        self.pasted.append(self.buffers.pop(name))
        return True, [self._screen()]


def started_over_a_drafting_terminal(catalog, tmp_path, clock: FakeClock):
    """A seat, a :class:`LoadedThenDraftTerminal` and a notifier without backoff that has taken its
    (empty) startup backlog."""
    seat = make_seat(catalog, "builder")
    terminal = LoadedThenDraftTerminal()
    notifier = notifier_over(catalog, tmp_path, terminal, clock)
    notifier.settings = Settings(retry_backoff=0.0)
    notifier.pass_once()  # fresh start, empty backlog
    return seat, terminal, notifier


def test_a_draft_typed_between_the_two_looks_leaves_no_owned_head_and_a_later_pass_pastes_once(
        catalog, tmp_path, clock: FakeClock):
    seat, terminal, notifier = started_over_a_drafting_terminal(catalog, tmp_path, clock)
    write_message(seat, "typed over")
    notifier.pass_once()  # loaded; the look in the loading client shows the draft
    assert terminal.pasted == [] and terminal.buffers == {} and len(terminal.deleted) == 1
    assert notifier.state.phase.value == "idle" and notifier.store.load().phase.value == "idle"
    terminal.draft = ""   # the human clears the draft
    terminal.drafts_on_load = False
    notifier.pass_once()
    assert len(terminal.pasted) == 1 and terminal.deleted[0] not in terminal.pasted[0]


def test_a_resumed_notice_loaded_but_unpasted_is_released_when_its_message_is_archived(
        catalog, tmp_path, clock: FakeClock):
    seat, terminal, notifier = started_over_a_drafting_terminal(catalog, tmp_path, clock)
    name = write_message(seat, "read before its turn")
    # A notifier killed right after persisting the head as owned (a record an earlier build
    # wrote, or one a replaced terminal sent back to OWNED) leaves it OWNED with no buffer.
    head = notifier._candidate({name: list_inbox(seat)[0]})
    notifier.state = transition(notifier.state, Event.OWN, head=head)
    notifier.store.save(notifier.state)
    resumed = notifier_over(catalog, tmp_path, terminal, clock)
    resumed.settings = Settings(retry_backoff=0.0)
    resumed.pass_once()  # loaded again; the look in the loading client shows the draft
    assert resumed.state.phase.value == "loaded" and terminal.pasted == []
    (seat / "resources" / "archive").mkdir(exist_ok=True)
    (seat / "resources" / "inbox" / name).rename(seat / "resources" / "archive" / name)
    terminal.draft = ""  # the human clears the draft
    resumed.pass_once()
    assert terminal.pasted == []  # a read message is never noticed
    assert resumed.state.phase.value == "idle" and len(terminal.deleted) == 1 and terminal.buffers == {}
