"""A hook payload nested 1,000 deep is malformed input like any other, through the real CLI: every
Claude hook and status-line verb answers it exactly as it answers a payload that is not JSON at
all (for a guard, its documented degraded verdict), never with a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import st2_env

pytestmark = pytest.mark.process

DEEP_ARRAY = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000
NOT_JSON = "this is not json"

VERBS = {
    "dispatch-guard": ("hook", "dispatch-guard"),
    "subagent-stop-liveness": ("hook", "subagent-stop-liveness"),
    "budget-guard": ("hook", "budget-guard"),
    "claude-observe": ("driver", "claude-observe", "--event", "Stop"),
    "claude-statusline": ("driver", "claude-statusline", "--identity", "alpha.w"),
    "claude-statusline-arm": ("driver", "claude-statusline-arm"),
}


def answer(verb: tuple[str, ...], payload: str, tmp_path: Path):
    # Run in the temp dir: the liveness hook's stop log is relative to the working directory.
    env = st2_env(tmp_path / "catalog", HOME=str(tmp_path / "home"), CLAUDE_PROJECT_DIR=str(tmp_path))
    return subprocess.run([sys.executable, "-m", "st2", *verb], input=payload, capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)


@pytest.mark.parametrize("payload", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize("name", list(VERBS))
def test_a_deeply_nested_payload_is_answered_as_any_malformed_payload(name: str, payload: str,
                                                                       tmp_path: Path) -> None:
    (tmp_path / "catalog" / "agents").mkdir(parents=True)
    deep = answer(VERBS[name], payload, tmp_path)
    plain = answer(VERBS[name], NOT_JSON, tmp_path)
    assert "Traceback" not in deep.stderr and "RecursionError" not in deep.stderr, deep.stderr
    assert (deep.returncode, deep.stdout, deep.stderr.replace("this is not json", "")) == (
        plain.returncode, plain.stdout, plain.stderr.replace("this is not json", ""))
