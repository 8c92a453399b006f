"""Where a seat's records are published from (docs/records.md §Placement and replicated paths).

A staged temporary name inside the replicated ``agents/`` namespace is propagated by a
replication engine as a real key and restored after a later local delete, so every record
writer stages in the catalog control plane, ``<catalog>/.st2/<staging>``, and renames only the
canonical path in. The staging directory is derived from the exact canonical
``<catalog>/agents/<host>/<identity>`` ancestry and nothing else: no upward search, no symlink
followed, no copy fallback. Standard library only: hot paths import this.
"""

from __future__ import annotations

import os

from st2.catalog import layout
from st2.fs.atomic import UnsafePublication, check_real_directories, ensure_real_directory, publish
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: hot paths publish through here, and pathlib costs them milliseconds
    from pathlib import Path


def _canonical_catalog(seat_dir: str) -> str:
    """The catalog of an absolute, normalized ``<catalog>/agents/<host>/<identity>``."""
    host_dir = os.path.dirname(seat_dir)
    agents = os.path.dirname(host_dir)
    catalog = os.path.dirname(agents)
    if catalog == agents or os.path.basename(agents) != layout.AGENTS_DIR:
        raise UnsafePublication(f"{seat_dir}: not a canonical <catalog>/agents/<host>/<identity> directory")
    return catalog


def catalog_root_of(seat_dir: Path | str) -> Path | str:
    """Given a seat directory, return its catalog root (of ``seat_dir``'s kind). Raise
    :class:`UnsafePublication` unless the path is exactly ``<catalog>/agents/<host>/<identity>``
    made of real directories."""
    absolute = os.path.abspath(seat_dir)
    catalog = _canonical_catalog(absolute)
    check_real_directories(absolute, root=catalog)
    return like(seat_dir, catalog)


def staging_dir(seat_dir: Path | str, staging_name: str) -> Path | str:
    """Return (creating when missing) ``<catalog>/.st2/<staging_name>`` for ``seat_dir`` (of its
    kind), after checking that it and ``.st2`` are real directories rather than symlinks."""
    catalog = _canonical_catalog(os.path.abspath(seat_dir))
    control = os.path.join(catalog, layout.CONTROL_DIR)
    staging = os.path.join(control, staging_name)
    ensure_real_directory(control)
    ensure_real_directory(staging)
    return like(seat_dir, staging)


def publish_record(seat_dir: Path | str, record_name: str, data: bytes, staging_name: str, mode: int = 0o644) -> None:
    """Atomically replace ``<seat_dir>/<record_name>`` with ``data``, staged outside the seat.
    :func:`st2.fs.atomic.publish` checks the seat's ancestry up to the catalog root and that the
    staging directory is on the seat's device."""
    seat_dir = os.path.abspath(seat_dir)
    catalog = _canonical_catalog(seat_dir)
    staging = staging_dir(seat_dir, staging_name)
    publish(os.path.join(seat_dir, record_name), data, staging, root=catalog, mode=mode)


def resolve_seat(catalog: Path, host: str, name: str) -> Path:
    """The seat directory a CLI argument names: a bus id ``<host>.<identity>`` when that seat
    exists, else a bare identity on ``host``. Raise LookupError when neither exists. (CLI only:
    pathlib is imported here, off the hot paths.)"""
    from pathlib import Path

    agents = Path(catalog) / layout.AGENTS_DIR
    candidates = []
    if "." in name:
        seat_host, identity = name.split(".", 1)
        candidates.append(agents / seat_host / identity)
    candidates.append(agents / host / name)
    for candidate in candidates:
        if candidate.is_dir() and not candidate.is_symlink():
            return candidate
    raise LookupError(f"no agent {name!r} in {catalog} (looked for {', '.join(str(c) for c in candidates)})")

