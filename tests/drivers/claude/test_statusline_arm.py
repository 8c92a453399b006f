"""The delegation kit's status-line arm: every group over a verbatim 2.1.328 payload, each
degradation, the inbox counters, the seat's unread count, and its selection as the tee's
renderer (run in process), never the tee's fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support_claude import REPO, capture, make_seat
from st2.drivers.claude import statusline_arm
from st2.records import harness_context

NOW = 1_795_978_000
PAYLOAD = capture("2.1.328/statusline/02-statusline-stdin.json")


def payload(**changes) -> dict:
    value = json.loads(json.dumps(PAYLOAD))
    value["rate_limits"] = {"five_hour": {"used_percentage": 41, "resets_at": NOW + 4400},
                            "seven_day": {"used_percentage": 83.5, "resets_at": NOW + 300_000}}
    value.update(changes)
    return value


def environ(tmp_path: Path, *knob_lines: str, **extra: str) -> dict[str, str]:
    knobs = tmp_path / "delegation-config.knobs"
    knobs.write_text("".join(line + "\n" for line in knob_lines))
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), "DELEGATION_KIT_KNOB_FILE": str(knobs),
            "NO_COLOR": "1", **extra}


def render(value, env, options=None, cwd="/") -> str:
    return statusline_arm.render(value, env, options or {}, cwd, NOW)


def test_every_group_over_the_payload(tmp_path) -> None:
    assert render(payload(), environ(tmp_path)) == "Opus 5.5 (medium) | ctx 3% [----------] | 5h 41% 1h13m | 7d 83.5% 3d11h"


def test_color_levels_are_self_contained_ansi(tmp_path) -> None:
    env = environ(tmp_path)
    del env["NO_COLOR"]
    assert render(payload(), env) == (
        "Opus 5.5 (medium) | \x1b[32mctx 3% [----------]\x1b[0m | \x1b[32m5h 41%\x1b[0m \x1b[2m1h13m\x1b[0m"
        " | \x1b[31m7d 83.5%\x1b[0m \x1b[2m3d11h\x1b[0m")


def test_degradations_drop_only_their_own_group(tmp_path) -> None:
    env = environ(tmp_path)
    bare = payload()
    del bare["rate_limits"], bare["effort"]
    bare["context_window"] = {"used_percentage": None}
    assert render(bare, env) == "Opus 5.5"  # no snapshot file either: the usage groups drop
    assert render(None, env) == ""
    assert render({"model": "not an object", "context_window": {"used_percentage": 72.5}}, env) == "ctx 72.5% [#######---]"


def test_the_usage_snapshot_serves_when_the_payload_has_no_rate_limits(tmp_path) -> None:
    usage = tmp_path / "usage.txt"
    usage.write_text(f"five_hour_used_pct=12\nfive_hour_resets_at={NOW + 59}\nupdated_at={NOW}\n")
    value = payload()
    del value["rate_limits"]
    env = environ(tmp_path, f"DELEGATION_KIT_USAGE_FILE = {usage}")
    assert render(value, env) == "Opus 5.5 (medium) | ctx 3% [----------] | 5h 12% 1m"
    # a malformed knob file costs the usage group, never the line
    (tmp_path / "delegation-config.knobs").write_text("garbage\n")
    assert render(value, env) == "Opus 5.5 (medium) | ctx 3% [----------]"


def test_inbox_counters_count_bullets_and_render_nothing_for_zero_or_absent(tmp_path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "gaps.md").write_text("# Gaps\n- one\n- two\n  - nested is not a bullet\n-not either\n")
    (project / "todo.md").write_text("nothing here\n")
    env = environ(tmp_path, "DELEGATION_KIT_STATUSLINE_INBOXES[] = G=gaps.md", "DELEGATION_KIT_STATUSLINE_INBOXES[] = T=todo.md",
                  "DELEGATION_KIT_STATUSLINE_INBOXES[] = M=missing.md", f"DELEGATION_KIT_STATUSLINE_INBOXES[] = A={project}/gaps.md")
    value = payload(workspace={"project_dir": str(project)})
    assert render(value, env).endswith(" | 7d 83.5% 3d11h | G2 A2")
    assert render(value, environ(tmp_path)).endswith(" | 7d 83.5% 3d11h")


def test_the_seat_adds_compactions_and_its_unread_count(tmp_path) -> None:
    catalog = tmp_path / "catalog"
    seat = make_seat(catalog)
    inbox, archive = seat.directory / "resources" / "inbox", seat.directory / "resources" / "archive"
    inbox.mkdir(parents=True)
    archive.mkdir(parents=True)
    for name in ("1700000000001-aaaaaa.md", "1700000000002-bbbbbb.md", "1700000000003-cccccc.md"):
        (inbox / name).write_text("---\n---\nhi\n")
    (archive / "1700000000003-cccccc.md").write_text("---\n---\nhi\n")  # a receipt settles it
    (inbox / "not-a-message.txt").write_text("x")
    # a harness-context record counting two compactions, written through the tee's own path
    env = environ(tmp_path, ST2_CLAUDE_SESSION="s1", ST_CLAUDE_STATUSLINE_RENDERER="printf ok")
    subprocess.run([sys.executable, "-m", "st2", "driver", "claude-statusline", "--identity", "host.worker", "--catalog", str(catalog)],
                   input=json.dumps(PAYLOAD).encode(), env=env | {"PATH": os.environ["PATH"]}, check=True, capture_output=True, cwd=REPO)
    path = seat.directory / harness_context.RECORD_NAME
    record = harness_context.decode(path.read_bytes())._replace(compactions=2)
    path.write_bytes(harness_context.encode(record))
    options = {"--identity": "host.worker", "--catalog": str(catalog)}
    assert render(payload(), env, options) == "Opus 5.5 (medium) | ctx 3% [----------] c2 | 5h 41% 1h13m | 7d 83.5% 3d11h | inbox 2"
    assert render(payload(), env, {"--identity": "host.nobody", "--catalog": str(catalog)}).endswith("3d11h")


test_the_seat_adds_compactions_and_its_unread_count = pytest.mark.process(test_the_seat_adds_compactions_and_its_unread_count)


@pytest.mark.parametrize(("command", "argv"), [
    ("st2 driver claude-statusline-arm", []),
    ("/opt/bin/st2 driver claude-statusline-arm --identity host.w --catalog /c", ["--identity", "host.w", "--catalog", "/c"]),
    ("st2 driver claude-statusline-arm | tee /tmp/x", None),
    ("st2 driver claude-statusline", None),
    ("printf ok", None),
    ("st2 driver claude-statusline-arm --identity=$ST_AGENT", None),
])
def test_selection_recognizes_only_the_plain_spelling(command, argv) -> None:
    assert statusline_arm.selected(command) == argv


def tee(tmp_path: Path, **extra: str) -> subprocess.CompletedProcess:
    catalog = tmp_path / "catalog"
    make_seat(catalog)
    env = environ(tmp_path, ST2_CLAUDE_SESSION="s1", PATH=os.environ["PATH"], **extra)
    return subprocess.run([sys.executable, "-m", "st2", "driver", "claude-statusline", "--identity", "host.worker", "--catalog", str(catalog)],
                          input=json.dumps(payload()).encode(), env=env, capture_output=True, cwd=REPO)


@pytest.mark.process
def test_selected_as_the_tees_renderer_it_renders_and_is_never_the_fallback(tmp_path) -> None:
    selected = tee(tmp_path, ST_CLAUDE_STATUSLINE_RENDERER="st2 driver claude-statusline-arm")
    assert selected.returncode == 0
    line = selected.stdout.decode()
    assert line.startswith("Opus 5.5 (medium) | ctx 3% [----------] | 5h 41% ") and line.endswith("\n")
    unselected = tee(tmp_path)
    assert (unselected.returncode, unselected.stdout) == (0, b"")
    assert b"no status-line renderer resolved" in unselected.stderr


@pytest.mark.process
def test_the_arm_runs_standalone_too(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "st2", "driver", "claude-statusline-arm"], input=json.dumps(PAYLOAD).encode(),
                            env=environ(tmp_path, PATH=os.environ["PATH"]), capture_output=True, cwd=REPO)
    assert (result.returncode, result.stdout) == (0, b"Opus 5.5 (medium) | ctx 3% [----------]\n")
    bad = subprocess.run([sys.executable, "-m", "st2", "driver", "claude-statusline-arm", "extra"], input=b"{}",
                         env=environ(tmp_path, PATH=os.environ["PATH"]), capture_output=True, cwd=REPO)
    assert (bad.returncode, bad.stderr) == (2, b"claude-statusline-arm: unexpected argument: extra\n"
                                               b"usage: st2 driver claude-statusline-arm [--identity <host.identity>] [--catalog DIR]\n")


HOT_PROBE = """
import io, json, sys
from st2.drivers.claude import statusline
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))
sys.stdout = io.TextIOWrapper(io.BytesIO())
statusline.main(sys.argv[2:])
sys.stdout.seek(0)
line = sys.stdout.buffer.read().decode()
sys.stdout = sys.__stdout__
print(json.dumps({"line": line, "modules": sorted(sys.modules)}))
"""


@pytest.mark.process
def test_the_tee_with_the_arm_selected_loads_no_third_party_module(tmp_path) -> None:
    catalog = tmp_path / "catalog"
    make_seat(catalog)
    arm = f"st2 driver claude-statusline-arm --identity host.worker --catalog {catalog}"
    env = environ(tmp_path, ST2_CLAUDE_SESSION="s1", ST_CLAUDE_STATUSLINE_RENDERER=arm, PATH=os.environ["PATH"])
    result = subprocess.run([sys.executable, "-c", HOT_PROBE, json.dumps(payload()), "--identity", "host.worker", "--catalog", str(catalog)],
                            env=env, capture_output=True, text=True, cwd=REPO, check=True)
    probe = json.loads(result.stdout)
    assert probe["line"].startswith("Opus 5.5 (medium) | ctx 3% ")  # the arm rendered, in process
    forbidden = ("click", "pydantic", "psutil", "filelock", "sdnotify", "inotify_simple", "ckdl", "subprocess")
    assert [name for name in probe["modules"] if name.split(".")[0] in forbidden] == []
