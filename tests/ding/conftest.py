"""DING tests import their helpers (``ding_support``) from this folder."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    # Appended, not prepended: flat helper names never shadow another folder's.
    sys.path.append(HERE)
