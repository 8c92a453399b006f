"""One cooperative authoring transaction: the catalog authoring lock, the declaration reads and
atomic writes made under it, and the catalog-generation commit that wakes a resident supervisor.

``.st2/catalog-authoring.lock`` is a persistent file (never removed: removing a lock another
process holds open would split the lock domain) taken with :class:`st2.fs.lock.RecordLock`
(``flock``). Verbs wait up to :data:`LOCK_SECONDS` for it; the supervisor's archive step asks
with ``timeout=0`` and skips when the lock is contended, never queueing behind an author. Every
temporary lives under ``.st2/authoring-staging/`` on the catalog's own filesystem, so a crash
leaves debris only in the control plane and never a torn declaration.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator

from st2.catalog.location import CatalogLocation
from st2.fs.lock import LockTimeout, RecordLock
from st2.fs.atomic import check_real_directories, ensure_directory, fsync_directory, publish
from st2.fs.read import DECLARATION_LIMIT, RUNTIME_LIMIT, read_bounded, read_regular

LOCK_SECONDS = 10.0
STAGING = "authoring-staging"
BUNDLE_STAGE_PREFIX = "bundle-"


class LockContended(Exception):
    """The authoring lock is held by someone else (only raised for a non-waiting request)."""


class Transaction:
    """What an authoring verb may do while it holds the lock."""

    def __init__(self, location: CatalogLocation) -> None:
        self.location = location
        self.committed = False

    @property
    def staging(self) -> Path:
        return ensure_directory(self.location.paths.control / STAGING, mode=0o700)

    def read_declaration(self, host: str, identity: str) -> bytes | None:
        """The seat's ``agent.kdl`` bytes, ``None`` when absent; a symlinked or non-regular
        declaration raises ``OSError`` (it is never followed)."""
        path = self.location.paths.seat(host, identity).declaration
        try:
            return read_regular(path, DECLARATION_LIMIT)[0]
        except FileNotFoundError:
            return None

    def write_declaration(self, host: str, identity: str, data: bytes) -> Path:
        """Publish ``data`` as the seat's ``agent.kdl`` atomically (its directory is created
        through real directories when the seat is new). Mark the transaction committed."""
        seat = self.location.paths.seat(host, identity)
        self.make_seat_parent(host)
        if not seat.directory.exists():
            seat.directory.mkdir(mode=0o755)
            fsync_directory(seat.directory.parent)
        check_real_directories(seat.directory, self.location.root)
        mode = 0o644
        try:
            mode = os.lstat(seat.declaration).st_mode & 0o777
        except FileNotFoundError:
            pass
        publish(seat.declaration, data, self.staging, root=self.location.root, mode=mode)
        self.committed = True
        return seat.declaration

    def make_seat_parent(self, host: str) -> Path:
        """Create ``agents/<host>/`` durably (through real directories) and return it."""
        parent = self.location.paths.agents / host
        for directory in (self.location.paths.agents, parent):
            if not directory.exists():
                directory.mkdir(mode=0o755)
                fsync_directory(directory.parent)
        check_real_directories(parent, self.location.root)
        return parent

    def mark_committed(self) -> None:
        self.committed = True


def advance_generation(location: CatalogLocation) -> int:
    """Advance ``.st2/catalog-generation`` by one (atomically) and return the new value; an
    unreadable value restarts from zero, since the contract is change detection, not a count."""
    target = location.paths.catalog_generation
    try:
        current = int(read_bounded(target, RUNTIME_LIMIT, follow_symlinks=False).decode().strip() or "0")
    except (OSError, ValueError):
        current = 0
    control = ensure_directory(location.paths.control)
    publish(target, f"{current + 1}\n".encode(), ensure_directory(control / STAGING, mode=0o700),
            root=location.root)
    return current + 1


def _sweep_orphan_stages(location: CatalogLocation) -> None:
    """Only the lock holder stages, so under the lock every staged bundle directory left in the
    staging area belongs to an author that was killed mid-publication: remove it."""
    staging = location.paths.control / STAGING
    try:
        entries = list(os.scandir(staging))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.name.startswith(BUNDLE_STAGE_PREFIX) and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)


@contextlib.contextmanager
def authoring(location: CatalogLocation, timeout: float = LOCK_SECONDS) -> Iterator[Transaction]:
    """Hold the catalog authoring lock for one transaction; on a clean exit after a commit,
    advance the catalog generation. ``timeout=0`` raises :class:`LockContended` at once."""
    if not location.root.is_dir():
        raise FileNotFoundError(f"there is no catalog directory at {location.root}")
    check_real_directories(location.root)
    try:   # the lock lives in the control directory, so it is made before any lock is held
        location.paths.control.mkdir(mode=0o755)
    except FileExistsError:
        pass   # made already, perhaps by a concurrent author an instant ago
    lock = RecordLock(location.paths.catalog_authoring_lock, timeout=timeout)
    try:
        lock.acquire()
    except LockTimeout as error:
        raise LockContended(f"{location.paths.catalog_authoring_lock} is held by another author") from error
    try:
        transaction = Transaction(location)
        _sweep_orphan_stages(location)
        yield transaction
        if transaction.committed:
            advance_generation(location)
    finally:
        lock.release()
