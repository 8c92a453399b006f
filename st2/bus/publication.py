"""Exclusive atomic publication of a whole file (Maildir delivery).

The bytes are written to a temp file in the catalog's bus staging directory (``.st2/bus-staging``,
same filesystem, never replicated, never a box), fsynced, then hard-linked under the final name.
``link`` never replaces an existing name, so a reserved filename published twice by racing
writers yields one file, and a SIGKILL at any point leaves either nothing or the complete file
under the final name — never a partial file, never a temp file in a box. Whole-file replacement
of records (the stream ring) goes through :func:`st2.fs.atomic.publish` with the same staging.
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.bus import BusError
from st2.catalog.layout import CONTROL_DIR
from st2.fs.atomic import UnsafePublication, check_staging, ensure_real_directory, fsync_directory, write_temp

STAGING = "bus-staging"


def staging_directory(catalog: Path) -> Path:
    """``<catalog>/.st2/bus-staging``, created if missing."""
    path = Path(catalog) / CONTROL_DIR / STAGING
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_box(directory: Path, catalog: Path) -> Path:
    """Create ``directory`` (a seat's inbox, archive or ledger) if missing and check that every
    directory from the catalog root down to it is a real directory, not a symlink — mail is never
    delivered through a link out of the catalog. The catalog root itself may be reached through
    a symlink (a user's ``~/catalog`` pointing at a data disk)."""
    directory = Path(directory)
    try:
        relative = Path(os.path.abspath(directory)).relative_to(os.path.abspath(catalog))
    except ValueError:
        raise BusError(f"unsafe mailbox {directory}: not inside catalog {catalog}") from None
    current = Path(os.path.realpath(catalog))
    for part in relative.parts:
        current = current / part
        try:
            ensure_real_directory(current)
        except UnsafePublication:
            raise BusError(f"unsafe mailbox {directory}: {current} is not a real directory") from None
        except OSError as error:
            raise BusError(f"unsafe mailbox {directory}: {error}") from None
    return directory


def publish_exclusive(target: Path, data: bytes, staging: Path, *, mode: int = 0o644,
                      durable: bool = True) -> bool:
    """Create ``target`` holding ``data`` unless a file already has that name.

    Return True when this call created it, False when the name already existed (its bytes are
    left untouched; the caller decides whether they agree). The staging directory must be on the
    target's filesystem; otherwise raise :class:`BusError` rather than copy. ``durable=False``
    skips the fsyncs (bookkeeping a power cut may lose, such as the sent ledger); the file is
    still never visible partially written to another process, since it is linked complete.
    """
    target = Path(target)
    try:
        check_staging(Path(staging), target.parent)
    except UnsafePublication as error:
        raise BusError(str(error)) from None
    temp = write_temp(Path(staging), target.name, data, mode, durable=durable)
    try:
        try:
            os.link(temp, target)
        except FileExistsError:
            return False
    finally:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
    if durable:
        fsync_directory(target.parent)
    return True
