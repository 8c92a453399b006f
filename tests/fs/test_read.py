"""The bounded read primitive (st2/fs/read.py): never blocks on a FIFO, refuses anything but a
regular file, refuses a file over its bound whole, and reads a regular file exactly."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from st2.fs.read import NotRegular, TooLarge, read_bounded, read_optional, read_with_status


def test_a_regular_file_is_read_whole_with_its_status(tmp_path: Path) -> None:
    path = tmp_path / "record"
    path.write_bytes(b"x" * 100_000)
    data, status = read_with_status(path, 100_000)
    assert data == b"x" * 100_000 and status.st_size == 100_000
    assert read_bounded(path, 100_000) == data


def test_an_absent_file_is_file_not_found_and_optional_reads_none(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "absent", 10)
    assert read_optional(tmp_path / "absent", 10) is None
    (tmp_path / "file").write_text("x")
    assert read_optional(tmp_path / "file" / "under", 10) is None  # a parent that is a file


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    worker = threading.Thread(target=lambda: outcome.append(_raised(lambda: read_bounded(fifo, 10))), daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "read_bounded blocked on a FIFO"
    assert isinstance(outcome[0], NotRegular) and "FIFO" in str(outcome[0])
    assert isinstance(outcome[0], OSError)  # readers that treat OSError as unreadable stay correct


@pytest.mark.parametrize("make", ["directory", "socket", "device"])
def test_anything_but_a_regular_file_is_refused(tmp_path: Path, make: str) -> None:
    if make == "directory":
        target = tmp_path / "dir"
        target.mkdir()
    elif make == "socket":
        target = tmp_path / "sock"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(target))
        listener.close()
    else:
        target = Path("/dev/zero")
    with pytest.raises(OSError) as raised:
        read_bounded(target, 10)
    assert isinstance(raised.value, (NotRegular, IsADirectoryError, OSError))
    assert not isinstance(raised.value, FileNotFoundError)


def test_dev_zero_is_refused_not_read_to_the_bound() -> None:
    with pytest.raises(NotRegular):
        read_bounded("/dev/zero", 1 << 30)


def test_a_file_over_the_bound_is_refused_whole(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"y" * 11)
    with pytest.raises(TooLarge):
        read_bounded(path, 10)
    path.write_bytes(b"y" * 10)
    assert read_bounded(path, 10) == b"y" * 10


def test_a_symlink_is_refused_when_not_followed_and_read_when_followed(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("content")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(NotRegular):
        read_bounded(tmp_path / "link", 100, follow_symlinks=False)
    assert read_bounded(tmp_path / "link", 100) == b"content"


def test_a_symlink_to_a_fifo_is_refused_even_when_followed(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "fifo")
    with pytest.raises(NotRegular):
        read_bounded(tmp_path / "link", 100)


def _raised(call) -> BaseException | None:
    try:
        call()
    except BaseException as error:  # noqa: BLE001 - the test inspects it
        return error
    return None
