"""`u` in `st2 top` unparks a crash-looped task through the real unpark path, and the real
supervisor relaunches it; the view sees the park appear and clear through its inotify watch on
the runtime scope (process tier: a real `st2 up`)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from st2.catalog.location import CatalogLocation
from supervisor_support import HOST, Fleet

pytest.importorskip("textual")

from st2.top.app import TopApp  # noqa: E402

pytestmark = pytest.mark.process

FAIL_POLICY = 'restart { attempts 1; interval "60s"; mode "fail"; }'


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2t-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    shutil.rmtree(base, ignore_errors=True)


async def until(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def test_u_unparks_a_crash_looped_task_through_the_real_supervisor(fleet, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(fleet.state))
    fixed = fleet.base / "flaky.fixed"
    fleet.seat("flaky", f'''    {FAIL_POLICY}
    argv "sleep" "600"
    exec "job" {{ argv "sh" "-c" "test -f {fixed} && exec sleep 600; exit 3"; }}''')
    fleet.up("--interval", "1s")

    async def scenario() -> None:
        app = TopApp(CatalogLocation(fleet.catalog, HOST), environ={"HOME": str(fleet.base)})
        async with app.run_test(size=(150, 20)) as pilot:
            await pilot.pause()
            await until(lambda: "job:crash-loop" in app.shown_cells.get("h.flaky", ("",) * 9)[8],
                        f"the park to show; cells {app.shown_cells}; log {fleet.log()}")
            fixed.write_text("")
            await pilot.press("u")
            assert "unpark requested for h.flaky.job" in app.status_line, app.status_line
            await until(lambda: fleet.running().get("h.flaky.job"), f"the relaunch; log {fleet.log()}")
            await until(lambda: "crash-loop" not in app.shown_cells["h.flaky"][8],
                        f"the view to see the park clear; cells {app.shown_cells['h.flaky']}")
            await pilot.press("u")
            assert "h.flaky has no parked task" in app.status_line

    asyncio.run(scenario())
