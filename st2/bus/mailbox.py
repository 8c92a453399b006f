"""A seat's boxes: ``resources/inbox`` (unread) and ``resources/archive`` (read = receipts).

Reading a message is moving it to the archive under the same name. The archive file is a durable
receipt: once it exists the message is settled, a copy of the same name restored into the inbox
(a replication engine converging late) is not unread work — listing hides it and removes it, and
archiving it again only removes it, never overwrites the receipt. Every step is idempotent, so a
crash anywhere is finished by running the same step again.
"""

from __future__ import annotations

import enum
import os
import stat

from st2.bus import BusError
from st2.bus.envelope import Message, parse
from st2.bus.filename import is_message_filename
from st2.bus.boxes import archive_of, inbox_of, message_names  # noqa: F401 - the boxes' names, re-exported
from st2.bus.publication import ensure_box
from st2.fs.atomic import fsync_directory
from st2.fs.read import MESSAGE_LIMIT, read_bounded

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file, or None when it vanished, is not a plain file (a symlink
    in a box is never followed, a FIFO never opened for a writer) or is over the message bound."""
    try:
        return read_bounded(path, MESSAGE_LIMIT, follow_symlinks=False)
    except OSError:
        return None


def refusal(directory: Path, filename: str) -> str | None:
    """Why a present message file is not read (a FIFO, a device, a symlink, over the bound), or
    None when it reads or is simply absent."""
    try:
        read_bounded(os.path.join(directory, filename), MESSAGE_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        return error.strerror or str(error)
    return None


def list_box(directory: Path) -> list[Message]:
    """Every message in a box, sorted by send time then name. A file removed between listing and
    reading (archived concurrently) is skipped, never reported as an empty message."""
    return _read_box(directory, message_names(directory))


def _read_box(directory: Path, names: list[str]) -> list[Message]:
    """The messages ``names`` of a box that can still be read, sorted by send time then name."""
    messages = []
    for name in names:
        data = _read_regular(os.path.join(directory, name))
        if data is not None:
            messages.append(parse(name, data))
    messages.sort(key=lambda message: (message.ts, message.filename))
    return messages


def _remove_duplicate(path: Path) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


def list_inbox(seat_directory: Path) -> list[Message]:
    """The logically unread messages: the inbox minus names settled by an archive receipt (which
    are removed on the way, so every reader helps a restored copy converge). An empty inbox is
    one directory listing: the archive is read only when the inbox holds a message."""
    inbox = inbox_of(seat_directory)
    names = message_names(inbox)
    if not names:
        return []
    receipts = set(message_names(archive_of(seat_directory)))
    for name in names:
        if name in receipts:
            _remove_duplicate(os.path.join(inbox, name))
    return _read_box(inbox, [name for name in names if name not in receipts])


def read_message(directory: Path, filename: str) -> Message | None:
    """One message from a box, or None when it is not there. Raise :class:`BusError` for a name
    outside the grammar (no path can be smuggled through a filename)."""
    if not is_message_filename(filename):
        raise BusError(f"{filename!r} is not a message filename (<unix-ms>-<rand6>.md)")
    data = _read_regular(os.path.join(directory, filename))
    return None if data is None else parse(filename, data)


def read_raw(directory: Path, filename: str) -> bytes | None:
    if not is_message_filename(filename):
        raise BusError(f"{filename!r} is not a message filename (<unix-ms>-<rand6>.md)")
    return _read_regular(os.path.join(directory, filename))


class ArchiveOutcome(enum.Enum):
    ARCHIVED = "archived"  # inbox -> archive now
    ALREADY_ARCHIVED = "already-archived"  # the receipt existed; any inbox copy was removed


def archive_message(seat_directory: Path, filename: str) -> ArchiveOutcome:
    """Move ``filename`` from the inbox to the archive.

    The move is link-then-unlink: ``link`` never replaces a receipt that raced into existence,
    and a crash between the two steps leaves an inbox copy the receipt already shadows. If the
    receipt exists the message is settled: remove any inbox copy and report ALREADY_ARCHIVED.
    Raise :class:`BusError` when the message is in neither box or the name is not grammatical.
    """
    if not is_message_filename(filename):
        raise BusError(f"{filename!r} is not a message filename (<unix-ms>-<rand6>.md)")
    inbox = inbox_of(seat_directory)
    archive = archive_of(seat_directory)
    # Both boxes must be real directories all the way from the catalog root: a receipt is never
    # linked through an `archive` (or an inbox read through an `inbox`) that is a symlink out
    # of the catalog. The seat (or principal) directory is <catalog>/<namespace>/<host>/<name>.
    catalog = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(seat_directory))))
    ensure_box(inbox, catalog)
    ensure_box(archive, catalog)
    source = os.path.join(inbox, filename)
    receipt = os.path.join(archive, filename)
    if os.path.lexists(receipt):
        _remove_duplicate(source)
        return ArchiveOutcome.ALREADY_ARCHIVED
    try:
        source_status = os.lstat(source)
    except FileNotFoundError:
        raise BusError(f"no message {filename} in {inbox}") from None
    if not stat.S_ISREG(source_status.st_mode):
        raise BusError(f"{source} is not a regular file; refusing to archive it")
    try:
        os.link(source, receipt, follow_symlinks=False)
    except FileExistsError:
        _remove_duplicate(source)
        return ArchiveOutcome.ALREADY_ARCHIVED
    except FileNotFoundError:
        # A concurrent archiver moved it first; its receipt settles the message.
        if os.path.lexists(receipt):
            return ArchiveOutcome.ALREADY_ARCHIVED
        raise BusError(f"no message {filename} in {inbox}") from None
    fsync_directory(archive)
    _remove_duplicate(source)
    fsync_directory(inbox)
    return ArchiveOutcome.ARCHIVED
