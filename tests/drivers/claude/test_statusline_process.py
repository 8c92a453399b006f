"""Status-line slot chaining (docs/drivers.md §Status-line tee), proved on the real tee run as a process: its stdout bytes
are exactly the operator renderer's line, or empty in every degraded arm — each of which carries
its positive evidence on stderr, since an empty stdout is also what a tee that crashed would
leave. Recording and the usage snapshot are independent of the rendering."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support_claude import CAPTURES, REPO, make_seat, record

pytestmark = pytest.mark.process

SCRIPT = REPO / "hooks" / "claude-statusline.sh"
VENV_BIN = Path(sys.executable).parent
MID_SESSION = (CAPTURES / "2.1.328/statusline/02-statusline-stdin.json").read_bytes()
WITH_RATE_LIMITS = (CAPTURES / "docs-2.1.239/statusline/statusline-stdin.docs-full-schema.json").read_bytes()
ENV_NAME = "$ST_CLAUDE_STATUSLINE_RENDERER"
FILE_NAME = "~/.claude/statusline-renderer.json"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    directory = tmp_path / "home"
    (directory / ".claude").mkdir(parents=True)
    return directory


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8",
           "DELEGATION_KIT_USAGE_FILE": str(home / "usage.txt"),
           "DELEGATION_KIT_KNOB_FILE": "", "XDG_CONFIG_HOME": str(home / ".config")}
    env.pop("DELEGATION_KIT_KNOB_FILE")
    env.update(extra)
    return env


def tee(catalog: Path, env: dict[str, str], data: bytes = MID_SESSION, identity: str = "host.worker"):
    return subprocess.run([sys.executable, "-m", "st2", "driver", "claude-statusline", "--identity", identity,
                           "--catalog", str(catalog)], input=data, capture_output=True, env=env, timeout=60)


def renderer_file(home: Path, command: str) -> None:
    (home / ".claude" / "statusline-renderer.json").write_text(
        json.dumps({"schema": "dotfiles.claude-statusline-renderer.v1", "command": command}))


def test_stdout_is_exactly_the_renderers_line_and_it_receives_the_payload(catalog, home, tmp_path) -> None:
    make_seat(catalog)
    received = tmp_path / "received.json"
    script = tmp_path / "render.sh"
    script.write_text(f"#!/bin/sh\ncat > '{received}'\nprintf '\\033[1mOpus\\033[0m 3%%  $0.04'\n")
    script.chmod(0o755)
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER=str(script)))
    assert result.returncode == 0
    assert result.stdout == b"\x1b[1mOpus\x1b[0m 3%  $0.04"
    assert received.read_bytes() == MID_SESSION
    assert result.stderr == b""


def test_the_variable_wins_and_the_file_is_never_also_run(catalog, home, tmp_path) -> None:
    make_seat(catalog)
    marker = tmp_path / "file-renderer-ran"
    renderer_file(home, f"touch '{marker}'; echo from-file")
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER="echo from-variable"))
    assert result.stdout == b"from-variable\n"
    assert not marker.exists()
    # The non-firing twin: with the variable empty, the file is the answer (and it did run).
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER=""))
    assert result.stdout == b"from-file\n"
    assert marker.exists()


def test_no_renderer_resolving_leaves_stdout_empty_and_names_both_sources(catalog, home) -> None:
    seat = make_seat(catalog)
    result = tee(catalog, environment(home))
    assert (result.returncode, result.stdout) == (0, b"")
    stderr = result.stderr.decode()
    assert ENV_NAME in stderr and FILE_NAME in stderr and "does not exist" in stderr
    assert record(seat, "harness-context")["usedTokens"] == 28030  # recording is unaffected
    # An empty command in the file falls through the same way, and says so.
    renderer_file(home, "  ")
    result = tee(catalog, environment(home))
    assert result.stdout == b"" and 'no non-empty string "command"' in result.stderr.decode()


def test_a_renderer_that_fails_after_partial_output_leaves_stdout_empty(catalog, home) -> None:
    make_seat(catalog)
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER="printf 'half a li'; exit 3"))
    assert (result.returncode, result.stdout) == (0, b"")
    assert "the renderer from $ST_CLAUDE_STATUSLINE_RENDERER exited with status 3" in result.stderr.decode()


def test_a_renderer_that_is_not_executable_leaves_stdout_empty(catalog, home, tmp_path) -> None:
    make_seat(catalog)
    script = tmp_path / "render.sh"
    script.write_text("#!/bin/sh\necho never\n")
    script.chmod(0o644)
    renderer_file(home, str(script))
    result = tee(catalog, environment(home))
    assert result.stdout == b""
    stderr = result.stderr.decode()
    assert f"the renderer from {FILE_NAME}" in stderr and "126 (found but not executable)" in stderr


def test_the_rendered_line_survives_a_recording_failure(catalog, home) -> None:
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER="echo still-here"), identity="host.nobody")
    assert result.stdout == b"still-here\n"
    assert "recording failed (no seat 'host.nobody'" in result.stderr.decode()
    # Unparseable payload: nothing recorded, the renderer still gets the bytes and renders.
    result = tee(catalog, environment(home, ST_CLAUDE_STATUSLINE_RENDERER="wc -c"), data=b"{not json")
    assert result.stdout.strip() == b"9" and b"recording failed" in result.stderr


def test_the_record_carries_claudes_numbers_under_the_wrapper_session(catalog, home) -> None:
    seat = make_seat(catalog)
    tee(catalog, environment(home, ST2_CLAUDE_SESSION="wrapper-token", ST2_CLAUDE_SESSION_SEQ="4"))
    written = record(seat, "harness-context")
    assert written["observedAtMs"] <= written["writtenAtMs"]
    written["observedAtMs"] = written["writtenAtMs"] = 0
    assert json.dumps(written, separators=(",", ":")) == (
        '{"schema":"st2.harness-context.v1","agent":"host.worker","harness":"claude","usedTokens":28030,'
        '"windowTokens":1000000,"usedPercent":3.0,"model":"claude-opus-5-5","costUsd":0.041620000000000004,'
        '"sessionTotalTokens":null,"rateLimits":{"fiveHour":null,"sevenDay":null},"compactions":0,'
        '"lastCompactionMs":null,"lastCompactionTrigger":null,"incarnation":"wrapper-token",'
        '"observedAtMs":0,"writtenAtMs":0}')


def test_rate_limits_write_the_usage_snapshot_and_their_absence_writes_nothing(catalog, home) -> None:
    make_seat(catalog)
    usage = home / "usage.txt"
    tee(catalog, environment(home))  # a payload without rate_limits (API-key session)
    assert not usage.exists()
    before = int(__import__("time").time())
    tee(catalog, environment(home), data=WITH_RATE_LIMITS)
    after = int(__import__("time").time())
    text = usage.read_text()
    stamp = re.search(r"^updated_at=(\d+)$", text, re.M)
    assert stamp and before <= int(stamp.group(1)) <= after
    assert text.replace(f"updated_at={stamp.group(1)}", "updated_at=T") == (
        "five_hour_used_pct=23.5\nfive_hour_resets_at=1738425600\nupdated_at=T\n"
        "seven_day_used_pct=41.2\nseven_day_resets_at=1738857600\n")
    # Account and tier come from the local account config, as the poll producer reads them.
    (home / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {"subscriptionType": "max"}}))
    (home / ".claude.json").write_text(json.dumps({"oauthAccount": {"accountUuid": "acct-1"}}))
    tee(catalog, environment(home), data=WITH_RATE_LIMITS)
    assert usage.read_text().splitlines()[3:] == [
        "seven_day_used_pct=41.2", "seven_day_resets_at=1738857600", "account=acct-1", "tier=max"]


def script_run(env: dict[str, str], data: bytes) -> tuple[int, bytes, bytes]:
    """Run the shell entry, writing ``data`` ourselves so an undrained stdin would raise EPIPE."""
    process = subprocess.Popen(["/bin/sh", str(SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    process.stdin.write(data)  # raises BrokenPipeError if the script exits without draining
    process.stdin.close()
    stdout, stderr = process.stdout.read(), process.stderr.read()
    process.wait(timeout=60)
    return process.returncode, stdout, stderr


def test_the_script_without_st2_on_path_drains_stdin_and_prints_nothing(catalog, home) -> None:
    make_seat(catalog)
    assert subprocess.run(["/bin/sh", "-c", "command -v st2"], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True).returncode != 0
    big = MID_SESSION * 400  # well past a pipe's buffer
    env = environment(home, PATH="/usr/bin:/bin", ST_AGENT="host.worker", ST_ROOT=str(catalog),
                      ST_CLAUDE_STATUSLINE_RENDERER="echo rendered")
    assert script_run(env, big) == (0, b"", b"")
    # No identity: the same silent drain, even with st2 on PATH.
    env = environment(home, PATH=f"{VENV_BIN}:/usr/bin:/bin", ST_ROOT=str(catalog),
                      ST_CLAUDE_STATUSLINE_RENDERER="echo rendered")
    assert script_run(env, big) == (0, b"", b"")
    # The firing twin: identity, catalog and st2 present — the tee runs and chains.
    env["ST_AGENT"] = "host.worker"
    assert script_run(env, MID_SESSION) == (0, b"rendered\n", b"")
