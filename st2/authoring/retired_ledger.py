"""``.st2/retired-observed.json`` (``st2.catalog-retired-observed.v1``): when this catalog's
supervisor first observed each seat's retirement, per host::

    {
      "schema": "st2.catalog-retired-observed.v1",
      "hosts": {"<host>": {"<identity>": <unix-ms>, …}}
    }

The grace period before auto-archival is measured from this observation, never from anything in
the declaration (retirement keeps every declared byte reversible). The ledger is reconciled to
exactly the currently retired seats on every archive step, so un-retiring drops a row and a later
retirement serves a fresh grace period. An absent, unreadable or foreign file reads as empty: a
lost ledger restarts every clock, which errs toward keeping seats live.
"""

from __future__ import annotations

import json

from st2.catalog.location import CatalogLocation
from st2.fs.atomic import publish
from st2.fs.read import RECORD_LIMIT, read_regular
from st2.records import decoding

SCHEMA = "st2.catalog-retired-observed.v1"


def read(data: bytes | None) -> dict[str, dict[str, int]]:
    """host -> identity -> first-observed unix ms; ``{}`` for anything unbelievable."""
    if data is None:
        return {}
    try:
        body = decoding.load_object(data)
        if decoding.string(body, "schema") != SCHEMA or not isinstance(body.get("hosts"), dict):
            return {}
        return {host: {identity: decoding.unsigned(seats, identity) for identity in seats}
                for host, seats in body["hosts"].items() if isinstance(seats, dict)}
    except decoding.Malformed:
        return {}


def load(location: CatalogLocation) -> dict[str, dict[str, int]]:
    try:
        return read(read_regular(location.paths.retired_observed, RECORD_LIMIT)[0])
    except OSError:
        return {}


def store(location: CatalogLocation, hosts: dict[str, dict[str, int]], staging) -> None:
    body = {"schema": SCHEMA, "hosts": {host: dict(sorted(seats.items())) for host, seats in sorted(hosts.items())}}
    publish(location.paths.retired_observed, (json.dumps(body, indent=2) + "\n").encode(), staging,
            root=location.root, mode=0o600)


def observe(observed: dict[str, int], retired: set[str], now_ms: int) -> dict[str, int]:
    """``observed`` reconciled to exactly ``retired``: kept rows keep their first observation,
    new retirements are stamped ``now_ms``, rows of seats no longer retired are dropped."""
    return {identity: observed.get(identity, now_ms) for identity in sorted(retired)}


def due(observed: dict[str, int], grace_ms: int, now_ms: int) -> set[str]:
    return {identity for identity, first in observed.items() if now_ms - first >= grace_ms}
