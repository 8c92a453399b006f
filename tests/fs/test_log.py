"""One log-line append for st2's advisory logs: one O_APPEND write per line, owner-only, fail-soft."""

from __future__ import annotations

from pathlib import Path

from st2.kit.delegation import stop_log
from st2.fs.log import append_line
from st2.kit.usage import history


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


def test_a_log_with_a_bound_rotates_to_one_previous_file_and_never_grows_past_twice_it(tmp_path: Path) -> None:
    log = tmp_path / "events" / "notify.log"
    for number in range(100):
        assert append_line(str(log), f"line {number:03d} {'x' * 90}\n", rotate_at=1000)
    assert log.stat().st_size < 1100 and (tmp_path / "events" / "notify.log.1").stat().st_size < 1100
    assert sorted(path.name for path in log.parent.iterdir()) == ["notify.log", "notify.log.1"]
    assert log.read_text().splitlines()[-1].startswith("line 099 ")
    assert all(line.startswith("line ") for line in (tmp_path / "events" / "notify.log.1").read_text().splitlines())


def test_a_log_is_owner_only_under_any_umask_and_an_existing_one_is_made_so(tmp_path: Path) -> None:
    import os

    previous = os.umask(0o022)
    try:
        old = tmp_path / "old.log"
        old.write_text("")
        old.chmod(0o644)
        assert append_line(str(old), "x\n") and old.stat().st_mode & 0o777 == 0o600
        fresh = tmp_path / "made" / "fresh.log"
        assert append_line(str(fresh), "x\n")
        assert fresh.stat().st_mode & 0o777 == 0o600 and fresh.parent.stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(previous)


def test_a_fifo_where_a_log_goes_is_not_written_and_never_blocks(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "log")
    assert append_line(str(tmp_path / "log"), "x\n") is False  # no reader: refused at once, no wait
