"""The launch gate over a set of measured builds, and a build the operator admits outside it
(docs/drivers.md §Measured builds): launched, its context stage published, its producer withholding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.drivers.version_gate import EXACT, version_gate
from st2.records import harness_context
from st2.records.harness_context import Reading

SUPPORTED = ("0.151.0", "0.171.0")


@pytest.fixture
def seat(tmp_path: Path) -> Path:
    directory = tmp_path / "catalog" / "agents" / "h" / "cx"
    directory.mkdir(parents=True)
    return directory


def gate(seat: Path, clock, version: str, unmeasured: tuple[str, ...] = ()):
    return version_gate(seat, "codex", clock, version, None, SUPPORTED, "codex-cli", "st2 codex-session",
                        policy=EXACT, unmeasured=unmeasured)


def on_disk(seat: Path) -> dict | None:
    path = seat / "driver-diagnostic"
    return json.loads(path.read_text()) if path.exists() else None


def test_every_measured_build_is_admitted_and_nothing_else(seat: Path, clock, capsys) -> None:
    for build in SUPPORTED:
        assert gate(seat, clock, build)[1] is True and on_disk(seat) is None
    publisher, ok = gate(seat, clock, "0.160.0")
    assert not ok and (on_disk(seat)["stage"], on_disk(seat)["reason"]) == ("versionGate", "unsupportedVersion")
    assert "codex-cli 0.160.0 is not a supported version (supported: 0.151.0, 0.171.0)" in capsys.readouterr().err


def test_an_admitted_unmeasured_build_launches_with_its_context_stage_published(seat: Path, clock, capsys) -> None:
    gate(seat, clock, "0.160.0")  # refused first: the admission clears that refusal
    publisher, ok = gate(seat, clock, "0.160.0", unmeasured=("0.160.0",))
    assert ok
    assert on_disk(seat) == {
        "schema": "st2.driver-diagnostic.v1", "driver": "codex", "stage": "context", "reason": "unmeasuredBuild",
        "source": "versionProbe", "producerVersion": "0.160.0", "support": "unsupported",
        "observedAt": clock.wall_ms(), "recovery": "clearsOnStageRecovery"}
    assert ("codex-cli 0.160.0 is not a measured build (measured: 0.151.0, 0.171.0); admitted by catalog.kdl "
            "admit-unmeasured, so no context reading is published") in capsys.readouterr().err
    # Another unmeasured build is still refused; a measured one clears the predecessor's stage.
    assert gate(seat, clock, "0.161.0", unmeasured=("0.160.0",))[1] is False
    assert gate(seat, clock, "0.160.0", unmeasured=("0.160.0",))[1] is True
    assert gate(seat, clock, "0.151.0", unmeasured=("0.160.0",))[1] is True
    assert on_disk(seat) is None


def test_a_withheld_writer_publishes_nothing(seat: Path, clock) -> None:
    reading = Reading(used_tokens=9942, window_tokens=200000, used_percent=4.971)
    withheld = harness_context.Writer(seat, "h.oc", "opencode", "token", clock, withheld=True)
    assert withheld.publish(reading) is False
    assert withheld.publish(None, harness_context.CompactionEdge(trigger="unknown")) is False
    assert not (seat / "harness-context").exists()
    assert harness_context.Writer(seat, "h.oc", "opencode", "token", clock).publish(reading) is True
