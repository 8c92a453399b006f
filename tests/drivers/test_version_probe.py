"""The version probe asks each harness build once (st2/drivers/version_probe.py): real
``--version`` executables counting their own runs, the real cache file and its lock."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

from st2.drivers.codex.diagnostics import probe_version as codex_probe
from st2.drivers.omp.session import probe_version as omp_probe
from st2.drivers.opencode.api import probe_version as opencode_probe
from st2.drivers.version_probe import SCHEMA


@pytest.fixture
def state(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "st2" / "cache" / "harness-builds.json"


def harness(directory: Path, output: str, status: int = 0, delay: float = 0.0) -> Path:
    """An executable answering ``--version`` with ``output`` and ``status``, appending a line to
    ``runs`` beside it each time it is asked."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "harness"
    path.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo run >> "{directory}/runs"
        sleep {delay}
        printf '%s\\n' '{output}'
        exit {status}
        """))
    path.chmod(0o755)
    return path


def runs(directory: Path) -> int:
    path = directory / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_build_is_asked_once_and_a_replaced_build_again(tmp_path: Path, state: Path) -> None:
    build = harness(tmp_path / "bin", "1.18.33")
    environment = {"PATH": f"{build.parent}:/usr/bin:/bin"}
    assert opencode_probe("harness", environment) == ("1.18.33", None)   # through PATH
    assert opencode_probe(str(build), environment) == ("1.18.33", None)  # the same build by its path
    assert runs(build.parent) == 1
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert json.loads(state.read_text())["schema"] == SCHEMA
    harness(tmp_path / "bin", "1.18.34")                                  # replaced in place
    assert opencode_probe("harness", environment) == ("1.18.34", None)
    assert runs(build.parent) == 2


def test_a_failed_probe_is_never_kept_and_says_what_it_looked_for(tmp_path: Path, state: Path) -> None:
    build = harness(tmp_path / "bin", "codex-cli 0.171.0", status=1)
    environment = {"PATH": "/usr/bin:/bin"}
    expected = (None, f"{build} --version printed no codex-cli version (exit 1)")
    assert codex_probe(str(build), environment) == expected
    assert codex_probe(str(build), environment) == expected
    assert runs(build.parent) == 2
    assert codex_probe(str(tmp_path / "missing"), environment)[1].startswith(f"cannot run {tmp_path / 'missing'} --version:")


def test_omp_s_version_on_stderr_is_read_and_a_malformed_cache_is_replaced(tmp_path: Path, state: Path) -> None:
    state.parent.mkdir(parents=True)
    state.write_text("{not json")
    build = tmp_path / "bin" / "omp"
    build.parent.mkdir()
    build.write_text(f'#!/bin/sh\necho run >> "{build.parent}/runs"\necho "omp/18.2.3" >&2\nexit 3\n')
    build.chmod(0o755)
    assert omp_probe(str(build), {"PATH": "/usr/bin:/bin"}) == ("18.2.3", None)
    assert omp_probe(str(build), {"PATH": "/usr/bin:/bin"}) == ("18.2.3", None)
    assert runs(build.parent) == 1
    assert list(json.loads(state.read_text())["builds"].values()) == ["18.2.3"]


def test_launches_of_one_build_at_once_probe_it_once(tmp_path: Path, state: Path) -> None:
    build = harness(tmp_path / "bin", "1.18.33", delay=0.5)
    program = ("import sys\nfrom st2.drivers.opencode.api import probe_version\n"
               "print(probe_version(sys.argv[1], {'PATH': '/usr/bin:/bin'}))\n")
    launches = [subprocess.Popen([sys.executable, "-c", program, str(build)], stdout=subprocess.PIPE, text=True,
                                 env={**os.environ}) for _ in range(6)]
    answers = [launch.communicate(timeout=60)[0].strip() for launch in launches]
    assert answers == ["('1.18.33', None)"] * 6
    assert runs(build.parent) == 1


def test_a_fifo_or_a_symlink_at_the_cache_neither_blocks_nor_is_followed(tmp_path: Path, state: Path) -> None:
    build = harness(tmp_path / "bin", "1.18.33")
    state.parent.mkdir(parents=True)
    os.mkfifo(state)
    assert opencode_probe(str(build), {"PATH": "/usr/bin:/bin"}) == ("1.18.33", None)
    assert stat.S_ISREG(state.lstat().st_mode)                       # replaced by a regular cache
    state.unlink()
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("kept\n")
    state.symlink_to(elsewhere)
    assert opencode_probe(str(build), {"PATH": "/usr/bin:/bin"}) == ("1.18.33", None)
    assert elsewhere.read_text() == "kept\n" and not state.is_symlink()
