"""The Codex driver tests' helper module sits beside them; put this folder on sys.path
(appended, so its names never shadow another folder's)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.append(HERE)
