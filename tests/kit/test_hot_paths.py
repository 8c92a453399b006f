"""The kit's per-commit gate (`st2 check gate-tamper`, run by the pre-commit hook) is a hot path:
through the real entry point it loads the standard library and st2's kit and knob modules only,
never click, pydantic, psutil or filelock."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from st2.entry import HOT_PATHS

pytestmark = pytest.mark.process

FORBIDDEN = ("click", "pydantic", "psutil", "filelock", "sdnotify", "inotify_simple", "ckdl")
PROBE = """
import io, json, sys
from st2.entry import main
sys.stdout = io.StringIO()
sys.stderr = io.StringIO()
status = main(sys.argv[1:])
sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("words", [["check", "gate-tamper"], ["check", "wait-probe", "report"]], ids=" ".join)
def test_the_kit_hot_paths_load_no_third_party_module(words, tmp_path) -> None:
    assert tuple(words[:2]) in HOT_PATHS
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = subprocess.run([sys.executable, "-c", PROBE, *words], capture_output=True, text=True, check=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")})
    probe = json.loads(result.stdout)
    assert probe["status"] in (0, 1)  # it really ran (clean, or report with no trials)
    assert [name for name in probe["modules"] if name.split(".")[0] in FORBIDDEN] == []
    assert all(name == "st2" or name.startswith(("st2.entry", "st2.hot_paths", "st2.argv", "st2.kit", "st2.knobs", "st2.delegation", "st2.fs", "st2.process")) for name in probe["modules"] if name.startswith("st2"))


def test_the_probe_can_fail(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-c", PROBE, "agents", "--help"], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "click" in json.loads(result.stdout)["modules"]
