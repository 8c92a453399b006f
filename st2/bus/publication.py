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

from st2.bus import BusError
from st2.catalog.layout import CONTROL_DIR
from st2.fs.atomic import UnsafePublication, check_staging, ensure_real_directory, fsync_directory, write_temp
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path

STAGING = "bus-staging"
# Mail is the owner's alone under any umask, like every record: a message body, a sent copy, a
# receipt. The directories st2 creates for it too.
MESSAGE_MODE = 0o600
DIRECTORY_MODE = 0o700


def staging_directory(catalog: Path | str) -> Path | str:
    """``<catalog>/.st2/bus-staging`` (of ``catalog``'s kind), created if missing."""
    path = os.path.join(catalog, CONTROL_DIR, STAGING)
    os.makedirs(path, mode=DIRECTORY_MODE, exist_ok=True)
    return like(catalog, path)


def ensure_box(directory: Path | str, catalog: Path | str) -> Path | str:
    """Create ``directory`` (a seat's inbox, archive or ledger) if missing and check that every
    directory from the catalog root down to it is a real directory, not a symlink — mail is never
    delivered through a link out of the catalog. The catalog root itself may be reached through
    a symlink (a user's ``~/catalog`` pointing at a data disk). Returns ``directory`` as given."""
    absolute, root = os.path.abspath(directory), os.path.abspath(catalog)
    if absolute == root:
        parts: list[str] = []
    elif root == "/" or absolute.startswith(root + "/"):
        parts = absolute[len(root):].lstrip("/").split("/")
    else:
        raise BusError(f"unsafe mailbox {directory}: not inside catalog {catalog}")
    current = os.path.realpath(catalog)
    for part in parts:
        current = os.path.join(current, part)
        try:
            ensure_real_directory(current, DIRECTORY_MODE)
        except UnsafePublication:
            raise BusError(f"unsafe mailbox {directory}: {current} is not a real directory") from None
        except OSError as error:
            raise BusError(f"unsafe mailbox {directory}: {error}") from None
    return directory


def publish_exclusive(target: Path | str, data: bytes, staging: Path | str, *, mode: int = MESSAGE_MODE,
                      durable: bool = True) -> bool:
    """Create ``target`` holding ``data`` unless a file already has that name.

    Return True when this call created it, False when the name already existed (its bytes are
    left untouched; the caller decides whether they agree). The staging directory must be on the
    target's filesystem; otherwise raise :class:`BusError` rather than copy. ``durable=False``
    skips the fsyncs (bookkeeping a power cut may lose, such as the sent ledger); the file is
    still never visible partially written to another process, since it is linked complete.
    """
    parent, name = os.path.split(os.fspath(target))
    parent = parent or "."  # as Path(target).parent spells a bare name's directory
    try:
        check_staging(staging, parent)
    except UnsafePublication as error:
        raise BusError(str(error)) from None
    temp = write_temp(staging, name, data, mode, durable=durable)
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
        fsync_directory(parent)
    return True
