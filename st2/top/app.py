"""The Textual app of `st2 top`.

Refresh: the :class:`~st2.top.live.LiveFleet`'s watch descriptor is registered with the event
loop (``add_reader``), so an idle view sleeps in the kernel; a burst of events is drained into one
:class:`~st2.top.refresh.Changes` and flushed at most :data:`MAX_REDRAWS_PER_SECOND` times a
second, re-reading only the seats that changed (plus the task inventory or the usage header when
their records did). A flush that changes no cell redraws nothing. Without inotify a
:data:`FALLBACK_SECONDS` timer re-reads everything. :attr:`TopApp.redraws` counts the table and
header updates actually made (the idle proof reads it).
"""

from __future__ import annotations

import asyncio
import subprocess
import time

from rich.text import Text
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Input, Static

from st2.catalog.location import CatalogLocation
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.top import actions
from st2.top.live import LiveFleet
from st2.top.model import COLUMNS, SORT_KEYS, Filters, relaunch_queue_line
from st2.top.widgets import DetailScreen, PromptScreen, UsageHeader

MAX_REDRAWS_PER_SECOND = 4
FALLBACK_SECONDS = 2.0
FILTER_HELP = "filter: host:H harness:N state:S (state: observed, presence, desired or blocked) and free text"


def parse_filter(text: str) -> Filters:
    """``host:alpha harness:claude state:blocked some text`` -> :class:`Filters`."""
    filters = Filters()
    words = []
    for word in text.split():
        key, colon, value = word.partition(":")
        if colon and key in ("host", "harness", "state") and value:
            setattr(filters, key, value)
        else:
            words.append(word)
    filters.text = " ".join(words)
    return filters


def filter_text(filters: Filters) -> str:
    parts = [f"{key}:{getattr(filters, key)}" for key in ("host", "harness", "state") if getattr(filters, key)]
    return " ".join(parts + ([filters.text] if filters.text else []))


class TopApp(App):
    TITLE = "st2 top"
    # The table takes the focus as the screen starts (one focus change, so one footer rebuild,
    # instead of the screen's first focusable widget and then the table).
    AUTO_FOCUS = "#table"
    CSS = """
    #table { height: 1fr; }
    #filter { display: none; }
    #filter.shown { display: block; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #events { display: none; height: auto; max-height: 7; padding: 0 1; border-top: solid $panel; }
    #events.shown { display: block; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("slash", "filter", "Filter"),
        Binding("o", "sort", "Sort"),
        Binding("r", "reverse", "Reverse"),
        Binding("enter", "detail", "Detail"),
        Binding("a", "attach", "Attach"),
        Binding("m", "message", "Message"),
        Binding("u", "unpark", "Unpark"),
        Binding("d", "desired", "Desired"),
    ]

    def __init__(self, location: CatalogLocation, *, filters: Filters | None = None, sort: str | None = None,
                 clock: Clock = SYSTEM_CLOCK, environ=None, inventory_reader=None, watch: bool = True,
                 cache=None) -> None:
        """``cache``: the declaration cache the fleet's rows are read through (:class:`Fleet`)."""
        super().__init__()
        self.location = location
        self.filters = filters or Filters()
        self.sort = sort
        self.reverse = False
        self.clock = clock
        self.live = LiveFleet(location, clock=clock, environ=environ, inventory_reader=inventory_reader, cache=cache)
        self.fleet = self.live.fleet
        self.events = self.live.events
        self.shown_events: list[str] = []
        self.watching = watch
        self.flush_scheduled = False
        self.last_flush = 0.0
        self.redraws = 0
        self.flushes = 0
        self.order: list[str] = []
        self.shown_cells: dict[str, tuple] = {}
        self.shown_usage: tuple | None = None
        self.status_line = ""

    # --- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield UsageHeader(id="usage")
        yield Input(placeholder=FILTER_HELP, id="filter")
        yield DataTable(id="table", cursor_type="row", zebra_stripes=False)
        yield Static(id="events")
        yield Static(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._pin_console_size()
        table = self.query_one("#table", DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column.lower())
        self.live.load()
        self._start_watch()
        self.redraw(force=True)

    def _now_ms(self) -> int:
        return self.clock.wall_ms()

    def _pin_console_size(self) -> None:
        """Pin the size Rich's console reads from the terminal now. Unpinned it asks the terminal
        (an ioctl per standard stream) at every measurement, and the table measures every cell of
        every new row: 627 seats were 17,000 ioctls and a third of the first frame. A resize
        re-pins it, so every measurement sees the size it would have read."""
        self.console.size = (None, None)
        self.console.size = self.console.size

    def on_resize(self) -> None:
        self._pin_console_size()

    # --- refresh ----------------------------------------------------------------------------
    @property
    def usage(self):
        return self.live.usage

    @property
    def pending(self):
        return self.live.pending

    @property
    def watch_(self):
        return self.live.watch

    def _start_watch(self) -> None:
        if not self.watching:
            return
        if not self.live.start_watch():
            self.set_interval(FALLBACK_SECONDS, self._fallback)
            return
        asyncio.get_running_loop().add_reader(self.live.fileno(), self._on_events)

    def on_unmount(self) -> None:
        if self.live.watching:
            try:
                asyncio.get_running_loop().remove_reader(self.live.fileno())
            except (RuntimeError, ValueError):
                pass

    def _on_events(self) -> None:
        if not self.live.drain():
            return
        if not self.flush_scheduled:
            self.flush_scheduled = True
            delay = max(0.01, self.last_flush + 1.0 / MAX_REDRAWS_PER_SECOND - time.monotonic())
            self.set_timer(delay, self.flush)

    def _fallback(self) -> None:
        self.live.everything()
        self.flush()

    def flush(self) -> None:
        """Re-read what changed and redraw what differs."""
        self.flush_scheduled = False
        self.last_flush = time.monotonic()
        self.flushes += 1
        self.live.apply()
        self.redraw()

    # --- drawing ----------------------------------------------------------------------------
    def redraw(self, force: bool = False) -> None:
        """Redraw the rows that differ (all of them with ``force``). Draws nothing once the table
        is gone: a refresh the watch scheduled can fire while the app closes, after its screen's
        widgets were removed."""
        now_ms = self._now_ms()
        try:
            table = self.query_one("#table", DataTable)
        except NoMatches:
            return
        seats = self.fleet.visible(self.filters, now_ms, self.sort, self.reverse)
        order = [seat.identity for seat in seats]
        plain = {seat.identity: seat.cells(now_ms) for seat in seats}
        by_identity = {seat.identity: seat for seat in seats}
        changed = force
        usage_key = (self.usage.verdict_word, self.usage.five_hour_pct, self.usage.seven_day_pct,
                     self.usage.sampling, tuple(self.usage.spark[-60:]), tuple(self.usage.accounts))
        if usage_key != self.shown_usage:
            self.query_one("#usage", UsageHeader).show(self.usage)
            self.shown_usage = usage_key
            changed = True
        if order != self.order or force:
            cursor = self._cursor_identity()
            table.clear()
            for identity in order:
                table.add_row(*self._styled(by_identity[identity], plain[identity]), key=identity)
            if cursor in order:
                table.move_cursor(row=order.index(cursor))
            changed = True
        else:
            for identity in order:  # only a row whose text changed is styled and updated
                if plain[identity] != self.shown_cells.get(identity):
                    for key, value in zip(SORT_KEYS, self._styled(by_identity[identity], plain[identity])):
                        table.update_cell(identity, key, value)
                    changed = True
        self.order = order
        self.shown_cells = plain
        events = self.events.lines() if self.events.events else []
        if events != self.shown_events:
            pane = self.query_one("#events", Static)
            pane.update(Text("\n".join(events)))  # text, never markup: the fields are the journal's
            pane.set_class(bool(events), "shown")  # no pane until something was journaled
            self.shown_events = events
            changed = True
        status = self._status_text(len(seats))
        if status != self.status_line:
            self.query_one("#status", Static).update(Text(status))
            self.status_line = status
            changed = True
        if changed:
            self.redraws += 1

    def _styled(self, seat, cells: tuple[str, ...]) -> tuple[Text, ...]:
        """The row's cells (:meth:`SeatView.cells`) as styled text."""
        style = "bold red" if seat.blocked_on_human else ""
        styled = [Text(cell, style=style) for cell in cells]
        if "stale" in cells[5] or "unknown" in cells[4]:
            for index in (4, 5):
                if not seat.blocked_on_human:
                    styled[index].stylize("dim")
        if cells[8] not in ("-",) and not cells[8].startswith("ok "):
            styled[8].stylize("yellow")
        return tuple(styled)

    def _status_text(self, shown: int) -> str:
        blocked = sum(seat.blocked_on_human for seat in self.fleet.seats.values())
        sort = f"sort {self.sort or 'blocked-first'}{' reversed' if self.reverse else ''}"
        active = filter_text(self.filters)
        parts = [f"{shown}/{len(self.fleet.seats)} seats", f"{blocked} blocked on a human", sort]
        queue = relaunch_queue_line(self.fleet.seats.values(), self.clock.wall_ms())
        if queue is not None:
            parts.append(queue)
        if active:
            parts.append(f"filter {active}")
        if self.status_message:
            parts.append(self.status_message)
        return " · ".join(parts)

    status_message = ""

    def say(self, message: str) -> None:
        self.status_message = message
        self.redraw()

    def _cursor_identity(self) -> str | None:
        table = self.query_one("#table", DataTable)
        if not self.order or table.cursor_row is None or not (0 <= table.cursor_row < len(self.order)):
            return None
        return self.order[table.cursor_row]

    def selected(self):
        identity = self._cursor_identity()
        return self.fleet.seats.get(identity) if identity else None

    # --- keys -------------------------------------------------------------------------------
    def action_filter(self) -> None:
        field = self.query_one("#filter", Input)
        field.add_class("shown")
        field.value = filter_text(self.filters)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "filter":
            return
        self.filters = parse_filter(event.value)
        event.input.remove_class("shown")
        self.query_one("#table", DataTable).focus()
        self.redraw()

    def action_sort(self) -> None:
        keys = [None, *SORT_KEYS]
        self.sort = keys[(keys.index(self.sort) + 1) % len(keys)]
        self.redraw()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        if self.sort == key:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = key, False
        self.redraw()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self.redraw()

    def action_detail(self) -> None:
        seat = self.selected()
        if seat is not None:
            self.push_screen(DetailScreen(actions.detail_lines(self.location, seat, self._now_ms())))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_detail()

    def action_attach(self) -> None:
        seat = self.selected()
        if seat is None:
            return
        try:
            with self.suspend():
                completed = subprocess.run(actions.attach_argv(self.location, seat))
        except SuspendNotSupported:
            self.say(f"attach needs a terminal this view can suspend: run st2 {' '.join(actions.attach_argv(self.location, seat)[3:])}")
            return
        self.say(f"attach {seat.identity} ended ({completed.returncode})")

    def action_message(self) -> None:
        seat = self.selected()
        if seat is None:
            return

        def sent(body: str | None) -> None:
            if body is not None:
                self.say(actions.send_message(self.location, seat, body))

        self.push_screen(PromptScreen(f"message to {seat.identity} (as the operator); Enter sends, Escape cancels",
                                      "message body"), sent)

    def action_unpark(self) -> None:
        seat = self.selected()
        if seat is not None:
            self.say(actions.unpark_tasks(self.location, seat))

    def action_desired(self) -> None:
        seat = self.selected()
        if seat is None:
            return

        def chosen(words: str | None) -> None:
            if words:
                self.say(actions.set_desired(self.location, seat, words))

        self.push_screen(PromptScreen(f"desired state of {seat.identity}: running | suspended <reason> | "
                                      "retired <reason>", "suspended waiting for review"), chosen)
