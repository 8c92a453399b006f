"""The Textual app driven headless by Textual's pilot over the fixed catalog: filters, sorting,
the detail pane, the compose dialog sending a real message, desired state through the authoring
path, a record change on disk appearing without a key press, and an idle view that never
redraws."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

import top_fixture
from roster_fixture import context_record
from st2.catalog.location import CatalogLocation
from st2.base.clock import PinnedWallClock

pytest.importorskip("textual")

from st2.top.app import TopApp  # noqa: E402
from st2.top.widgets import DetailScreen  # noqa: E402


def make_app(tmp_path: Path, **kwargs) -> TopApp:
    catalog = top_fixture.build(tmp_path)
    return TopApp(CatalogLocation(catalog, top_fixture.HOST), clock=PinnedWallClock(top_fixture.NOW_MS),
                  environ=top_fixture.usage_environment(tmp_path),
                  inventory_reader=top_fixture.inventory_envelope, **kwargs)


def identities(app: TopApp) -> list[str]:
    return [identity.split(".", 1)[1] for identity in app.order]


def test_blocked_on_a_human_sorts_first_and_keys_filter_and_sort(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            assert identities(app) == ["reviewer", "builder", "flaky", "sleeper", "remote"]
            await pilot.press("slash", *"state:blocked", "enter")
            assert identities(app) == ["reviewer"]
            await pilot.press("slash", "ctrl+u", *"host:alpha sle", "enter")
            assert identities(app) == ["sleeper"]
            await pilot.press("slash", "ctrl+u", "enter")
            assert len(app.order) == 5
            for _ in range(6):  # None -> host -> agent -> presence -> desired -> observed -> context
                await pilot.press("o")
            assert app.sort == "context"
            assert identities(app) == ["flaky", "remote", "reviewer", "builder", "sleeper"]
            await pilot.press("r")
            assert identities(app)[0] == "sleeper"

    asyncio.run(scenario())


def test_the_detail_pane_shows_record_ages_diagnostic_messages_and_doctor(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        async with app.run_test(size=(150, 40)) as pilot:
            await pilot.pause()
            await pilot.press("down", "enter")  # builder
            await pilot.pause()
            assert isinstance(app.screen, DetailScreen)
            text = "\n".join(app.screen.lines)
            assert text.startswith("alpha.builder  Builds things\n")
            assert "  harness-context    " in text and "record ages:" in text
            assert "driver diagnostic:" in text and "doctor:" in text
            assert f"inbox   {top_fixture.NOW_MS - 60_000}-bcdefg.md from alpha.operator: again" in text
            await pilot.press("escape")
            assert not isinstance(app.screen, DetailScreen)

    asyncio.run(scenario())


def test_the_compose_dialog_sends_a_real_message_as_the_operator(tmp_path: Path) -> None:
    from st2.bus.principals import ensure_operator

    async def scenario() -> None:
        app = make_app(tmp_path)
        ensure_operator(app.location.root, top_fixture.HOST)
        inbox = app.location.root / "agents" / "alpha" / "reviewer" / "resources" / "inbox"
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            await pilot.press("m", *"please look", "enter")
            await pilot.pause()
            names = sorted(os.listdir(inbox))
            assert len(names) == 1, names
            text = (inbox / names[0]).read_text()
            assert "from: alpha.operator\n" in text and text.endswith("please look\n")
            assert f"sent {names[0]} to alpha.reviewer as alpha.operator" in app.status_line

    asyncio.run(scenario())


def test_without_an_operator_principal_the_dialog_sends_nothing_and_says_so(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        inbox = app.location.root / "agents" / "alpha" / "reviewer" / "resources" / "inbox"
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            await pilot.press("m", *"hello", "enter")
            await pilot.pause()
            assert os.listdir(inbox) == []
            assert "not sent: no operator principal on alpha" in app.status_line

    asyncio.run(scenario())


def test_desired_state_goes_through_the_authoring_path(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        declaration = app.location.root / "agents" / "alpha" / "reviewer" / "agent.kdl"
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            await pilot.press("d", *"suspended", "enter")
            await pilot.pause()
            assert "refused: suspended needs --reason" in app.status_line
            assert "desired-state" not in declaration.read_text()
            await pilot.press("d", *"suspended waiting for review", "enter")
            await pilot.pause()
            assert 'desired-state "suspended" reason="waiting for review"' in declaration.read_text()
            assert "alpha.reviewer is now suspended (waiting for review)" in app.status_line

    asyncio.run(scenario())


def test_a_record_change_on_disk_appears_through_the_watch_without_a_key_press(tmp_path: Path) -> None:
    # The watch, not the 2 s fallback timer, brings it: the one flush re-reads this seat alone (the
    # timer re-reads every seat). How fast is a benchmark's business, not this test's.
    async def scenario() -> None:
        app = make_app(tmp_path)
        seat = app.location.root / "agents" / "alpha" / "builder"
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            assert app.shown_cells["alpha.builder"][5] == "ctx:71% ⟳2"
            flushes = app.flushes
            reread = []
            reload_seat = app.fleet.reload_seat
            app.fleet.reload_seat = lambda runtime_id, now_ms: (reread.append(runtime_id), reload_seat(runtime_id, now_ms))
            staged = seat / ".harness-context.new"
            staged.write_text(__import__("json").dumps(context_record(
                "builder", "claude", top_fixture.NOW_MS - 1000, usedPercent=88, compactions=3)) + "\n")
            os.rename(staged, seat / "harness-context")
            started = time.monotonic()
            while app.shown_cells["alpha.builder"][5] != "ctx:88% ⟳3" and time.monotonic() - started < 10:
                await asyncio.sleep(0.01)
            assert app.shown_cells["alpha.builder"][5] == "ctx:88% ⟳3"
            assert app.flushes == flushes + 1  # one coalesced flush re-read the one seat
            assert reread == ["alpha.builder"]

    asyncio.run(scenario())


def test_an_idle_view_performs_no_redraw_over_ten_seconds(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            redraws, flushes = app.redraws, app.flushes
            await asyncio.sleep(10)
            assert (app.redraws, app.flushes) == (redraws, flushes)
            assert app.watch_ is not None and app.watch_.active  # idle because inotify sleeps, not because nothing watches
            (app.location.root / "agents" / "alpha" / "builder" / "status").write_text(f"dnd\nv1 {top_fixture.NOW_MS}\n")
            started = time.monotonic()
            while app.redraws == redraws and time.monotonic() - started < 2:
                await asyncio.sleep(0.01)
            assert app.redraws == redraws + 1

    asyncio.run(scenario())


def test_harness_filter_and_attach_without_a_suspendable_terminal(tmp_path: Path) -> None:
    async def scenario() -> None:
        app = make_app(tmp_path)
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            await pilot.press("slash", *"harness:claude", "enter")  # the observed harness of the records
            assert identities(app) == ["reviewer", "builder", "flaky", "sleeper"]
            await pilot.press("slash", "ctrl+u", *"harness:codex", "enter")
            assert identities(app) == []
            await pilot.press("slash", "ctrl+u", "enter", "a")  # the headless driver cannot suspend
            assert f"attach needs a terminal this view can suspend: run st2 attach --catalog {app.location.root} " \
                   "--host alpha alpha.reviewer" in app.status_line

    asyncio.run(scenario())


def test_without_inotify_a_timer_re_reads_and_the_change_still_appears(tmp_path: Path, monkeypatch) -> None:
    import st2.fs.watch

    monkeypatch.setattr(st2.fs.watch, "INotify", None)  # the watch is inert, as on a kernel without inotify

    async def scenario() -> None:
        app = make_app(tmp_path)
        seat = app.location.root / "agents" / "alpha" / "builder"
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            assert app.watch_ is None
            redraws = app.redraws
            (seat / "status").write_text(f"dnd\nv1 {top_fixture.NOW_MS}\n")
            started = time.monotonic()
            while app.shown_cells["alpha.builder"][2] != "dnd" and time.monotonic() - started < 6:
                await asyncio.sleep(0.05)
            assert app.shown_cells["alpha.builder"][2] == "dnd"
            assert app.redraws == redraws + 1

    asyncio.run(scenario())


def test_a_refresh_that_fires_after_the_table_is_gone_draws_nothing(tmp_path: Path) -> None:
    """While the app closes, its screen's widgets go before its timers stop: a refresh the watch
    scheduled then finds no table (the soak caught one ending a test through the real supervisor,
    tests/top/test_unpark.py). It must draw nothing and raise nothing."""
    from st2.top.refresh import Changes

    async def scenario() -> None:
        app = make_app(tmp_path)
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            await app.query_one("#table").remove()
            app.pending.merge(Changes(tasks=True, events=True))
            before = app.flushes
            app.flush()   # as the watch's timer calls it
            assert app.flushes == before + 1

    asyncio.run(scenario())
