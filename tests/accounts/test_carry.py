"""st2.accounts.carry's file handling: the session files a "copy" row names are copied from the old
config location to the new one atomically (a temporary name in the target directory, fsync, a
link that never replaces), never over a different file, only for an id of the harness's shape;
every other case is a one-line reason and nothing written. The lab proofs of the table are
tests/drivers/<harness>/test_account_move_lab.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from st2.accounts import carry as module
from st2.accounts.carry import CARRY, CONFIG_ENV, FILES, HARNESSES, SHAPES, carry

SESSION = "cf42a7fc-c928-4f61-b941-d2d313bd605a"
THREAD = "01a2289d-39d9-7860-bbe4-541e55c7ab5d"
CWD = "/home/user/work/proj.x"
ENCODED = "-home-user-work-proj-x"


def claude_env(location: Path, home: Path | None = None) -> dict:
    return {"HOME": str(home or location.parent / "home"), "CLAUDE_CONFIG_DIR": str(location)}


def codex_env(location: Path) -> dict:
    return {"HOME": str(location.parent / "home"), "CODEX_HOME": str(location)}


def transcript(location: Path, text: str = '{"type":"user","message":"PELICAN"}\n', session: str = SESSION,
               project: str = ENCODED) -> Path:
    path = location / "projects" / project / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def rollout(location: Path, text: str = '{"type":"session_meta"}\n', thread: str = THREAD) -> Path:
    path = location / "sessions" / "2026" / "12" / "05" / f"rollout-2026-12-05T01-15-43-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()) if root.exists() else []


def test_the_table_covers_every_harness_and_each_copy_row_has_its_files_and_its_id_shape() -> None:
    assert tuple(CARRY) == tuple(CONFIG_ENV) == HARNESSES == ("claude", "codex", "opencode", "pi", "omp")
    assert set(CARRY.values()) <= {"native", "copy", None}
    assert {name for name, how in CARRY.items() if how == "copy"} <= set(FILES) & set(SHAPES)
    assert CONFIG_ENV["claude"] == "CLAUDE_CONFIG_DIR" and CONFIG_ENV["codex"] == "CODEX_HOME"
    assert CONFIG_ENV["pi"] == "PI_CODING_AGENT_DIR"


def test_a_claude_transcript_is_copied_to_the_same_place_under_the_new_config_dir(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    source = transcript(old)
    before = os.stat(source)
    assert carry("claude", SESSION, CWD, claude_env(old), claude_env(new)) is None
    target = new / "projects" / ENCODED / f"{SESSION}.jsonl"
    assert files(new) == [f"projects/{ENCODED}/{SESSION}.jsonl"]  # no temporary left behind
    assert target.read_bytes() == source.read_bytes() and source.exists()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert os.stat(target).st_mtime_ns == before.st_mtime_ns
    for directory in (new, new / "projects", new / "projects" / ENCODED):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700


def test_created_directories_are_0700_whatever_the_umask(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    previous = os.umask(0)
    try:
        assert carry("claude", SESSION, CWD, claude_env(old), claude_env(new)) is None
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(new / "projects" / ENCODED).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(new / "projects" / ENCODED / f"{SESSION}.jsonl").st_mode) == 0o600


def test_an_existing_parent_directory_keeps_its_mode(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    new.mkdir(mode=0o755)
    os.chmod(new, 0o755)
    assert carry("claude", SESSION, CWD, claude_env(old), claude_env(new)) is None
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o755


def test_a_codex_rollout_is_copied_under_the_same_dated_path(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    source = rollout(old)
    rollout(old, thread="0f000000-0000-7000-8000-000000000000")  # another thread stays behind
    assert carry("codex", THREAD, CWD, codex_env(old), codex_env(new)) is None
    assert files(new) == [str(source.relative_to(old))]
    assert (new / source.relative_to(old)).read_bytes() == source.read_bytes()


def test_a_location_missing_from_the_environment_is_the_harness_default_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript(home / ".claude")
    new = tmp_path / "b"
    assert carry("claude", SESSION, CWD, {"HOME": str(home)}, claude_env(new)) is None
    assert files(new) == [f"projects/{ENCODED}/{SESSION}.jsonl"]
    assert carry("claude", SESSION, CWD, claude_env(new), {"HOME": str(tmp_path / "other"),
                                                             "CLAUDE_CONFIG_DIR": "~/cfg"}) is None
    assert files(tmp_path / "other" / "cfg") == [f"projects/{ENCODED}/{SESSION}.jsonl"]


def test_the_same_bytes_already_there_is_success_and_nothing_is_rewritten(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    target = transcript(new)
    inode = os.stat(target).st_ino
    assert carry("claude", SESSION, CWD, claude_env(old), claude_env(new)) is None
    assert os.stat(target).st_ino == inode


def test_a_different_file_already_there_is_never_overwritten(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    target = transcript(new, text='{"another":"conversation"}\n')
    reason = carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert reason is not None and "already exists and differs" in reason and "\n" not in reason
    assert target.read_text() == '{"another":"conversation"}\n'
    assert files(new) == [f"projects/{ENCODED}/{SESSION}.jsonl"]


def test_a_symlink_or_directory_in_the_target_s_place_is_refused(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    source = transcript(old)
    target = new / "projects" / ENCODED / f"{SESSION}.jsonl"
    target.parent.mkdir(parents=True)
    target.symlink_to(source)  # even one pointing at the very same bytes
    assert "already exists" in carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert target.is_symlink()


def test_a_missing_source_is_a_reason_and_nothing_is_written(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    (old / "projects").mkdir(parents=True)
    reason = carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert reason == f"claude: no transcript of session {SESSION} for {CWD} under {old / 'projects'}"
    reason = carry("codex", THREAD, CWD, codex_env(old), codex_env(new))
    assert reason == f"codex: no rollout of thread {THREAD} under {old / 'sessions'}"
    assert not new.exists()


def test_a_transcript_of_another_working_directory_is_not_this_seat_s(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old, project="-home-user-elsewhere")
    assert "no transcript" in carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert not new.exists()


def test_several_rollouts_of_one_thread_are_a_reason(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    rollout(old)
    other = old / "sessions" / "2026" / "12" / "06" / f"rollout-2026-12-06T00-00-00-{THREAD}.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text("{}\n")
    assert carry("codex", THREAD, CWD, codex_env(old), codex_env(new)) == (
        f"codex: thread {THREAD} has several rollouts under {old / 'sessions'}")
    assert not new.exists()


@pytest.mark.parametrize("session_id", [
    "../../../etc/passwd", f"../{SESSION}", f"{SESSION}/../../x", SESSION.upper(), f" {SESSION}", f"{SESSION}\n",
    f"/{SESSION}", "*", "", f"{SESSION}.jsonl", f"-{SESSION[1:]}",
])
@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_an_id_not_of_the_harness_s_shape_is_refused_before_any_path_is_made(tmp_path: Path, harness: str,
                                                                            session_id: str) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    rollout(old)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd.jsonl").write_text("root\n")
    environment = claude_env if harness == "claude" else codex_env
    reason = carry(harness, session_id, CWD, environment(old), environment(new))
    assert reason == f"{harness}: {session_id!r} is not a {harness} session id; nothing copied"
    assert not new.exists()


@pytest.mark.parametrize("harness", [name for name, how in CARRY.items() if how is None])
def test_a_row_not_proved_in_the_lab_copies_nothing_and_names_the_harness(tmp_path: Path, harness: str) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    environment = {"HOME": str(tmp_path / "home")}
    reason = carry(harness, SESSION, CWD, environment | {CONFIG_ENV[harness]: str(old)},
                   environment | {CONFIG_ENV[harness]: str(new)})
    assert reason == (f"{harness}: carrying a conversation to another config location was not proved in the lab; "
                      "the seat starts a fresh session")
    assert not new.exists()


def test_an_unknown_harness_is_a_reason() -> None:
    assert carry("shell", SESSION, CWD, {}, {}) == "shell: not a harness st2 knows how to move between accounts"


def test_the_same_location_twice_is_nothing_to_do(tmp_path: Path) -> None:
    old = tmp_path / "a"
    transcript(old)
    (tmp_path / "link").symlink_to(old)
    assert carry("claude", SESSION, CWD, claude_env(old), claude_env(tmp_path / "link")) is None
    assert files(old) == [f"projects/{ENCODED}/{SESSION}.jsonl"]


def test_a_failed_write_leaves_neither_the_target_nor_a_temporary(tmp_path: Path, monkeypatch) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)

    def refuse(descriptor: int) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(module.os, "fsync", refuse)
    reason = carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert reason == f"claude: copying session {SESSION} to {new} failed: No space left on device"
    assert files(new) == [] and (new / "projects" / ENCODED).is_dir()


def test_a_different_file_appearing_during_the_copy_is_kept_and_refused(tmp_path: Path, monkeypatch) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    transcript(old)
    real_link = os.link

    def racing_link(source: str, target: str) -> None:
        Path(target).write_text("written meanwhile\n")
        real_link(source, target)
    monkeypatch.setattr(module.os, "link", racing_link)
    reason = carry("claude", SESSION, CWD, claude_env(old), claude_env(new))
    assert reason is not None and "appeared meanwhile and differs" in reason
    assert files(new) == [f"projects/{ENCODED}/{SESSION}.jsonl"]
    assert (new / "projects" / ENCODED / f"{SESSION}.jsonl").read_text() == "written meanwhile\n"


def test_a_long_working_directory_uses_the_directory_claude_named_for_it(tmp_path: Path) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    cwd = "/srv/" + "deep-" * 50
    encoded = ("-srv-" + "deep-" * 50)[:200] + "-1x2y3z"  # Claude's own hash suffix, taken as named
    transcript(old, project=encoded)
    transcript(old, project=("-srv-" + "deep-" * 50)[:200] + "-other", session="0" * 8 + SESSION[8:])
    assert carry("claude", SESSION, cwd, claude_env(old), claude_env(new)) is None
    assert files(new) == [f"projects/{encoded}/{SESSION}.jsonl"]


def test_a_file_system_without_hard_links_gets_a_checked_rename(tmp_path: Path, monkeypatch) -> None:
    old, new = tmp_path / "a", tmp_path / "b"
    source = transcript(old)

    def no_links(source: str, target: str) -> None:
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(module.os, "link", no_links)
    assert carry("claude", SESSION, CWD, claude_env(old), claude_env(new)) is None
    assert files(new) == [f"projects/{ENCODED}/{SESSION}.jsonl"]
    assert (new / "projects" / ENCODED / f"{SESSION}.jsonl").read_bytes() == source.read_bytes()
