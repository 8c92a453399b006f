"""`st2 top` shows the recent fleet events: the last five of this host's journal in the plain
frame, and a pane in the live view that follows the journal as it grows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import top_fixture
from st2.catalog.location import CatalogLocation
from st2.base.clock import PinnedWallClock
from st2.events import journal
from st2.events.event import FleetEvent
from st2.fs.atomic import ensure_directory, publish
from st2.runtime.scope import RuntimeScope
from support import run_st2, st2_env

pytest.importorskip("textual")

from st2.top.app import TopApp  # noqa: E402


def journal_writer(catalog: Path, state: Path) -> journal.JournalWriter:
    scope = RuntimeScope(catalog, "alpha", state_dir=state / "st2")
    staging = ensure_directory(state / "staging")
    writer = journal.JournalWriter(journal.directory_of(scope), lambda path, data: publish(path, data, staging))
    writer.resume()
    return writer


def blocked(seat: str, to: str, at: int) -> FleetEvent:
    return FleetEvent("blocked", seat, "human" if to == "none" else "none", to, at,
                      {"state": "active", "ask": "permission" if to == "human" else "none", "since": at})


@pytest.mark.process
def test_once_ends_with_the_last_five_journaled_events(tmp_path: Path) -> None:
    catalog = top_fixture.build(tmp_path)
    state = tmp_path / "state"
    writer = journal_writer(catalog, state)
    for index in range(7):
        writer.append([blocked("alpha.reviewer", "human" if index % 2 == 0 else "none", top_fixture.NOW_MS - 7000 + index * 1000)])
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(top_fixture.NOW_MS), XDG_STATE_HOME=str(state),
                  **top_fixture.usage_environment(tmp_path, True))
    # The runtime scope the supervisor would use: st2 top finds it the same way.
    completed = run_st2("top", "--once", "--host", "alpha", env=env)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[-6:] == [
        "recent events:",
        "  2026-08-29T10:41:35.000Z #3 blocked alpha.reviewer none -> human (state=active ask=permission since=1788000095000)",
        "  2026-08-29T10:41:36.000Z #4 blocked alpha.reviewer human -> none (state=active ask=none since=1788000096000)",
        "  2026-08-29T10:41:37.000Z #5 blocked alpha.reviewer none -> human (state=active ask=permission since=1788000097000)",
        "  2026-08-29T10:41:38.000Z #6 blocked alpha.reviewer human -> none (state=active ask=none since=1788000098000)",
        "  2026-08-29T10:41:39.000Z #7 blocked alpha.reviewer none -> human (state=active ask=permission since=1788000099000)",
    ]


def test_the_live_pane_appears_with_the_first_event_and_follows_the_journal(tmp_path: Path, monkeypatch) -> None:
    catalog = top_fixture.build(tmp_path)
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    for name, value in top_fixture.usage_environment(tmp_path, True).items():
        monkeypatch.setenv(name, value)
    location = CatalogLocation(catalog, "alpha")
    scope = RuntimeScope(catalog, "alpha")

    async def scenario() -> None:
        app = TopApp(location, clock=PinnedWallClock(top_fixture.NOW_MS), inventory_reader=lambda location: {"tasks": []})
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            pane = app.query_one("#events")
            assert not pane.has_class("shown")  # nothing journaled: no pane
            staging = ensure_directory(tmp_path / "staging")
            writer = journal.JournalWriter(journal.directory_of(scope), lambda path, data: publish(path, data, staging))
            writer.resume()
            writer.append([blocked("alpha.reviewer", "human", top_fixture.NOW_MS)])
            for _ in range(200):
                await pilot.pause(0.05)
                if pane.has_class("shown"):
                    break
            assert pane.has_class("shown")
            assert app.shown_events == ["recent events:", "  2026-08-29T10:41:40.000Z #1 blocked alpha.reviewer none -> "
                                        "human (state=active ask=permission since=1788000100000)"]
            writer.append([blocked("alpha.reviewer", "none", top_fixture.NOW_MS + 1000)])
            for _ in range(200):
                await pilot.pause(0.05)
                if len(app.shown_events) == 3:
                    break
            assert [line.split(" ")[3] for line in app.shown_events[1:]] == ["#1", "#2"]

    asyncio.run(scenario())
