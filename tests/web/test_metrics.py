"""The fleet's Prometheus metrics (:mod:`st2.web.metrics`) over the fixed fleet catalog on a
pinned clock: the full exposition as one string, per-seat series by runtime id only, escaping,
the textfile writer, and `st2 metrics --textfile` through the real CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import top_fixture
from st2.base.clock import PinnedWallClock
from st2.catalog.location import CatalogLocation
from st2.records.driver_diagnostic import TELEMETRY_AXES
from st2.top.live import LiveFleet
from st2.web.metrics import METRICS, registry_for, render, write_textfile
from support import REPO, st2_env

EXPOSITION = """\
# HELP st2_seats Seats by harness and observed state word (- without a harness-state record).
# TYPE st2_seats gauge
st2_seats{harness="claude",state="active"} 2.0
st2_seats{harness="claude",state="ended"} 1.0
st2_seats{harness="claude",state="unknown"} 1.0
st2_seats{harness="unknown",state="-"} 1.0
# HELP st2_seats_blocked_on_human Seats whose harness is blocked on a human.
# TYPE st2_seats_blocked_on_human gauge
st2_seats_blocked_on_human 1.0
# HELP st2_seat_context_used_percent The seat's context window fill, percent, as its harness last reported it.
# TYPE st2_seat_context_used_percent gauge
st2_seat_context_used_percent{runtime_id="alpha.builder"} 71.0
st2_seat_context_used_percent{runtime_id="alpha.reviewer"} 12.0
st2_seat_context_used_percent{runtime_id="alpha.sleeper"} 96.0
# HELP st2_seat_compactions Compactions of the seat's current harness session.
# TYPE st2_seat_compactions gauge
st2_seat_compactions{runtime_id="alpha.builder"} 2.0
st2_seat_compactions{runtime_id="alpha.reviewer"} 0.0
st2_seat_compactions{runtime_id="alpha.sleeper"} 5.0
# HELP st2_seat_inbox_unread Unread messages in the seat's inbox.
# TYPE st2_seat_inbox_unread gauge
st2_seat_inbox_unread{runtime_id="alpha.builder"} 2.0
st2_seat_inbox_unread{runtime_id="alpha.flaky"} 0.0
st2_seat_inbox_unread{runtime_id="alpha.reviewer"} 0.0
st2_seat_inbox_unread{runtime_id="alpha.sleeper"} 0.0
st2_seat_inbox_unread{runtime_id="beta.remote"} 0.0
# HELP st2_seat_oldest_unread_age_seconds Age of the seat's oldest unread message, seconds.
# TYPE st2_seat_oldest_unread_age_seconds gauge
st2_seat_oldest_unread_age_seconds{runtime_id="alpha.builder"} 300.0
# HELP st2_seat_deliveries A native seat's delivery ledger entries by phase (in flight or awaiting settling).
# TYPE st2_seat_deliveries gauge
# HELP st2_tasks This host's tasks by trouble word (ok: as it should be).
# TYPE st2_tasks gauge
st2_tasks{trouble="crash-loop"} 1.0
st2_tasks{trouble="ok"} 3.0
# HELP st2_usage_used_percent The account's usage window fill, percent.
# TYPE st2_usage_used_percent gauge
st2_usage_used_percent{window="five_hour"} 42.0
st2_usage_used_percent{window="seven_day"} 63.0
# HELP st2_usage_verdict 1 for the usage verdict in force.
# TYPE st2_usage_verdict gauge
st2_usage_verdict{verdict="OK"} 1.0
# HELP st2_driver_diagnostic_seats Seats by their current driver diagnostic (outcome published: a driver's failure; empty: an untrusted record).
# TYPE st2_driver_diagnostic_seats gauge
st2_driver_diagnostic_seats{driver="",outcome="",reason="malformedRecord",source="",stage="",support="unknown"} 1.0
st2_driver_diagnostic_seats{driver="codex",outcome="published",reason="deliveryRejected",source="promptTransport",stage="delivery",support="supported"} 1.0
"""

PER_SEAT = ("st2_seat_context_used_percent", "st2_seat_compactions", "st2_seat_inbox_unread",
            "st2_seat_oldest_unread_age_seconds")


def build_catalog(tmp_path: Path) -> Path:
    """The fleet view's fixed catalog, with a driver's delivery failure on builder and an
    unreadable diagnostic record on flaky."""
    catalog = top_fixture.build(tmp_path)
    seats = catalog / "agents" / top_fixture.HOST
    (seats / "builder" / "driver-diagnostic").write_text(json.dumps({
        "schema": "st2.driver-diagnostic.v1", "driver": "codex", "stage": "delivery", "reason": "deliveryRejected",
        "source": "promptTransport", "support": "supported", "observedAt": top_fixture.NOW_MS - 4000,
        "recovery": "clearsOnStageRecovery"}) + "\n")
    (seats / "flaky" / "driver-diagnostic").write_text("{not json\n")
    return catalog


def loaded(tmp_path: Path) -> LiveFleet:
    live = LiveFleet(CatalogLocation(build_catalog(tmp_path), top_fixture.HOST),
                     clock=PinnedWallClock(top_fixture.NOW_MS), environ=top_fixture.usage_environment(tmp_path),
                     inventory_reader=top_fixture.inventory_envelope)
    live.load()
    return live


def test_the_exposition_of_a_small_fleet_is_pinned_whole(tmp_path: Path) -> None:
    assert render(loaded(tmp_path)).decode() == EXPOSITION


def test_a_scrape_reads_only_what_the_live_fleet_holds(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    shutil.rmtree(live.location.root)
    assert render(live).decode() == EXPOSITION


def test_the_registry_holds_the_fleet_collector_alone_in_table_order(tmp_path: Path) -> None:
    families = list(registry_for(loaded(tmp_path)).collect())
    assert [family.name for family in families] == list(METRICS)
    assert {family.type for family in families} == {"gauge"}
    assert METRICS["st2_driver_diagnostic_seats"][1] == TELEMETRY_AXES


def test_every_per_seat_series_is_one_seat_labelled_by_its_runtime_id_alone(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    families = {family.name: family for family in text_string_to_metric_families(render(live).decode())}
    for name in PER_SEAT:
        labels = [sample.labels for sample in families[name].samples]
        assert all(set(label) == {"runtime_id"} for label in labels), name
        runtime_ids = [label["runtime_id"] for label in labels]
        assert len(runtime_ids) == len(set(runtime_ids)), name
        assert set(runtime_ids) <= set(live.fleet.seats), name
    assert {sample.labels["runtime_id"] for sample in families["st2_seat_inbox_unread"].samples} == set(live.fleet.seats)
    assert sum(sample.value for sample in families["st2_seats"].samples) == len(live.fleet.seats) == 5


def test_no_seat_name_description_or_path_reaches_the_wire(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    builder = live.fleet.seats["alpha.builder"]
    assert builder.row.name == "Builds things"  # the fixture gives the name the wire must not carry
    text = render(live).decode()
    assert "Builds things" not in text
    assert str(live.location.root) not in text and str(tmp_path) not in text
    assert "/" not in text  # no path at all, the catalog's or a seat's


def test_label_values_pass_through_escaped(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    builder = live.fleet.seats["alpha.builder"]
    builder.row.harness = 'say "hi"\\now\nthen'
    builder.row.identity = 'alpha."odd"\\seat\n'
    builder.row.driver_diagnostic = dataclasses.replace(builder.row.driver_diagnostic, reason='a"b\\c\nd')
    text = render(live).decode()
    assert 'st2_seats{harness="say \\"hi\\"\\\\now\\nthen",state="active"} 1.0\n' in text
    assert 'st2_seat_inbox_unread{runtime_id="alpha.\\"odd\\"\\\\seat\\n"} 2.0\n' in text
    assert 'reason="a\\"b\\\\c\\nd"' in text
    parsed = {family.name: family for family in text_string_to_metric_families(text)}
    assert 'alpha."odd"\\seat\n' in {sample.labels["runtime_id"] for sample in parsed["st2_seat_inbox_unread"].samples}


def test_the_textfile_writer_leaves_the_whole_exposition_and_nothing_else(tmp_path: Path) -> None:
    live = loaded(tmp_path)
    directory = tmp_path / "textfile"
    directory.mkdir()
    target = directory / "st2.prom"
    target.write_text("st2_stale 1\n")
    write_textfile(live, str(target))
    assert target.read_bytes() == render(live)
    assert [path.name for path in directory.iterdir()] == ["st2.prom"]


def test_the_textfile_writer_raises_where_the_machine_refuses(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_textfile(loaded(tmp_path), str(tmp_path / "missing" / "st2.prom"))


def metrics_command(catalog: Path, path: Path) -> list[str]:
    return [sys.executable, "-m", "st2", "--catalog", str(catalog), "--host", "alpha", "metrics", "--textfile", str(path)]


@pytest.mark.process
def test_st2_metrics_writes_the_textfile_and_names_a_refused_path_in_one_line(tmp_path: Path) -> None:
    catalog = build_catalog(tmp_path)
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(top_fixture.NOW_MS), XDG_STATE_HOME=str(tmp_path / "state"),
                  **top_fixture.usage_environment(tmp_path))
    directory = tmp_path / "textfile"
    directory.mkdir()
    target = directory / "st2.prom"
    completed = subprocess.run(metrics_command(catalog, target), env=env, cwd=REPO, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "" and completed.stderr == ""
    assert [path.name for path in directory.iterdir()] == ["st2.prom"]
    text = target.read_text()
    families = {family.name: family for family in text_string_to_metric_families(text)}
    assert list(families) == list(METRICS)
    assert "st2_seats_blocked_on_human 1.0\n" in text
    assert 'st2_seat_oldest_unread_age_seconds{runtime_id="alpha.builder"} 300.0\n' in text
    assert 'st2_usage_used_percent{window="five_hour"} 42.0\n' in text
    assert "Builds things" not in text

    refused = subprocess.run(metrics_command(catalog, tmp_path / "missing" / "st2.prom"), env=env, cwd=REPO,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith("st2 metrics: ") and "missing" in refused.stderr
    assert not (tmp_path / "missing").exists()


def native_seat(tmp_path: Path, monkeypatch) -> tuple[LiveFleet, object]:
    """The fixed fleet plus a Codex seat ``alpha.coder``, this test's state directory, and that
    seat's delivery ledger (empty until a test begins an attempt)."""
    from st2.delivery.ledger import PROFILES, Ledger, ledger_location
    from st2.runtime.scope import RuntimeScope

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    catalog = build_catalog(tmp_path)
    coder = catalog / "agents" / top_fixture.HOST / "coder"
    (coder / "resources" / "inbox").mkdir(parents=True)
    (coder / "agent.kdl").write_text('agent "coder" {\n    codex\n}\n')
    location = CatalogLocation(catalog, top_fixture.HOST)
    path, staging = ledger_location(RuntimeScope(catalog, top_fixture.HOST).directory, "alpha.coder")
    ledger = Ledger(path, staging, PROFILES["codex"], "alpha.coder", "alpha.coder")
    live = LiveFleet(location, clock=PinnedWallClock(top_fixture.NOW_MS),
                     environ=top_fixture.usage_environment(tmp_path), inventory_reader=top_fixture.inventory_envelope)
    return live, ledger


def deliveries(live: LiveFleet) -> list[tuple[dict, float]]:
    text = render(live).decode()
    return [(sample.labels, sample.value) for family in text_string_to_metric_families(text)
            if family.name == "st2_seat_deliveries" for sample in family.samples]


def test_a_native_seats_ledger_entries_are_its_delivery_counts_by_phase(tmp_path: Path, monkeypatch) -> None:
    from st2.delivery.ledger import Event

    live, ledger = native_seat(tmp_path, monkeypatch)
    ledger.begin([f"{top_fixture.NOW_MS - 2000}-aaaaaa.md", f"{top_fixture.NOW_MS - 1000}-bbbbbb.md"], "thread")
    ledger.apply(f"{top_fixture.NOW_MS - 2000}-aaaaaa.md", Event.CONSUMED)
    live.load()
    assert deliveries(live) == [({"runtime_id": "alpha.coder", "phase": "attempted"}, 1.0),
                                ({"runtime_id": "alpha.coder", "phase": "consumed"}, 1.0)]


def test_a_ledger_the_pump_would_refuse_reads_quarantined(tmp_path: Path, monkeypatch) -> None:
    live, ledger = native_seat(tmp_path, monkeypatch)
    ledger.path.parent.mkdir(parents=True)
    ledger.path.write_text("{not a ledger\n")
    live.load()
    assert deliveries(live) == [({"runtime_id": "alpha.coder", "phase": "quarantined"}, 1.0)]


def test_a_ledger_change_reaches_the_live_fleet_through_its_watch(tmp_path: Path, monkeypatch) -> None:
    live, ledger = native_seat(tmp_path, monkeypatch)
    ledger.begin([f"{top_fixture.NOW_MS - 2000}-aaaaaa.md"], "thread")   # the pump has made its directory
    live.load()
    assert live.start_watch()
    try:
        ledger.begin([f"{top_fixture.NOW_MS - 1000}-bbbbbb.md"], "thread")
        assert live.drain() and "alpha.coder" in live.pending.seats
        live.apply()
        assert deliveries(live) == [({"runtime_id": "alpha.coder", "phase": "attempted"}, 2.0)]
    finally:
        live.close()
