"""What the roster (``st2 agents --json --enrich``) reads from the bus.

``inbox`` is the count of logically unread messages (an archive receipt settles a restored inbox
copy, so it is not counted). ``bus_activity_ms`` is origin-timed: the newest send time carried in
a message filename in the inbox or archive, never a file mtime (a replication engine rewrites
mtimes). The roster combines it with the presence heartbeat's own time.
"""

from __future__ import annotations

from pathlib import Path

from st2.bus.filename import timestamp_of
from st2.bus.mailbox import archive_of, inbox_of, list_inbox, message_names


def inbox_count(seat_directory: Path) -> int:
    return len(list_inbox(seat_directory))


def bus_activity_ms(seat_directory: Path) -> int | None:
    """The newest filename timestamp across inbox and archive, or None with no mail."""
    newest = None
    for box in (inbox_of(seat_directory), archive_of(seat_directory)):
        names = message_names(box)
        if names:
            stamp = timestamp_of(names[-1])
            newest = stamp if newest is None else max(newest, stamp)
    return newest
