"""The fault campaign's tests import its parts (``fault_*``) from this folder; the benchmark
``benchmarks/faults.py`` imports the same modules and runs them at full size."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    # Appended, not prepended: flat helper names never shadow another folder's.
    sys.path.append(HERE)
