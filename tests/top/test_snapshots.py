"""Snapshot tests (pytest-textual-snapshot; the SVGs are committed under
``tests/top/__snapshots__/``) of the fixed catalog: the default view (blocked on a human first),
sorted by identity, the parked seat's detail pane, stale records, and a narrow terminal.
Regenerate after an intended change with ``pytest tests/top/test_snapshots.py --snapshot-update``."""

from __future__ import annotations

from pathlib import Path

import pytest

import top_fixture
from st2.catalog.location import CatalogLocation
from st2.base.clock import PinnedWallClock

pytest.importorskip("textual")

from st2.top.app import TopApp  # noqa: E402

WIDE = (130, 16)


def fixed_app(tmp_path: Path) -> TopApp:
    catalog = top_fixture.build(tmp_path)
    return TopApp(CatalogLocation(catalog, top_fixture.HOST), clock=PinnedWallClock(top_fixture.NOW_MS),
                  environ=top_fixture.usage_environment(tmp_path), inventory_reader=top_fixture.inventory_envelope,
                  watch=False)


def test_snapshot_blocked_on_a_human_first(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(tmp_path), terminal_size=WIDE)


def test_snapshot_normal_sorted_by_identity(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(tmp_path), terminal_size=WIDE, press=["o", "o"])


def test_snapshot_parked_seat_detail(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(tmp_path), terminal_size=(130, 30), press=["down", "down", "enter"])


def test_snapshot_stale_records(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(tmp_path), terminal_size=WIDE, press=["slash", *"sleeper", "enter"])


def test_snapshot_narrow_terminal(snap_compare, tmp_path: Path) -> None:
    assert snap_compare(fixed_app(tmp_path), terminal_size=(60, 16))
