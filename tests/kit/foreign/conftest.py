from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from foreign_support import Foreign  # noqa: E402


@pytest.fixture
def foreign(tmp_path: Path) -> Foreign:
    return Foreign(tmp_path)
