"""A seat's two boxes by name only: where they are, which names in them are messages, which are
logically unread, and the newest send time they carry. Standard library and the filename grammar
only, so the roster reads mail with the bus's own rules without loading envelopes or writers.

The unread set is the inbox minus every name an archive receipt settles (a copy restored into the
inbox by a replication engine is read already). Activity is origin-timed: the send time in the
newest filename of either box, never a file mtime (a replication engine rewrites mtimes).
"""

from __future__ import annotations

import os

from st2.bus.filename import is_message_filename, timestamp_of
from st2.catalog.layout import ARCHIVE, INBOX, RESOURCES
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the status-line arm reads the unread set on every firing
    from pathlib import Path


def _box(seat_directory: Path | str, name: str) -> str:
    return os.path.join(seat_directory, RESOURCES, name)


def inbox_of(seat_directory: Path | str) -> Path | str:
    """``<seat>/resources/inbox``, of ``seat_directory``'s kind (st2.fs.paths.like)."""
    return like(seat_directory, _box(seat_directory, INBOX))


def archive_of(seat_directory: Path | str) -> Path | str:
    """``<seat>/resources/archive``, of ``seat_directory``'s kind."""
    return like(seat_directory, _box(seat_directory, ARCHIVE))


def message_names(directory: Path | str) -> list[str]:
    """Grammatical message filenames in ``directory``, sorted (= chronological); [] if absent or
    unreadable."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(name for name in names if is_message_filename(name))


def unread_names(seat_directory: Path) -> list[str]:
    """The logically unread message names, sorted; nothing is read or removed."""
    inbox = message_names(_box(seat_directory, INBOX))
    if not inbox:
        return []
    receipts = set(message_names(_box(seat_directory, ARCHIVE)))
    return [name for name in inbox if name not in receipts]


def activity_ms(seat_directory: Path) -> int | None:
    """The newest filename send time across inbox and archive, or None with no mail."""
    stamps = [timestamp_of(names[-1]) for names in (message_names(_box(seat_directory, INBOX)),
                                                    message_names(_box(seat_directory, ARCHIVE))) if names]
    return max(stamps) if stamps else None
