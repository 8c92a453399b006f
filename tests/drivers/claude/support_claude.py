"""Shared helpers of the Claude driver tests: captures, a seat, record readers."""

from __future__ import annotations

import json
from pathlib import Path

from support import make_seat, record  # noqa: F401 (the Claude tests import them from here)

REPO = Path(__file__).resolve().parents[3]
CAPTURES = REPO / "captures" / "claude-code"


def capture(relative: str):
    """One verbatim capture file, decoded."""
    return json.loads((CAPTURES / relative).read_text())


def capture_lines(relative: str) -> list:
    return [json.loads(line) for line in (CAPTURES / relative).read_text().splitlines() if line.strip()]
