"""Who a recipient names.

A seat is addressed by its bare identity, by ``<host>.<identity>`` (its bus id), by its declared
``address``, or — with ``--to-id`` — by its immutable declared ``id`` (default: the bus id). The
match must be unique: an unknown or ambiguous recipient is refused with the candidates named,
before anything is written. A retired seat has no bus address and is not a recipient: when a
name matches several seats and exactly one is not retired (a seat moved to another host keeps its
identity), that one is the recipient.

The seat list comes from :func:`seats`, which reads the catalog's declarations — from the
host-local seat index (:mod:`st2.bus.seat_index`) while it proves nothing the walk would see
has changed, else by walking the catalog (and indexing it again). Service
principals (``principals/<host>/<name>/principal.kdl``) are resolved by :mod:`st2.bus.principals`.
"""

from __future__ import annotations

import os
from collections import namedtuple

from st2.bus import AmbiguousRecipient, BusError
from st2.catalog.layout import AGENTS_DIR
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path


class Seat(namedtuple("Seat", ("host", "identity", "directory", "declared_id", "declared_address", "desired_state",
                               "streams"), defaults=(None, None, "running", ()))):
    """What the bus needs to know about one declared seat. (A namedtuple class, not a dataclass:
    a send builds one per seat of the catalog, and importing dataclasses costs it milliseconds.)"""

    __slots__ = ()
    host: str
    identity: str
    directory: Path | str  # of the catalog's kind (st2.fs.paths.like): a str catalog gives str
    declared_id: str | None
    declared_address: str | None
    desired_state: str
    streams: tuple[str, ...]

    @property
    def bus_id(self) -> str:
        return f"{self.host}.{self.identity}"

    @property
    def id(self) -> str:
        return self.declared_id or self.bus_id

    @property
    def address(self) -> str:
        return self.declared_address or self.identity

    @property
    def retired(self) -> bool:
        return self.desired_state == "retired"

    @property
    def running(self) -> bool:
        return self.desired_state == "running"


# declaration path -> (stat signature, seat). A sender resolves its recipient and its own ledger
# seat on every send, and 8 concurrent senders × 250 messages made re-parsing every declaration
# each time the largest CPU cost; a changed file (mtime, ctime, size or inode) is always re-read.
# The ctime is there for a replication engine that rewrites a file in place and puts the
# source's mtime back (rsync --inplace -t): only the kernel sets a ctime.
_CACHE: dict[Path, tuple[tuple[int, int, int, int], Seat | None]] = {}


def _seat_from_declaration(catalog: Path, host: str, identity: str, directory: Path, declaration_path: Path,
                           host_cache: list) -> Seat | None:
    try:
        status = os.stat(declaration_path)
    except OSError:
        return None
    signature = (status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino)
    cached = _CACHE.get(declaration_path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    if not host_cache:  # opened on the first miss only: a long-running sender hits in memory
        from st2.runtime.declaration_cache import DeclarationCache

        host_cache.append(DeclarationCache.open(catalog))
    seat = _load_seat(host, identity, directory, host_cache[0].facts(str(declaration_path)))
    _CACHE[declaration_path] = (signature, seat)
    return seat


def _load_seat(host: str, identity: str, directory: Path, facts: dict) -> Seat | None:
    """The fields the bus needs, from the declaration's facts (:mod:`st2.runtime.declaration_cache`,
    the shared loader's projection). A declaration that does not load is not a seat (``st2
    validate`` reports why)."""
    if not facts["loaded"]:
        return None
    return Seat(
        host=host,
        identity=identity,
        directory=directory,
        declared_id=facts["id"],
        declared_address=facts["address"],
        desired_state=facts["desiredState"],
        streams=tuple(facts["streams"]),
    )


class OneReading:
    """``with OneReading():`` — inside the block, :func:`seats` walks each catalog once and
    answers every later call from that reading. One command resolving a sender, a recipient and
    the sender's ledger seat reads the catalog once instead of three times; a long-running
    process never enters it, so it always sees seats declared since."""

    def __enter__(self) -> OneReading:
        global _READING
        self.outer, _READING = _READING, {}
        return self

    def __exit__(self, *exc) -> None:
        global _READING
        _READING = self.outer


_READING: dict[str, list[Seat]] | None = None


def seats(catalog: Path) -> list[Seat]:
    """Every seat the catalog declares (shared discovery), sorted by bus id. Declarations are
    read through the host-local declaration cache (:mod:`st2.runtime.declaration_cache`), saved
    afterwards when it learned anything. Inside :class:`OneReading`, a catalog already read
    is not read again."""
    return [_located(catalog, seat) for seat in _seats(catalog)]


def _seats(catalog: Path) -> list[Seat]:
    """:func:`seats`, except that a seat served from the index may not have its ``directory``
    yet (None: :func:`_located` gives it), so a send builds one path, not one per seat."""
    key = os.fspath(catalog)
    if _READING is not None and key in _READING:
        return _READING[key]
    found = _read_seats(catalog)
    if _READING is not None:
        _READING[key] = found
    return found


def _located(catalog: Path, seat: Seat) -> Seat:
    """``seat`` with its directory, ``<catalog>/agents/<host>/<identity>`` as discovery gives it,
    of the catalog's kind whichever reading (the index, the walk, this process's cache) gave it."""
    directory = seat.directory
    if directory is None:
        directory = os.path.join(catalog, AGENTS_DIR, seat.host, seat.identity)
    elif isinstance(directory, str) == isinstance(catalog, str):
        return seat
    return seat._replace(directory=like(catalog, os.fspath(directory)))


def _read_seats(catalog: Path) -> list[Seat]:
    """The seats as the host-local seat index (:mod:`st2.bus.seat_index`) proves them, else
    from a walk (strict discovery, then each declaration's facts), which is indexed again."""
    from st2.bus import seat_index

    indexed = seat_index.load(os.fspath(catalog))
    if indexed is not None:
        found = [Seat(host, identity, None, facts[0], facts[1], facts[2], tuple(facts[3]))
                 for host, identity, facts in indexed if facts is not None]
        return sorted(found, key=lambda seat: f"{seat.host}.{seat.identity}")
    from pathlib import Path  # the walk's paths are Paths: a send that misses the index pays for them

    from st2.catalog.discovery import discover
    from st2.runtime.declaration_cache import SETTLE_NS

    root = Path(catalog)
    listing = seat_index.listing_keys(str(root))  # before the walk: a change during it misses next time
    discovery = discover(root)
    if any(diagnostic.source is None or diagnostic.source.split("/", 1)[0] == AGENTS_DIR
           for diagnostic in discovery.errors + discovery.warnings):
        listing = None  # not indexed: the walk's verdicts on those entries are not all keyed
    found, host_cache, rows = [], [], []
    for discovered in discovery.seats:  # its paths are Paths already: re-wrapping re-parses each
        path = str(discovered.declaration_path)
        key = seat_index.declaration_key(path)
        seat = _seat_from_declaration(root, discovered.host, discovered.identity,
                                      discovered.directory, discovered.declaration_path, host_cache)
        if seat_index.declaration_key(path) != key:
            key = None
        rows.append((discovered.host, discovered.identity, key,
                     None if seat is None else [seat.declared_id, seat.declared_address, seat.desired_state,
                                                list(seat.streams)]))
        if seat is not None:
            found.append(seat)
    if host_cache:
        host_cache[0].save()
    seat_index.store(str(root), listing, rows, SETTLE_NS)
    return sorted(found, key=lambda seat: seat.bus_id)


def matches(seat: Seat, name: str) -> bool:
    """True when ``name`` is the seat's bus id, bare identity or declared address."""
    return name in (seat.bus_id, seat.identity, seat.address)


def _unique(candidates: list[Seat], shown: str, catalog: Path) -> Seat:
    if not candidates:
        raise BusError(f"no agent {shown} in catalog {catalog}")
    if len(candidates) > 1:
        named = ", ".join(seat.bus_id for seat in candidates)
        raise AmbiguousRecipient(
            f"ambiguous recipient {shown}: it names {named}; use <host>.<identity> or --to-id"
        )
    return candidates[0]


def resolve_seat(catalog: Path, name: str | None = None, *, to_id: str | None = None,
                 for_delivery: bool = True) -> Seat:
    """The one seat ``name`` (or the immutable ``to_id``) names. Raise :class:`BusError` when it
    names none, several, or — with ``for_delivery`` — a retired seat."""
    if (name is None) == (to_id is None):
        raise BusError("name a recipient either positionally or with --to-id, not both")
    return resolve_among(_seats(catalog), catalog, name, to_id=to_id, for_delivery=for_delivery)


def reading(catalog: Path) -> list[Seat]:
    """One reading of the catalog's seats, for :func:`resolve_among` to resolve many names
    against (a thread that resolves a batch reads the catalog once, without :class:`OneReading`'s
    process-wide state)."""
    return _seats(catalog)


def resolve_among(everything: list[Seat], catalog: Path, name: str | None = None, *, to_id: str | None = None,
                  for_delivery: bool = True) -> Seat:
    """:func:`resolve_seat` against the seats of one :func:`reading`."""
    if to_id is not None:
        candidates, shown = [s for s in everything if s.id == to_id], f"with id {to_id!r}"
    else:
        candidates, shown = [s for s in everything if matches(s, name)], repr(name)
    if for_delivery and len(candidates) > 1:
        # A seat moved between hosts: retired on the old one, declared on the new one. Only the
        # live one is a recipient, so the name it kept still reaches it.
        live = [s for s in candidates if not s.retired]
        if len(live) == 1:
            candidates = live
    seat = _unique(candidates, shown, catalog)
    if for_delivery and seat.retired:
        raise BusError(f"agent {seat.bus_id} is retired; it has no bus address")
    return _located(catalog, seat)
