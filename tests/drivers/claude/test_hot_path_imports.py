"""The tee and the hook observer are hot paths: through the real entry point's dispatch table
they load the standard library, the record modules they write and their own driver modules —
no click, pydantic, psutil, filelock, and not even subprocess (the renderer is posix_spawn'd)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from st2.entry import HOT_PATHS

pytestmark = pytest.mark.process

FORBIDDEN = ("click", "pydantic", "psutil", "filelock", "sdnotify", "inotify_simple", "ckdl", "subprocess")
ALLOWED_ST2 = ("st2.entry", "st2.hot_paths", "st2.clock", "st2.drivers", "st2.records", "st2.catalog.layout", "st2.fs", "st2.usage", "st2.knobs")

PROBE = """
import json, sys
from st2.entry import HOT_PATHS
module_name, function_name = HOT_PATHS[tuple(sys.argv[1:3])].split(":")
import importlib
getattr(importlib.import_module(module_name), function_name)
if sys.argv[3] == "run":
    import io, os
    sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[4].encode()))
    sys.stdout = io.TextIOWrapper(io.BytesIO())
    sys.stderr = io.TextIOWrapper(io.BytesIO())
    getattr(importlib.import_module(module_name), function_name)(sys.argv[5:])
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
print(json.dumps(sorted(sys.modules)))
"""


def loaded(*words: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", PROBE, *words], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


@pytest.mark.parametrize("subcommand", [("driver", "claude-statusline"), ("driver", "claude-observe")],
                         ids=" ".join)
def test_the_entry_imports_no_third_party_module(subcommand, catalog, tmp_path, monkeypatch) -> None:
    assert subcommand in HOT_PATHS
    (catalog / "agents" / "host" / "worker").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ST_CLAUDE_STATUSLINE_RENDERER", "true")
    arguments = ["--identity", "host.worker", "--catalog", str(catalog)]
    if subcommand[1] == "claude-observe":
        arguments += ["--event", "PreCompact"]
    payload = json.dumps({"session_id": "s", "trigger": "manual", "context_window": {"context_window_size": 1},
                          "rate_limits": {"five_hour": {"used_percentage": 1, "resets_at": 2}}})
    for modules in (loaded(*subcommand, "import"), loaded(*subcommand, "run", payload, *arguments)):
        assert [name for name in modules if name.split(".")[0] in FORBIDDEN] == []
        st2_modules = [name for name in modules if name.startswith("st2")]
        assert all(name in ("st2", "st2.catalog") or name.startswith(ALLOWED_ST2) for name in st2_modules), st2_modules
    assert (catalog / "agents" / "host" / "worker" / "harness-context").exists()  # the run really recorded


def test_the_probe_can_fail() -> None:
    modules = loaded("usage", "poll", "import")
    assert "st2.usage.poll" in modules  # the probe sees what a hot path loads
    code = "import json, sys; import st2.cli.driver; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "click" in json.loads(result.stdout)
