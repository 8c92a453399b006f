"""`st2 seat-host --scope-directory DIR` — parsing glue over :class:`st2.seathost.server.SeatHost`:
the host-level fork server and shared inotify watch of one runtime scope (the supervisor starts
it; nobody needs to by hand)."""

from __future__ import annotations

from pathlib import Path

import click


def preload() -> None:
    """Import what a forked per-seat process runs (:data:`st2.seathost.preload.DING` and
    :data:`st2.seathost.preload.RESOURCE_RUNTIMES`) once here, so every child shares those pages
    instead of importing its own, then rehearse the notifier's paths and click's parse of
    ``st2 ding``."""
    from st2.seathost.preload import DING, RESOURCE_RUNTIMES, import_all

    import_all(DING)
    import_all(RESOURCE_RUNTIMES)
    from st2.ding.rehearsal import rehearse

    rehearse()
    from st2.cli.ding import ding

    ding.make_context("ding", ["h.rehearsal", "--poll-interval", "1"])  # click's parse path


def run_forked_session(words: list[str]) -> int:
    """A forked session wrapper's entry (:mod:`st2.seathost.session_fork`): ``words`` are the
    pane's, which the front door's table recognized before handing them off; run them through
    its session rows, as the seat host's fork (no handing off again; 70 if they are no longer
    recognized)."""
    from st2.drivers import pane_anchor
    from st2.front.table import FORKED_SESSION, route
    from st2.seathost import session_fork

    if session_fork.replies:   # the pane anchor runs a TUI on request, answering on descriptor 4
        pane_anchor.adopt_channel(session_fork.STATUS_FD, session_fork.REPLY_FD)
    status = route(words, FORKED_SESSION)
    return 70 if status is None else status


def preload_native_wrappers() -> None:
    """Import what a forked Codex or opencode session wrapper runs
    (:data:`st2.seathost.preload.SESSION_WRAPPERS`; :mod:`st2.seathost.session_fork`), then
    rehearse a whole Codex session. The host runs this at its first ``fork-session``
    request, not at its start: a DING stub forked from a host that had run it costs more (its new
    objects land in the holes the rehearsal left in shared pages), so a fleet without native seats
    never pays it (docs/memory.md §Native wrappers forked onto their pane's terminal)."""
    from st2.seathost.preload import SESSION_WRAPPERS, import_all

    import_all(SESSION_WRAPPERS)
    from st2 import drivers
    from st2.drivers.codex.rehearsal import rehearse as rehearse_codex

    for verb in drivers.native_session_verbs():   # every native wrapper's session module
        drivers.driver_module(drivers.session_harness(verb), "session")

    rehearse_codex()


def entry(words: list[str]) -> int:
    """What a forked process runs: ``st2 ding`` in the supervisor's shape without click (the
    front door's :data:`st2.front.table.FORKED` rows), everything else through the click CLI."""
    from st2.front.table import FORKED, route

    status = route(words, FORKED)
    if status is not None:
        return status
    from st2.cli import run

    return run(words)


@click.command("seat-host")
@click.option("--scope-directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The runtime scope directory whose per-seat processes this host forks.")
def seat_host(scope_directory: Path) -> int:
    """Fork per-seat processes from one pre-imported parent and share one inotify instance."""
    from st2.seathost import fork
    from st2.seathost.server import SeatHost

    preload()
    fork.HOST_SCOPE = Path(scope_directory)   # a stub finds its DING service here, computing nothing
    return SeatHost(scope_directory, entry, session_entry=run_forked_session,
                    session_preload=preload_native_wrappers).serve()
