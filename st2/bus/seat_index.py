"""The host-local index of a catalog's seats as the bus sees them, so a send need not walk the
catalog.

Resolving a recipient must prove it unique among every seat (a bare identity or a declared
``address`` may name any of them), so :func:`st2.bus.addressing.seats` needs every seat's id,
address, desired state and streams. Walking the catalog for them (strict discovery, then the
declaration cache) would cost a send more than the rest of its work at fleet scale (docs/memory.md
§Both install kinds); this index serves the same list while nothing the walk saw has changed. One
file per catalog, ``<runtime state>/cache/seats.<catalog digest>.json`` (``st2.seat-index.v1``)::

    {"schema":"st2.seat-index.v1","parser":<fingerprint>,
     "directories":[[<relative path>,dev,ino,mtime_ns,ctime_ns],…],
     "seats":[[host,identity,dev,ino,size,mtime_ns,ctime_ns,<facts or null>],…]}

``directories`` are ``agents`` and every host directory under it; ``seats`` are every seat
discovery found, in its order, with its declaration's ``lstat`` identity and the bus's facts
of it (``[id, address, desiredState, [streams…]]``, null for a declaration that does not load).

It is served only when it proves the walk would find the same: every listed directory is still a
real directory with the same ``(st_dev, st_ino, st_mtime_ns, st_ctime_ns)`` — adding, removing,
renaming or retyping an entry changes its directory's mtime and ctime, so the entries discovery
judges (their names, their kinds) are the indexed ones — and every seat's ``agent.kdl`` is still a
regular file with the same ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``, the declaration
cache's key for its facts. Otherwise the catalog is walked and the index stored again.

The index is host-local input, so the hostile-input rules apply (as to
:mod:`st2.runtime.declaration_cache`): it is read through :func:`st2.fs.read.read_bounded` (no FIFO
wait, no symlink, bounded), decoded strictly and checked row by row, and anything malformed, a
parser fingerprint that is not this st2's, or any key that does not match is a miss (a walk),
never an error. It is stored only when the walk proves it: discovery reported nothing in the
agents namespace (a stray entry or a seat directory without a declaration is walked every
time), every declaration's stat was the same before and after its facts were taken, and every
key — directories and declarations — is at least :data:`st2.runtime.declaration_cache.SETTLE_NS` old,
so a change within a filesystem's timestamp granularity of the walk is never served stale. It is
published atomically (:func:`st2.fs.atomic.publish`); a failure to publish is ignored.

Standard library only at import; above :mod:`st2.catalog` and :mod:`st2.runtime.declaration_cache`.
"""

from __future__ import annotations

import json
import os
import stat
import time

from st2.catalog.layout import AGENTS_DIR, DECLARATION

SCHEMA = "st2.seat-index.v1"
INDEX_LIMIT = 16 * 1024 * 1024


def index_file(catalog):
    """Where ``catalog``'s index lives on this host (of ``catalog``'s kind: a str for a str)."""
    from st2.catalog.layout import runtime_state_text
    from st2.runtime.runtime_home import catalog_digest
    from st2.fs.paths import like
    from st2.runtime import layout

    return like(catalog, layout.seat_index(runtime_state_text(), catalog_digest(catalog)))


def fingerprint() -> str:
    """The declaration parser's fingerprint and this module's own (its format)."""
    from st2.runtime.declaration_cache import parser_fingerprint

    try:
        status = os.stat(__file__)
        own = f"seat_index.py:{status.st_size}:{status.st_mtime_ns}"
    except OSError:
        own = "seat_index.py:unreadable"
    return f"{parser_fingerprint()};{own}"


def _lstat_key(path: str, kind) -> list[int] | None:
    """``[dev, ino, size, mtime_ns, ctime_ns]`` of ``path`` when ``kind(st_mode)`` (never followed), or None."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if not kind(status.st_mode):
        return None
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def directory_key(path: str) -> list[int] | None:
    """``[dev, ino, mtime_ns, ctime_ns]`` of the real directory ``path`` (a directory's size says
    nothing of its entries), or None."""
    key = _lstat_key(path, stat.S_ISDIR)
    return None if key is None else key[:2] + key[3:]


def declaration_key(path: str) -> list[int] | None:
    """``[dev, ino, size, mtime_ns, ctime_ns]`` of the regular file ``path`` (never followed), or None."""
    return _lstat_key(path, stat.S_ISREG)


def listing_keys(root: str) -> list[list] | None:
    """The keys of ``agents`` and of every real host directory under it, taken before a walk
    (a change during the walk then fails the next load's check); None when ``agents`` is not a
    real directory or cannot be listed."""
    top = os.path.join(root, AGENTS_DIR)
    key = directory_key(top)
    if key is None:
        return None
    keys = [[AGENTS_DIR, *key]]
    try:
        with os.scandir(top) as entries:
            names = sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return None
    for name in names:
        relative = f"{AGENTS_DIR}/{name}"
        key = directory_key(os.path.join(root, relative))
        if key is None:
            return None
        keys.append([relative, *key])
    return keys


def _settled(key: list[int], now_ns: int, settle_ns: int) -> bool:
    return now_ns - max(key[-2], key[-1]) >= settle_ns


def _int_key(value: object, length: int) -> bool:
    return (isinstance(value, list) and len(value) == length
            and all(type(part) is int and part >= 0 for part in value))


def _facts_row(value: object) -> bool:
    if value is None:
        return True
    if type(value) is not list or len(value) != 4:
        return False
    declared_id, address, desired, streams = value
    return ((declared_id is None or type(declared_id) is str) and (address is None or type(address) is str)
            and type(desired) is str and type(streams) is list
            and (not streams or all(type(name) is str for name in streams)))


def load(root: str) -> list[tuple[str, str, list | None]] | None:
    """``[(host, identity, facts), …]`` of every seat discovery would find in ``root``, in its
    order, when the stored index proves it (see the module docstring); None otherwise."""
    from st2.fs.read import read_bounded
    from st2.records.decoding import Malformed, load_object

    try:
        stored = load_object(read_bounded(index_file(root), INDEX_LIMIT, follow_symlinks=False))
    except (OSError, Malformed, UnicodeError):
        return None
    directories, seats = stored.get("directories"), stored.get("seats")
    if (stored.get("schema") != SCHEMA or not isinstance(directories, list) or not isinstance(seats, list)
            or not directories or stored.get("parser") != fingerprint()):
        return None
    hosts = set()
    for row in directories:
        if not (isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) and _int_key(row[1:], 4)):
            return None
        relative = row[0]
        host = relative.partition("/")[2]
        if relative != AGENTS_DIR and not (relative == f"{AGENTS_DIR}/{host}" and host not in ("", ".", "..")
                                           and "/" not in host):
            return None
        if directory_key(os.path.join(root, relative)) != row[1:]:
            return None
        if relative != AGENTS_DIR:
            hosts.add(host)
    found = []
    prefix, suffix = os.path.join(root, AGENTS_DIR, ""), f"/{DECLARATION}"
    lstat, regular = os.lstat, stat.S_ISREG
    for row in seats:  # one row per seat of the catalog: kept lean
        if type(row) is not list or len(row) != 8:
            return None
        host, identity, dev, ino, size, mtime_ns, ctime_ns, facts = row
        if (type(host) is not str or host not in hosts or type(identity) is not str or not identity
                or "/" in identity or identity in (".", "..") or not _facts_row(facts)):
            return None
        try:
            status = lstat(f"{prefix}{host}/{identity}{suffix}")
        except OSError:
            return None
        # Compared with the real stat, the stored numbers can only pass as these very integers.
        if (status.st_ino != ino or status.st_ctime_ns != ctime_ns or status.st_mtime_ns != mtime_ns
                or status.st_size != size or status.st_dev != dev or not regular(status.st_mode)):
            return None
        found.append((host, identity, facts))
    return found


def store(root: str, directories: list[list] | None, seats: list[tuple[str, str, list[int] | None, list | None]],
          settle_ns: int) -> None:
    """Publish the index of a walk: the ``directories`` keys taken before it, and each seat's
    ``(host, identity, declaration key, facts)`` (the key None when its stat moved while its
    facts were taken). Nothing is stored unless every key is present and settled."""
    if directories is None:
        return
    now_ns = time.time_ns()
    if not all(_settled(row[1:], now_ns, settle_ns) for row in directories):
        return
    rows = []
    for host, identity, key, facts in seats:
        if key is None or not _settled(key, now_ns, settle_ns):
            return
        rows.append([host, identity, *key, facts])
    from st2.fs.atomic import ensure_directory, publish

    data = json.dumps({"schema": SCHEMA, "parser": fingerprint(), "directories": directories, "seats": rows},
                      separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    file = index_file(root)
    try:
        directory = ensure_directory(os.path.dirname(file), 0o700)
        publish(file, data, directory, root=directory.parent)
    except (OSError, UnicodeError):  # UnsafePublication is an OSError
        return
