"""The hooks and the reader are hot paths: standard library and st2's own record modules only.
Each is imported in a fresh interpreter and the modules it loaded are inspected."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from st2.entry import HOT_PATHS

pytestmark = pytest.mark.process

FORBIDDEN = ("click", "pydantic", "psutil", "filelock", "sdnotify", "inotify_simple", "ckdl", "subprocess")

PROBE = """
import json, sys
from st2.entry import HOT_PATHS
module_name, function_name = HOT_PATHS[tuple(sys.argv[1:3])].split(":")
import importlib
getattr(importlib.import_module(module_name), function_name)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize(
    "subcommand",
    [("hook", "subagent-stop-liveness"), ("hook", "dispatch-guard"), ("check", "producer-liveness")],
    ids=lambda words: " ".join(words),
)
def test_the_entry_imports_no_third_party_module(subcommand) -> None:
    assert subcommand in HOT_PATHS
    result = subprocess.run([sys.executable, "-c", PROBE, *subcommand], capture_output=True, text=True, check=True)
    loaded = json.loads(result.stdout)
    assert [name for name in loaded if name.split(".")[0] in FORBIDDEN] == []
    st2_modules = [name for name in loaded if name.startswith("st2")]
    assert all(name == "st2" or name.startswith(("st2.delegation", "st2.clock", "st2.entry", "st2.process", "st2.drivers.claude.hooks")) or name in ("st2.drivers", "st2.drivers.claude", "st2.hot_paths", "st2.knobs", "st2.fs", "st2.fs.read") for name in st2_modules), st2_modules


def test_the_probe_can_fail() -> None:
    # The click CLI itself would be caught by the same inspection.
    code = "import json, sys; import st2.cli; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert "click" in loaded
