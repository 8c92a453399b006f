"""Shared helpers of the Claude driver tests: captures, a seat, record readers."""

from __future__ import annotations

import json
from pathlib import Path

from st2.drivers.claude.seat import Seat

REPO = Path(__file__).resolve().parents[3]
CAPTURES = REPO / "captures" / "claude-code"


def capture(relative: str):
    """One verbatim capture file, decoded."""
    return json.loads((CAPTURES / relative).read_text())


def capture_lines(relative: str) -> list:
    return [json.loads(line) for line in (CAPTURES / relative).read_text().splitlines() if line.strip()]


def make_seat(catalog: Path, host: str = "host", identity: str = "worker") -> Seat:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True, exist_ok=True)
    return Seat(directory, f"{host}.{identity}")


def record(seat: Seat, name: str):
    path = seat.directory / name
    return json.loads(path.read_text()) if path.exists() else None
