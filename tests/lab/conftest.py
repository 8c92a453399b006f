"""Fixtures of the lab tier: a started fake model and a throwaway lab directory.

The lab's helper modules sit flat in this folder; it is put on sys.path here (appended, so
their names never shadow another folder's modules).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

LAB_DIR = Path(__file__).resolve().parent
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab  # noqa: E402


@pytest.fixture
def fake_model():
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab.create(tmp_path / "lab")
