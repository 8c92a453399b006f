"""Every benchmark keeps working: each ``benchmarks/*.py`` (found by glob, so a benchmark added
without a working smoke fails here) runs with ``--smoke`` — its own code path at a tiny size —
from the repository root within :data:`BOUND_SECONDS`, exits 0, and prints as its last line
``RESULT key=value …`` with at least one key naming a ratio to its anchor. A benchmark broken at
import, or whose helpers moved under it, fails here rather than when someone next measures."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import warnings

import pytest

from support import REPO, st2_env

pytestmark = [pytest.mark.process, pytest.mark.long]

BENCHMARKS = sorted(path.name for path in (REPO / "benchmarks").glob("*.py"))
BOUND_SECONDS = 240
# After the bound: SIGINT first, so the benchmark's own cleanup (its finally blocks: stopping what
# it started, removing its temp directories) runs; SIGKILL of its process group only after this.
CLEANUP_SECONDS = 30
RESULT_LINE = re.compile(r"^RESULT( [a-z0-9_]+=\S+)+$")
# The multihost tier's rule (tests/multihost/conftest.py): no syncthing skips loudly, unless
# scripts/dev test (or CI) requires the sync engines.
SYNCTHING_REQUIRED = "ST2_MULTIHOST_REQUIRED"


def run_smoke(name: str) -> tuple[int, str, str]:
    """``python benchmarks/<name> --smoke`` in its own process group: exit status, stdout, stderr.
    Past the bound it is interrupted, then killed, and the test fails naming the bound."""
    process = subprocess.Popen([sys.executable, str(REPO / "benchmarks" / name), "--smoke"], cwd=REPO,
                               env=st2_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=CLEANUP_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        pytest.fail(f"benchmarks/{name} --smoke ran past {BOUND_SECONDS} s\nstdout:\n{stdout[-3000:]}\n"
                    f"stderr:\n{stderr[-3000:]}")
    return process.returncode, stdout, stderr


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_benchmark_smoke_runs_and_ends_on_a_result_line_with_a_ratio(name):
    if name == "multihost.py":
        from multihost.syncthing_pair import available

        if not available():
            if os.environ.get(SYNCTHING_REQUIRED) == "1":
                pytest.fail(f"{SYNCTHING_REQUIRED}=1 and benchmarks/multihost.py needs a `syncthing` binary")
            warnings.warn("benchmarks/multihost.py smoke SKIPPED: no `syncthing` binary", pytest.PytestWarning)
            pytest.skip("SKIPPED LOUDLY: benchmarks/multihost.py needs a `syncthing` binary on PATH")
    status, stdout, stderr = run_smoke(name)
    context = f"benchmarks/{name} --smoke exited {status}\nstdout:\n{stdout[-3000:]}\nstderr:\n{stderr[-3000:]}"
    assert status == 0, context
    lines = stdout.splitlines()
    last = lines[-1] if lines else ""
    assert RESULT_LINE.match(last), f"the last line is not a RESULT line: {last!r}\n{context}"
    keys = [pair.split("=", 1)[0] for pair in last.split()[1:]]
    assert any("ratio" in key for key in keys), f"no ratio to an anchor among {keys}\n{context}"
