"""``st2 message thread``: a message and everything replying to it, across the catalog.

A two-party conversation lives in both parties' boxes, so every seat's and principal's inbox and
archive is read (a filename seen twice is one message). The walk goes up ``in-reply-to`` to the
root, then down in send order. Cycles and dangling parents are tolerated.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from st2.bus import BusError
from st2.bus.addressing import seats
from st2.bus.envelope import Message
from st2.bus.filename import is_message_filename
from st2.bus.mailbox import archive_of, inbox_of, list_box
from st2.bus.principals import principals


@dataclass(frozen=True)
class ThreadEntry:
    message: Message
    depth: int


def _every_message(catalog: Path) -> dict[str, Message]:
    owners = [seat.directory for seat in seats(catalog)]
    try:
        owners += [principal.directory for principal in principals(catalog)]
    except BusError:
        pass  # a malformed principal does not hide the agents' conversations
    found: dict[str, Message] = {}
    for owner in owners:
        for box in (inbox_of(owner), archive_of(owner)):
            for message in list_box(box):
                found.setdefault(message.filename, message)
    return found


def collect(catalog: Path, filename: str) -> list[ThreadEntry]:
    """The thread ``filename`` belongs to, in reply-tree pre-order; [] when it is nowhere."""
    if not is_message_filename(filename):
        raise BusError(f"{filename!r} is not a message filename (<unix-ms>-<rand6>.md)")
    everything = _every_message(catalog)
    if filename not in everything:
        return []
    root = filename
    seen = {root}
    while True:
        parent = everything[root].in_reply_to
        if parent is None or parent not in everything or parent in seen:
            break
        seen.add(parent)
        root = parent
    children: dict[str, list[str]] = {}
    for message in everything.values():
        if message.in_reply_to is not None and message.filename != root:
            children.setdefault(message.in_reply_to, []).append(message.filename)
    for names in children.values():
        names.sort(key=lambda name: (everything[name].ts, name))
    entries: list[ThreadEntry] = []
    visited: set[str] = set()
    stack = [(root, 0)]
    while stack:
        name, depth = stack.pop()
        if name in visited:
            continue
        visited.add(name)
        entries.append(ThreadEntry(everything[name], depth))
        for child in reversed(children.get(name, [])):
            stack.append((child, depth + 1))
    return entries
