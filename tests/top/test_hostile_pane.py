"""The live view's events pane prints a journal line's fields as text: a field holding Rich
markup (a stray closing tag would raise MarkupError and end the view) or an escape sequence shows
literally, escaped by the events' own human form."""

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

pytest.importorskip("textual")

from st2.top.app import TopApp  # noqa: E402

HOSTILE = "[/bold][link=x]\x1b]0;owned\x07"


def test_markup_and_escapes_in_a_journal_line_show_literally_in_the_live_pane(tmp_path: Path, monkeypatch) -> None:
    catalog = top_fixture.build(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name, value in top_fixture.usage_environment(tmp_path, True).items():
        monkeypatch.setenv(name, value)
    scope = RuntimeScope(catalog, "alpha")
    staging = ensure_directory(tmp_path / "staging")
    writer = journal.JournalWriter(journal.directory_of(scope), lambda path, data: publish(path, data, staging))
    writer.resume()
    writer.append([FleetEvent("blocked", "alpha.reviewer", "none", HOSTILE, top_fixture.NOW_MS, {"ask": HOSTILE})])
    shown = "[/bold][link=x]\\x1b]0;owned\\x07"

    async def scenario() -> None:
        app = TopApp(CatalogLocation(catalog, "alpha"), clock=PinnedWallClock(top_fixture.NOW_MS),
                     inventory_reader=lambda location: {"tasks": []})
        async with app.run_test(size=(150, 30)) as pilot:
            await pilot.pause()
            pane = app.query_one("#events")
            assert pane.has_class("shown")
            text = "\n".join(strip.text for strip in pane.render_lines(pane.region.reset_offset))
            assert f"none -> {shown} (ask={shown})" in text, text

    asyncio.run(scenario())
