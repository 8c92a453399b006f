"""`st2 up` says what is wrong with ``catalog.kdl`` (process tier, issue 31): `--once` on stderr
with a non-zero exit; a running supervisor once per change, woken by the edit itself. A running
supervisor survives a catalog rewritten with unbounded durations: it names each problem once,
leaves the seat whose declaration broke running as it was, and holds archival (which would
otherwise run on the default archive-after) until catalog.kdl validates again."""

from __future__ import annotations

import os

import pytest

from supervisor_support import poll_for

pytestmark = pytest.mark.process

DAY_MS = 86_400_000
T0 = 1_788_000_000_000
TYPO = 'catalog {{\n    archive-after "{}"\n    notify {{\n        on "blokced"\n        argv "true"\n    }}\n}}\n'
TYPO_ERROR = "catalog.kdl:4:12: error[invalid-value]: `on` names no event kind 'blokced'"
SLEEPER = '    argv "sleep" "600"'


def publish(fleet, text: str) -> None:
    """Replace catalog.kdl by rename, as the catalog writers do (no torn read)."""
    staged = fleet.base / "catalog.kdl.tmp"
    staged.write_text(text)
    os.replace(staged, fleet.catalog / "catalog.kdl")


def up_once(fleet, now_ms: int = T0):
    fleet.env["ST2_CLOCK_WALL_MS"] = str(now_ms)
    return fleet.st2("up", "--once")


def test_up_once_names_a_catalog_declaration_that_does_not_validate(fleet) -> None:
    publish(fleet, TYPO.format("7d"))
    result = up_once(fleet)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result
    assert f"st2 up: error: {TYPO_ERROR}" in result.stderr
    assert "st2 up: archive step held until catalog.kdl validates" in result.stderr
    publish(fleet, TYPO.format("7d").replace("blokced", "blocked"))
    result = up_once(fleet)
    assert result.returncode == 0 and "catalog.kdl" not in result.stderr, result


def test_archival_waits_while_catalog_kdl_does_not_validate(fleet) -> None:
    # Archival is off ("0"); a typo elsewhere in the file must not turn it on at the default 7d.
    publish(fleet, TYPO.format("0"))
    gone = fleet.seat("gone", '    desired-state "retired" reason="done"\n    argv "true"')
    up_once(fleet, T0)
    held = up_once(fleet, T0 + 8 * DAY_MS)
    assert "archive step held until catalog.kdl validates" in held.stderr and "archived" not in held.stderr, held
    assert gone.is_dir()
    publish(fleet, TYPO.format("7d").replace("blokced", "blocked"))
    up_once(fleet, T0 + 8 * DAY_MS)
    released = up_once(fleet, T0 + 16 * DAY_MS)
    assert "archived h.gone (retired past archive-after)" in released.stderr, released
    assert not gone.exists()


def test_a_running_supervisor_survives_unbounded_durations_and_says_each_problem_once(fleet, listener) -> None:
    fleet.seat("a", SLEEPER)
    supervisor = fleet.up("--interval", "60s")
    poll_for(lambda: "h.a" in fleet.running(), lambda: f"h.a launched; log: {fleet.log()}", timeout=30)
    pid = fleet.running()["h.a"][0]

    # The edit itself wakes a pass (not the 60 s timer), which names the problem.
    publish(fleet, 'catalog {\n    archive-after "' + "9" * 5000 + '"\n}\n')
    catalog_error = 'st2 up: error: catalog.kdl:2:19: error[invalid-value]: archive-after "99999'
    poll_for(lambda: catalog_error in fleet.log(), lambda: f"the catalog.kdl error; log: {fleet.log()}", timeout=15)
    broken_seat = '    argv "sleep" "600"\n    restart { delay "' + "9" * 400 + 's" }'
    fleet.seat("a", broken_seat)
    seat_error = "st2 up: error: agents/h/a/agent.kdl:3:21: error[restart-invalid]: restart `delay` "
    poll_for(lambda: seat_error in fleet.log(), lambda: f"the seat's error; log: {fleet.log()}", timeout=15)

    # More passes (each rewrite of the broken seat wakes one) repeat neither line.
    for _ in range(3):
        before = listener.passes()
        fleet.seat("a", broken_seat)
        poll_for(lambda: listener.passes() > before, "a pass after the rewrite", timeout=15)
    log = fleet.log()
    assert supervisor.poll() is None, log
    assert "Traceback" not in log and "OverflowError" not in log, log
    assert (log.count(catalog_error), log.count(seat_error)) == (1, 1), log
    assert log.count("archive step held until catalog.kdl validates") == 1, log
    assert fleet.running()["h.a"][0] == pid, "the seat whose declaration broke was not left running as it was"

    # A different problem in catalog.kdl is a change: said once too.
    publish(fleet, TYPO.format("7d"))
    poll_for(lambda: f"st2 up: error: {TYPO_ERROR}" in fleet.log(), lambda: f"the typo; log: {fleet.log()}", timeout=15)

    # Fixed, the supervisor carries on with the same task and says no more errors.
    for fix in (lambda: publish(fleet, TYPO.format("7d").replace("blokced", "blocked")),
                lambda: fleet.seat("a", SLEEPER)):
        before = listener.passes()
        fix()
        poll_for(lambda: listener.passes() > before, "a pass after the fix", timeout=15)
    settled = len(fleet.log())
    before = listener.passes()
    fleet.seat("a", SLEEPER)
    poll_for(lambda: listener.passes() > before, "a pass on the fixed catalog", timeout=15)
    assert "error:" not in fleet.log()[settled:], fleet.log()
    assert supervisor.poll() is None and fleet.running()["h.a"][0] == pid, fleet.log()
