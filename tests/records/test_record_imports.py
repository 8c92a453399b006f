"""Record modules sit on hot paths (hooks, the status-line tee): reading and writing every record
loads only the standard library and st2's own modules — never click, pydantic, filelock or
psutil."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support import REPO

HEAVY = ("click", "pydantic", "filelock", "psutil")

PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from st2.base.clock import Clock
    from st2.records import driver_diagnostic, harness_context, harness_state, status

    seat = Path(sys.argv[1])
    now = Clock().wall_ms()
    status.write(seat, "busy", Clock())
    status.read_file(seat / "status", now)
    harness_context.Writer(seat, "host.worker", "claude", "token", Clock()).publish(
        harness_context.Reading(used_percent=12.0))
    harness_context.read_file(seat / "harness-context", now)
    harness_state.Writer(seat, "host.worker", "claude", Clock(), pty_session="p").observe("idle")
    harness_state.read_file(seat / "harness-state", now)
    driver_diagnostic.read_file(seat / "driver-diagnostic", now)
    print(" ".join(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[2:]))))
    """
)


@pytest.mark.process
def test_reading_and_writing_every_record_loads_no_heavy_module(catalog: Path) -> None:
    seat = catalog / "agents" / "host" / "worker"
    seat.mkdir(parents=True)
    result = subprocess.run([sys.executable, "-c", PROBE, str(seat), *HEAVY], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


@pytest.mark.process
def test_the_probe_sees_a_heavy_module_when_one_is_loaded(catalog: Path) -> None:
    result = subprocess.run([sys.executable, "-c", "import sys, click; print(' '.join(sorted("
                             "{n.split('.')[0] for n in sys.modules} & set(sys.argv[1:]))))", *HEAVY],
                            cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "click"
