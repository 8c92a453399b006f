"""One log-line append for st2's advisory logs: one O_APPEND write per line, owner-only, fail-soft."""

from __future__ import annotations

from pathlib import Path

from st2.delegation import stop_log
from st2.fs.log import append_line
from st2.usage import history


def test_both_logs_append_whole_lines_owner_only(tmp_path: Path) -> None:
    stop, samples = tmp_path / "a" / "stop.log", tmp_path / "b" / "history.log"
    stop_log.append(str(stop), "one\n")
    stop_log.append(str(stop), "two\n")
    assert history.append(str(samples), "updated_at=1 pct=3")
    assert stop.read_text() == "one\ntwo\n" and samples.read_text() == "updated_at=1 pct=3\n"
    assert stop.stat().st_mode & 0o777 == 0o600 and samples.stat().st_mode & 0o777 == 0o600


def test_an_unwritable_log_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert append_line(str(tmp_path / "file" / "log"), "x\n") is False  # its directory is a file
    stop_log.append(str(tmp_path / "file" / "log"), "x\n")  # best-effort: no exception


def test_the_one_real_directory_check_creates_accepts_and_refuses(tmp_path: Path) -> None:
    import os

    import pytest

    from st2.fs.atomic import UnsafePublication, ensure_real_directory

    assert ensure_real_directory(tmp_path / "made").is_dir()
    assert ensure_real_directory(tmp_path / "made") == tmp_path / "made"  # idempotent
    os.symlink(tmp_path / "made", tmp_path / "link")
    (tmp_path / "file").write_text("")
    for unsafe in ("link", "file"):
        with pytest.raises(UnsafePublication, match="is not a real directory"):
            ensure_real_directory(tmp_path / unsafe)
