"""The Claude driver's other entry points as processes: `st2 driver claude replay`, the hook
script `claude-observe.sh` and the delegation shim `claude-hook.sh`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support_claude import CAPTURES, REPO, make_seat, record

pytestmark = pytest.mark.process

VENV_BIN = Path(sys.executable).parent


def st2(*words: str, catalog: Path, data: bytes = b"", env: dict[str, str] | None = None):
    return subprocess.run([sys.executable, "-m", "st2", "--catalog", str(catalog), *words], input=data,
                          capture_output=True, env=env if env is not None else dict(os.environ), timeout=60, cwd=REPO)


def script(name: str, *words: str, env: dict[str, str], data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", str(REPO / "hooks" / name), *words], input=data, capture_output=True,
                          env=env, timeout=60)


def test_replay_feeds_a_captured_hook_sequence_through_the_producers(catalog) -> None:
    seat = make_seat(catalog)
    result = st2("driver", "claude", "replay", str(CAPTURES / "2.1.197/hooks-sequence/_all.jsonl"),
                 "--identity", "host.worker", catalog=catalog)
    assert result.returncode == 0, result.stderr
    rows = result.stdout.decode().splitlines()
    assert len(rows) == 40
    assert rows[0] == '{"line":1,"kind":"hook","event":"SessionStart","written":["harness-state"]}'
    assert rows[12] == '{"line":13,"kind":"hook","event":"PermissionRequest","written":["harness-state"]}'
    assert rows[13] == '{"line":14,"kind":"hook","event":"Notification","written":[]}'
    assert rows[32] == '{"line":33,"kind":"hook","event":"PreCompact","written":["harness-context"]}'
    assert rows[34] == '{"line":35,"kind":"hook","event":"SessionStart","written":[]}'
    assert rows[35] == '{"line":36,"kind":"hook","event":"PostCompact","written":["harness-context"]}'
    state, context = record(seat, "harness-state"), record(seat, "harness-context")
    assert (state["state"], state["blockedOn"], state["ptySession"]) == ("idle", "none", "host.worker")
    assert (context["compactions"], context["lastCompactionTrigger"], context["incarnation"]) == (
        1, "manual", state["incarnation"])


def test_replay_records_a_status_line_capture_and_refuses_an_unknown_seat(catalog) -> None:
    seat = make_seat(catalog)
    capture = CAPTURES / "2.1.328/statusline/02-statusline-stdin.json"
    result = st2("driver", "claude", "replay", str(capture), "--identity", "host.worker", catalog=catalog)
    assert result.stdout == b'{"line":1,"kind":"statusline","event":null,"written":["harness-context"]}\n'
    assert record(seat, "harness-context")["usedTokens"] == 28030
    refused = st2("driver", "claude", "replay", str(capture), "--identity", "host.nobody", catalog=catalog)
    assert (refused.returncode, refused.stdout) == (2, b"")
    assert b"no seat 'host.nobody'" in refused.stderr


def base_env(catalog: Path, path: str, **extra: str) -> dict[str, str]:
    return {"PATH": path, "LANG": "C.UTF-8", "HOME": str(catalog.parent), "ST_AGENT": "host.worker",
            "ST_ROOT": str(catalog), **extra}


def test_the_observe_script_records_silently_and_fails_open(catalog) -> None:
    seat = make_seat(catalog)
    env = base_env(catalog, f"{VENV_BIN}:/usr/bin:/bin")
    payload = (CAPTURES / "2.1.328/hooks/22-SessionStart.json").read_bytes()
    assert script("claude-observe.sh", "SessionStart", env=env, data=payload).stdout == b""
    assert record(seat, "harness-state")["state"] == "idle"
    # Garbage on stdin: nothing recorded, nothing on stdout, exit 0 (never block the harness).
    result = script("claude-observe.sh", "Stop", env=env, data=b"\x00not json")
    assert (result.returncode, result.stdout) == (0, b"")
    assert b"not JSON" in result.stderr
    # Without st2 on PATH: drain and exit 0.
    result = script("claude-observe.sh", "Stop", env=base_env(catalog, "/usr/bin:/bin"), data=payload * 500)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_the_hook_shim_passes_a_delegation_hook_through_and_fails_open_without_st2(catalog, tmp_path) -> None:
    env = base_env(catalog, f"{VENV_BIN}:/usr/bin:/bin", DELEGATION_KIT_USAGE_FILE=str(tmp_path / "absent.txt"),
                   XDG_CONFIG_HOME=str(tmp_path / "config"))
    direct = subprocess.run([str(VENV_BIN / "st2"), "hook", "budget-guard"], input=b"{}", capture_output=True,
                            env=env, timeout=60)
    through = script("claude-hook.sh", "budget-guard", env=env, data=b"{}")
    assert (through.returncode, through.stdout) == (direct.returncode, direct.stdout)
    assert json.loads(through.stdout)["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    result = script("claude-hook.sh", "budget-guard", env=base_env(catalog, "/usr/bin:/bin"), data=b"{}" * 50000)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_driver_help_names_the_claude_commands(catalog) -> None:
    result = st2("driver", "--help", catalog=catalog)
    assert result.returncode == 0
    for name in (b"claude-session", b"claude-observe", b"claude-statusline", b"claude"):
        assert name in result.stdout
