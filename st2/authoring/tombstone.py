"""The archive tombstone, ``.st2/archive/<host>/<identity>.tombstone.json``
(``st2.catalog-archive-tombstone.v1``): the durable trace an archived seat leaves, read by
``st2 catalog graph`` and ``st2 catalog unarchive``::

    {
      "schema": "st2.catalog-archive-tombstone.v1",
      "id": "<host>.<identity>",
      "host": "<host>",
      "identity": "<identity>",
      "archivedAt": <unix-ms>,
      "reason": "<the retirement's reason>" | null,
      "archiveRoot": ".st2/archive/<host>/<identity>"
    }

Written pretty-printed (two-space indent, one trailing newline) and owner-only. The reader is
strict: a foreign schema, a missing or mistyped field, or an ``id`` that is not
``<host>.<identity>`` reads as no tombstone (``None``), which makes the archive unexplained.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from st2.records import decoding

SCHEMA = "st2.catalog-archive-tombstone.v1"
SUFFIX = ".tombstone.json"


class Tombstone(NamedTuple):
    id: str
    host: str
    identity: str
    archived_at: int
    reason: str | None
    archive_root: str

    def wire(self) -> dict:
        return {"schema": SCHEMA, "id": self.id, "host": self.host, "identity": self.identity,
                "archivedAt": self.archived_at, "reason": self.reason, "archiveRoot": self.archive_root}

    def to_bytes(self) -> bytes:
        return (json.dumps(self.wire(), indent=2, ensure_ascii=False) + "\n").encode()


def read(data: bytes | None) -> Tombstone | None:
    """The tombstone in ``data``, or ``None`` when absent or not a believable tombstone."""
    if data is None:
        return None
    try:
        body = decoding.load_object(data)
        if decoding.string(body, "schema") != SCHEMA:
            return None
        tombstone = Tombstone(decoding.string(body, "id"), decoding.string(body, "host"),
                              decoding.string(body, "identity"), decoding.unsigned(body, "archivedAt"),
                              decoding.optional_string(body, "reason"), decoding.string(body, "archiveRoot"))
    except decoding.Malformed:
        return None
    if tombstone.id != f"{tombstone.host}.{tombstone.identity}":
        return None
    return tombstone
