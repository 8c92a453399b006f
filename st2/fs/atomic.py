"""Atomic publication of a whole file, Maildir-style.

Given the target path, its bytes and a staging directory on the same filesystem: create a temp
file with ``O_EXCL`` in the staging directory, write, fsync, rename it over the target, fsync
the target's directory. A reader sees the old file or the new one, never a torn one; a writer
killed at any point leaves the old file intact and at most an orphan temp file inside the
staging directory (never beside the target), which the next publication through that staging
directory sweeps (:func:`sweep_orphans`), so kills never accumulate residue. Standard library only: hot paths import this.
"""

from __future__ import annotations

import os
import stat

from st2.fs.paths import like
from st2.process.existence import pid_exists

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: hot paths publish through here, and pathlib costs them milliseconds
    from pathlib import Path


TEMP_SUFFIX = ".tmp"  # every staged temp: .<name>.<pid>.<hex>.tmp


class UnsafePublication(OSError):
    """The target's ancestry or the staging directory cannot give an atomic, contained write."""


def check_real_directories(path: Path | str, root: Path | str | None = None) -> None:
    """Raise :class:`UnsafePublication` unless ``path`` and each ancestor below ``root`` (or
    below ``/`` when ``root`` is None) is a real directory, not a symlink."""
    path = os.path.abspath(path)
    stop = os.path.abspath(root) if root is not None else None
    current = path
    while True:
        try:
            status = os.lstat(current)
        except FileNotFoundError as error:
            raise UnsafePublication(f"{current}: does not exist") from error
        if stat.S_ISLNK(status.st_mode):
            raise UnsafePublication(f"{current}: is a symlink; refusing to publish through it")
        if not stat.S_ISDIR(status.st_mode):
            raise UnsafePublication(f"{current}: is not a directory")
        if stop is not None and current == stop:
            return
        parent = os.path.dirname(current)
        if parent == current:
            if stop is not None:
                raise UnsafePublication(f"{path}: is not below {stop}")
            return
        current = parent


def fsync_directory(directory: Path | str) -> None:
    """Make a directory's entries (a rename, a link, an unlink) durable."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_all(descriptor: int, data: bytes, path: Path | str, *, durable: bool = True) -> None:
    """Write all of ``data`` to the open ``descriptor`` (and fsync it when ``durable``). An
    OSError (ENOSPC, EDQUOT, EROFS, EIO …) is re-raised naming ``path``, so the one line a user
    reads says which file the machine refused."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view):]
        if durable:
            os.fsync(descriptor)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None


def check_staging(staging: Path | str, directory: Path | str) -> None:
    """Raise :class:`UnsafePublication` unless ``staging`` is a real directory on the same device
    as ``directory`` (a rename or link across devices cannot be atomic; st2 never degrades to a
    copy)."""
    staging_status = os.lstat(staging)
    if stat.S_ISLNK(staging_status.st_mode) or not stat.S_ISDIR(staging_status.st_mode):
        raise UnsafePublication(f"{staging}: staging is not a real directory")
    if staging_status.st_dev != os.lstat(directory).st_dev:
        raise UnsafePublication(
            f"{staging}: staging is on another device than {directory}; "
            "a rename cannot be atomic there"
        )


def write_temp(staging: Path | str, name: str, data: bytes, mode: int, *, durable: bool = True) -> Path | str:
    """Write ``data`` to a new exclusive temp file ``.<name>.<pid>.<hex>.tmp`` in ``staging``
    (fsynced unless ``durable`` is False) and return its path, of ``staging``'s kind; on failure
    nothing is left."""
    # os.urandom, not secrets: secrets imports hmac and with it OpenSSL (12 ms and 4.6 MiB on the
    # hooks' and the DING notifier's path) for what is only a collision-proof temp name.
    temp = like(staging, os.path.join(staging, f".{name}.{os.getpid()}.{os.urandom(6).hex()}{TEMP_SUFFIX}"))
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        write_all(descriptor, data, temp, durable=durable)
    except BaseException:
        os.close(descriptor)
        os.unlink(temp)
        raise
    os.close(descriptor)
    return temp


def publish(
    target: Path | str,
    data: bytes,
    staging_dir: Path | str,
    *,
    root: Path | str | None = None,
    mode: int = 0o644,
    durable: bool = True,
) -> None:
    """Replace ``target`` with ``data`` atomically; unless ``durable`` is False, also durably
    (the temp file and the directory fsynced). A non-durable publication is still atomic for
    every reader and survives any process's death, not the host's crash.

    ``root`` bounds the ancestry check: every directory from the target's parent up to
    ``root`` must be a real directory. The staging directory must be a real directory on the
    same device as the target's directory; otherwise raise :class:`UnsafePublication` rather
    than degrade to a copy. A symlink at ``target`` itself is replaced, never followed.
    """
    directory, name = os.path.split(os.fspath(target))
    directory = directory or "."  # as Path(target).parent spells a bare name's directory
    check_real_directories(directory, root)
    check_staging(staging_dir, directory)
    temp = write_temp(staging_dir, name, data, mode, durable=durable)
    try:
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        fsync_directory(directory)
    sweep_orphans(staging_dir)



def sweep_orphans(staging: Path | str) -> int:
    """Remove the temp files ``.<name>.<pid>.<hex>.tmp`` of writers that died (their pid is
    gone) from ``staging``. Return how many. A live writer's temp is never touched (its pid
    still runs); a reused pid only delays the sweep of that one file."""
    removed = 0
    try:
        names = os.listdir(staging)
    except FileNotFoundError:
        return 0
    for name in names:
        if not name.endswith(TEMP_SUFFIX):
            continue
        parts = name.rsplit(".", 3)
        if len(parts) != 4 or not parts[1].isdigit():
            continue
        if pid_exists(int(parts[1])):
            continue
        try:
            os.unlink(os.path.join(staging, name))
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def ensure_directory(path: Path | str, mode: int = 0o755) -> Path:
    """Create ``path`` (and parents) if missing and return it (a ``Path``). Off the hot paths'
    common runs: pathlib is imported here, when a directory is first made."""
    from pathlib import Path

    Path(path).mkdir(parents=True, exist_ok=True, mode=mode)
    return Path(path)


def ensure_real_directory(path: Path | str, mode: int = 0o755) -> Path | str:
    """Create the one directory ``path`` if missing (its parent must exist) and return it (as
    given); raise :class:`UnsafePublication` when what is there is a symlink or not a directory.
    The one real-directory check behind record staging and the mailboxes."""
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        pass
    status = os.lstat(path)
    if stat.S_ISLNK(status.st_mode) or not stat.S_ISDIR(status.st_mode):
        raise UnsafePublication(f"{path}: is not a real directory")
    return path
