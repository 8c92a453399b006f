"""Discover the catalog and build every roster row."""

from __future__ import annotations

import os
from pathlib import Path

from st2.catalog.discovery import diagnostic_host, discover
from st2.runtime.session_probe import SessionProbe
from st2.runtime.declaration_cache import DeclarationCache, load_facts
from st2.roster.row import RosterRow, build_row


class Problem(str):
    """One problem line (a ``str``, printed as its text) that knows the host whose subtree it
    concerns (None: the catalog's own), so Doctor can tell this host's from a remote one."""

    host: str | None = None


def _problem(text: str, host: str | None) -> Problem:
    problem = Problem(text)
    problem.host = host
    return problem


def build_roster(catalog_root: Path, now_ms: int, *, enrich: bool = False,
                 status_filter: str | None = None, identity_filter: str | None = None,
                 host: str | None = None, host_filter: str | None = None,
                 cache: DeclarationCache | None = None) -> tuple[list[RosterRow], list[Problem]]:
    """Return ``(rows sorted by identity, problems)``. A declaration that does not load still
    yields a row (its records are still worth showing); its problem is reported separately.
    ``identity_filter`` is ``<host>.<identity>`` or a bare identity on ``host``, as every other
    verb accepts. ``host`` is this host: its seats' live observed states are cross-checked against their PTY
    sessions' launch records; another host's seats are read as remote (:func:`build_row`).
    ``host_filter`` keeps only that host's seats (an explicit ``<host>.<identity>`` selector
    still names its seat). ``cache`` (:class:`st2.runtime.declaration_cache.DeclarationCache`) serves
    unchanged declarations' facts without a parse and is saved afterwards; without one every
    declaration is parsed."""
    found = discover(catalog_root)
    problems = [_problem(str(error), diagnostic_host(error)) for error in found.errors]
    rows: list[RosterRow] = []
    probe = SessionProbe(str(catalog_root), host) if host is not None else None
    for seat in found.seats:
        runtime_id = f"{seat.host}.{seat.identity}"
        if identity_filter is not None and identity_filter != runtime_id and (
                seat.host != host or identity_filter != seat.identity):
            continue
        if host_filter is not None and seat.host != host_filter and identity_filter != runtime_id:
            continue
        row, errors = seat_row(catalog_root, seat, now_ms, enrich=enrich, host=host, probe=probe, cache=cache)
        problems.extend(_problem(error, seat.host) for error in errors)
        if status_filter is not None and row.status != status_filter:
            continue
        rows.append(row)
    rows.sort(key=lambda row: row.identity)
    if cache is not None:
        cache.keep_only({os.fspath(seat.declaration_path) for seat in found.seats})
        cache.save()
    return rows, problems


def seat_row(catalog_root: Path, seat, now_ms: int, *, enrich: bool, host: str | None,
             probe: SessionProbe | None = None, cache: DeclarationCache | None = None) -> tuple[RosterRow, list[str]]:
    """One discovered seat's row and its declaration errors: the unit a live view re-reads when
    only that seat's records changed. ``probe`` is this host's session probe (made on demand)."""
    path = os.fspath(seat.declaration_path)
    facts = cache.facts(path) if cache is not None else load_facts(path)[0]
    if probe is None and host is not None and seat.host == host:
        probe = SessionProbe(str(catalog_root), host)
    row = build_row(seat.host, seat.identity, seat.directory, facts, catalog_root, now_ms, enrich,
                    probe if seat.host == host else None, remote=host is not None and seat.host != host)
    return row, list(facts["errors"])
