"""Which strings can be each harness's session identity (st2/drivers/session_ids.py): the ids the
captures show are accepted, and an option, a path or any other existing file is not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.drivers import session_ids


@pytest.mark.parametrize("value", ["cf42a7fc-c928-4f61-b941-d2d313bd605a",     # captures/claude-code hook input
                                   "01a2289d-39d9-7860-bbe4-541e55c7ab5d"])    # captures/lab/codex thread/start
def test_a_captured_claude_or_codex_id_is_a_uuid(value: str) -> None:
    assert session_ids.is_uuid(value)


@pytest.mark.parametrize("value", ["--dangerously-skip-permissions", "-p", "", "cf42a7fc-c928-4f61-b941-d2d313bd605a\n",
                                   "CF42A7FC-C928-4F61-B941-D2D313BD605A", "cf42a7fc-c928-4f61-b941-d2d313bd605", None, 7])
def test_anything_else_is_not(value) -> None:
    assert not session_ids.is_uuid(value)


def test_an_opencode_id_is_ses_and_base62() -> None:
    assert session_ids.is_opencode_session_id("ses_dd761d587ffeD73MSIa931GXoj")  # captures/lab/opencode
    for value in ("ses_", "ses_../x", "ses_a b", "--session", "ses_" + "a" * 201, "x_dd761d587ffe"):
        assert not session_ids.is_opencode_session_id(value), value


def test_the_session_directories_are_the_ones_the_captures_show() -> None:
    assert session_ids.pi_sessions_directory({"HOME": "/home/user/lab/pihome"}, "/home/user/lab/piproj") == (
        "/home/user/lab/pihome/.pi/agent/sessions/--home-user-lab-piproj--")
    assert session_ids.omp_sessions_directory({"HOME": "/home/user/lab/omp_home"}, "/home/user/lab/omp_proj") == (
        "/home/user/lab/omp_home/.omp/agent/sessions/-home-user-lab-omp_proj")
    assert session_ids.pi_sessions_directory({"HOME": "/h", "PI_CODING_AGENT_DIR": "/a"}, "/p") == "/a/sessions/--p--"


def test_omp_keeps_a_cwd_where_its_own_session_paths_put_it(tmp_path: Path) -> None:
    # omp 18.2.3's session-paths.ts: below $HOME "-<relative>", else below $TMPDIR "-tmp-<relative>",
    # else the legacy "--<cwd>--" (the lab's workspaces under pytest's temp dir were kept there).
    home, temp = tmp_path / "home", tmp_path / "temp"
    (home / "proj").mkdir(parents=True)
    (temp / "work").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    root = f"{home}/.omp/agent/sessions"
    environment = {"HOME": str(home), "TMPDIR": str(temp)}
    assert session_ids.omp_sessions_directories(environment, str(home / "proj"))[0] == f"{root}/-proj"
    assert session_ids.omp_sessions_directories(environment, str(home))[0] == f"{root}/-"
    assert session_ids.omp_sessions_directories(environment, str(temp / "work"))[0] == f"{root}/-tmp-work"
    legacy = "--" + str(tmp_path / "elsewhere").lstrip("/").replace("/", "-") + "--"
    assert session_ids.omp_sessions_directories(environment, str(tmp_path / "elsewhere"))[0] == f"{root}/{legacy}"
    for directory in session_ids.omp_sessions_directories(environment, str(home / "proj")):
        assert directory.startswith(root + "/") and "/" not in directory[len(root) + 1:]
    other = session_ids.omp_sessions_directories(environment, str(temp / "work"))
    assert not set(other) & set(session_ids.omp_sessions_directories(environment, str(home / "proj")))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    directory = tmp_path / "sessions" / "--proj--"
    directory.mkdir(parents=True)
    return directory


def test_a_session_file_inside_the_directory_is_accepted_and_a_missing_one_too(store: Path) -> None:
    (store / "2026-11-29T18-45-16-800Z_01a228a0.jsonl").write_text("{}\n")
    assert session_ids.is_session_file_in(str(store / "2026-11-29T18-45-16-800Z_01a228a0.jsonl"), str(store))
    # Gone from the store: the wrapper's loud fallback says so (resume_unavailable), not the shape.
    assert session_ids.is_session_file_in(str(store / "gone.jsonl"), str(store))


def test_any_other_file_is_refused(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.jsonl"
    outside.write_text("{}\n")
    os.symlink(outside, store / "link.jsonl")
    (store / "directory.jsonl").mkdir()
    (store / "notes.txt").write_text("x")
    deeper = store / "sub"
    deeper.mkdir()
    (deeper / "s.jsonl").write_text("{}\n")
    for value in ("/etc/passwd", str(outside), str(store / "link.jsonl"), str(store / "directory.jsonl"),
                  str(store / "notes.txt"), str(deeper / "s.jsonl"), str(store / ".." / "--proj--" / ".." / "x.jsonl"),
                  "relative.jsonl", "--session", str(store / "a\0.jsonl")):
        assert not session_ids.is_session_file_in(value, str(store)), value


def test_a_symlink_inside_the_store_to_a_file_inside_it_is_that_file(store: Path) -> None:
    (store / "real.jsonl").write_text("{}\n")
    os.symlink(store / "real.jsonl", store / "alias.jsonl")
    assert session_ids.is_session_file_in(str(store / "alias.jsonl"), str(store))
