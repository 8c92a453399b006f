"""The header judges the snapshot by the verdict rule without running the refresh command (no
network from a view) and without appending a sample; the sparkline reads the history."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import top_fixture
from st2.top.usage_view import SAMPLING_OFF, read_usage
from st2.kit.usage.verdict import verdict


def environment(tmp_path: Path) -> tuple[dict[str, str], Path]:
    environ = top_fixture.usage_environment(tmp_path)
    marker = tmp_path / "refreshed"
    knobs = tmp_path / "knobs"
    knobs.write_text(f"DELEGATION_KIT_REFRESH_CMD[] = touch\nDELEGATION_KIT_REFRESH_CMD[] = {marker}\n"
                     "DELEGATION_KIT_REFRESH_MIN_AGE = 0\n")
    environ["DELEGATION_KIT_KNOB_FILE"] = str(knobs)
    return environ, marker


def test_the_header_reads_both_windows_and_the_verdict_without_refreshing_or_sampling(tmp_path: Path) -> None:
    environ, marker = environment(tmp_path)
    history = Path(environ["DELEGATION_KIT_USAGE_HISTORY"])
    before = history.read_bytes()
    view = read_usage(environ, top_fixture.NOW)
    assert (view.verdict_word, view.five_hour_pct, view.seven_day_pct, view.sampling) == ("OK", 42.0, 63.0, True)
    assert view.spark == [round(index * 1.4, 1) for index in range(30)]
    assert not marker.exists()
    assert history.read_bytes() == before


@pytest.mark.process
def test_the_same_configuration_does_refresh_and_sample_from_the_verdict_itself(tmp_path: Path) -> None:
    """The negative control: the knobs above really arm the refresh and the sampling."""
    environ, marker = environment(tmp_path)
    history = Path(environ["DELEGATION_KIT_USAGE_HISTORY"])
    before = history.read_bytes()
    verdict([], environ, top_fixture.NOW, io.StringIO())
    assert marker.exists()
    assert history.read_bytes() != before


def test_without_sampling_the_header_says_how_to_turn_it_on(tmp_path: Path) -> None:
    view = read_usage(top_fixture.usage_environment(tmp_path, sampling=False), top_fixture.NOW)
    assert (view.sampling, view.spark) == (False, [])
    assert SAMPLING_OFF == ("sampling off: set DELEGATION_KIT_USAGE_HISTORY=<file> (env or knob file) so "
                            "`st2 usage verdict` records history for the sparkline")


def test_an_unreadable_snapshot_reads_as_stale_with_unknown_windows(tmp_path: Path) -> None:
    environ = top_fixture.usage_environment(tmp_path)
    Path(environ["DELEGATION_KIT_USAGE_FILE"]).write_text("garbage\n")
    view = read_usage(environ, top_fixture.NOW)
    assert (view.verdict_word, view.five_hour_pct, view.seven_day_pct) == ("STALE", None, None)
