"""The multihost tier: two real Syncthing instances on loopback replicate one catalog between two
hosts, each with its own `st2 up` (tests/multihost/multihost_support.py).

Every test module here is marked ``multihost`` (tests/conftest.py adds ``process``). Without a `syncthing`
binary the tier skips loudly with the reason; under ``scripts/dev test`` (and so in CI, whose
``.ci/run`` runs it), which installs Debian's syncthing and sets ``ST2_MULTIHOST_REQUIRED=1``,
its absence is a failure instead.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
# The mail proofs reuse the fault campaign's stand-in seats and tally (tests/faults/fault_mail.py).
for folder in (HERE, str(Path(HERE).parent / "faults")):
    if folder not in sys.path:
        # Appended, not prepended: flat helper names never shadow another folder's.
        sys.path.append(folder)

from syncthing_pair import available  # noqa: E402

REQUIRED = "ST2_MULTIHOST_REQUIRED"
MISSING = ("the multihost tier needs a `syncthing` binary on PATH (Debian: apt-get install syncthing; "
           "`scripts/dev test` installs it)")


@pytest.fixture(autouse=True)
def _syncthing_present():
    if available():
        return
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(f"{REQUIRED}=1 and {MISSING}", pytrace=False)
    warnings.warn(f"multihost tier SKIPPED: {MISSING}", pytest.PytestWarning)
    pytest.skip(f"SKIPPED LOUDLY: {MISSING}")
