"""The supervisor's archive step (docs/catalog.md §Retirement archives itself):
measured from the first observation in .st2/retired-observed.json, reconciled to exactly the
retired seats, at most 25 seats per pass, disabled by archive-after "0", and skipped (never
waited for) while the authoring lock is held."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from st2.authoring.auto_archive import archive_step
from st2.catalog.location import CatalogLocation
from st2.fs.lock import RecordLock

DAY_MS = 86_400_000
T0 = 1_788_000_000_000
RETIRED = '    desired-state "retired" reason="done"\n    argv "true"'


def seat(catalog: Path, identity: str, body: str = RETIRED) -> Path:
    directory = catalog / "agents" / "h" / identity
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')
    return directory


@pytest.fixture
def location(tmp_path) -> CatalogLocation:
    (tmp_path / "c" / "agents" / "h").mkdir(parents=True)
    return CatalogLocation(tmp_path / "c", "h")


def step(location, now_ms, recorded=()):
    return archive_step(location, now_ms, lambda: list(recorded))


def ledger(location) -> dict:
    return json.loads(location.paths.retired_observed.read_text())


def test_a_pass_records_a_fresh_retirement_and_archives_nothing(location):
    directory = seat(location.root, "gone")
    seat(location.root, "live", '    argv "true"')
    report = step(location, T0)
    assert report.archived == [] and directory.is_dir()
    assert location.paths.retired_observed.read_text() == (
        '{\n  "schema": "st2.catalog-retired-observed.v1",\n  "hosts": {\n    "h": {\n'
        f'      "gone": {T0}\n    }}\n  }}\n}}\n')
    assert step(location, T0 + 7 * DAY_MS - 1).archived == []
    assert ledger(location)["hosts"] == {"h": {"gone": T0}}


def test_a_retirement_older_than_the_grace_period_is_archived_with_a_tombstone(location):
    directory = seat(location.root, "gone")
    step(location, T0)
    report = step(location, T0 + 7 * DAY_MS)
    assert report.archived == ["h.gone"] and not directory.exists()
    tombstone = json.loads((location.paths.archive_root / "h" / "gone.tombstone.json").read_text())
    assert (tombstone["archivedAt"], tombstone["reason"]) == (T0 + 7 * DAY_MS, "done")
    assert ledger(location)["hosts"] == {}


def test_the_grace_period_follows_archive_after(location):
    (location.root / "catalog.kdl").write_text('catalog {\n    archive-after "1h"\n}\n')
    directory = seat(location.root, "gone")
    step(location, T0)
    assert step(location, T0 + 3_599_999).archived == [] and directory.is_dir()
    assert step(location, T0 + 3_600_000).archived == ["h.gone"]


def test_archive_after_zero_disables_the_pass_entirely(location):
    (location.root / "catalog.kdl").write_text('catalog {\n    archive-after "0"\n}\n')
    directory = seat(location.root, "gone")
    assert step(location, T0).skipped == "disabled"
    assert step(location, T0 + 365 * DAY_MS).skipped == "disabled"
    assert directory.is_dir() and not location.paths.control.exists()


def test_the_step_keeps_the_verbs_eligibility(location):
    seat(location.root, "lead")
    seat(location.root, "worker", '    supervisor "lead"\n    argv "true"')
    seat(location.root, "recorded")
    step(location, T0)
    report = step(location, T0 + 8 * DAY_MS, recorded=["h.recorded"])
    assert report.archived == []
    assert report.refused == ["h.lead [supervisor-referenced] still supervises h.worker",
                              "h.recorded [runtime-record-present] retirement is incomplete: a launch record "
                              "remains for h.recorded"]


def test_a_pass_archives_at_most_twenty_five_seats_and_drains_the_rest_next_pass(location):
    for index in range(30):
        seat(location.root, f"s{index:02d}")
    step(location, T0)
    first = step(location, T0 + 8 * DAY_MS)
    assert first.archived == [f"h.s{index:02d}" for index in range(25)]
    assert len(ledger(location)["hosts"]["h"]) == 5
    second = step(location, T0 + 8 * DAY_MS)
    assert second.archived == [f"h.s{index:02d}" for index in range(25, 30)]
    assert list((location.root / "agents" / "h").iterdir()) == []


def test_un_retiring_a_seat_inside_the_grace_period_restarts_its_clock(location):
    directory = seat(location.root, "gone")
    step(location, T0)
    seat(location.root, "gone", '    argv "true"')                 # un-retired on day 3
    step(location, T0 + 3 * DAY_MS)
    assert ledger(location)["hosts"] == {}
    seat(location.root, "gone")                                    # retired again on day 4
    step(location, T0 + 4 * DAY_MS)
    assert ledger(location)["hosts"] == {"h": {"gone": T0 + 4 * DAY_MS}}
    assert step(location, T0 + 8 * DAY_MS).archived == [] and directory.is_dir()
    assert step(location, T0 + 11 * DAY_MS).archived == ["h.gone"]


def test_a_contended_authoring_lock_skips_the_pass_instead_of_blocking_it(location):
    directory = seat(location.root, "gone")
    step(location, T0)
    holder = RecordLock(location.paths.catalog_authoring_lock)
    with holder:
        started = time.monotonic()
        report = step(location, T0 + 8 * DAY_MS)
        assert time.monotonic() - started < 1.0
    assert report.skipped.startswith("the catalog authoring lock is held")
    assert directory.is_dir()
    assert step(location, T0 + 8 * DAY_MS).archived == ["h.gone"]


# -- through the real supervisor --------------------------------------------------------------

def up_once(fleet, now_ms: int):
    fleet.env["ST2_CLOCK_WALL_MS"] = str(now_ms)
    result = fleet.st2("up", "--once")
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.process
def test_st2_up_archives_thirty_retired_seats_25_then_5_across_two_passes(fleet):
    for index in range(30):
        fleet.seat(f"s{index:02d}", RETIRED)
    up_once(fleet, T0)
    assert len(list((fleet.catalog / "agents" / "h").iterdir())) == 30
    first = up_once(fleet, T0 + 7 * DAY_MS)
    assert first.stderr.count("(retired past archive-after)") == 25
    assert len(list((fleet.catalog / "agents" / "h").iterdir())) == 5
    second = up_once(fleet, T0 + 7 * DAY_MS)
    assert second.stderr.count("(retired past archive-after)") == 5
    assert list((fleet.catalog / "agents" / "h").iterdir()) == []
    graph = json.loads(fleet.st2("catalog", "graph", "--json").stdout)
    assert len(graph["archived"]) == 30 and graph["complete"] is True


@pytest.mark.process
def test_st2_up_skips_the_archive_step_while_the_authoring_lock_is_held(fleet):
    directory = fleet.seat("gone", RETIRED)
    up_once(fleet, T0)
    (fleet.catalog / ".st2").mkdir(exist_ok=True)
    with RecordLock(fleet.catalog / ".st2" / "catalog-authoring.lock"):
        started = time.monotonic()
        held = up_once(fleet, T0 + 8 * DAY_MS)
        assert time.monotonic() - started < 8, "the supervisor waited for the authoring lock"
    assert "archive step skipped: the catalog authoring lock is held" in held.stderr
    assert directory.is_dir()
    released = up_once(fleet, T0 + 8 * DAY_MS)
    assert "archived h.gone (retired past archive-after)" in released.stderr
    assert not directory.exists()
