"""`st2 seat-host --scope-directory DIR` — parsing glue over :class:`st2.seathost.server.SeatHost`:
the host-level fork server and shared inotify watch of one runtime scope (the supervisor starts
it; nobody needs to by hand)."""

from __future__ import annotations

from pathlib import Path

import click

def preload() -> None:
    """Import what a forked per-seat process runs (a DING notifier, its screen grammars and
    watch), once here, so every child shares those pages instead of importing its own."""
    import selectors  # noqa: F401
    import subprocess  # noqa: F401

    import st2.bus.mailbox  # noqa: F401
    import st2.catalog.seat_watch  # noqa: F401
    import st2.cli.common  # noqa: F401
    import st2.cli.ding  # noqa: F401
    import st2.cli.ding_service  # noqa: F401
    import st2.declarations.agent  # noqa: F401
    import st2.declarations.catalog  # noqa: F401
    import st2.ding.harness  # noqa: F401
    import st2.ding.notice  # noqa: F401
    import st2.ding.notifier  # noqa: F401
    import st2.ding.route  # noqa: F401
    import st2.ding.ownership  # noqa: F401
    import st2.ding.serve  # noqa: F401
    import st2.ding.service  # noqa: F401
    import st2.ding.stub  # noqa: F401
    import st2.ding.terminal  # noqa: F401
    import st2.catalog.location  # noqa: F401
    import st2.drivers  # noqa: F401
    import st2.records.status  # noqa: F401
    import st2.runtime.scope  # noqa: F401
    import st2.seathost.watch_client  # noqa: F401
    from st2.ding.rehearsal import rehearse

    rehearse()
    st2.cli.ding.ding.make_context("ding", ["h.rehearsal", "--poll-interval", "1"])  # click's parse path


def run_forked_session(words: list[str]) -> int:
    """A forked session wrapper's entry (:mod:`st2.seathost.session_fork`): ``words`` are the
    pane's, which :mod:`st2.drivers.session_route` recognized before handing them off; run them
    through that route without handing off again (70 if they are no longer recognized)."""
    from st2 import fast_verbs
    from st2.drivers import pane_anchor, session_route
    from st2.seathost import session_fork

    if session_fork.replies:   # the pane anchor runs a TUI on request, answering on descriptor 4
        pane_anchor.adopt_channel(session_fork.STATUS_FD, session_fork.REPLY_FD)
    verb = fast_verbs.verb_at(words)
    root = fast_verbs.parse_options(words[:verb], fast_verbs.ROOT_OPTIONS, (), 0) if verb is not None else None
    status = None
    if root is not None and words[verb] == "driver":
        status = session_route.run(words, verb, root[0], hand_off=False)
    return 70 if status is None else status


def preload_native_wrappers() -> None:
    """What a forked Codex or opencode session wrapper runs (:mod:`st2.seathost.session_fork`),
    its lazily imported paths included (listed from a running wrapper's ``sys.modules``), and a
    rehearsal of a whole Codex session. The host runs this at its first ``fork-session``
    request, not at its start: measured with ``benchmarks/fleet_memory.py --seats 20 --mix
    shell``, a DING stub forked from a host that had run it was 3.69–3.78 MiB PSS against 3.48
    (its new objects land in the holes the rehearsal left in shared pages), so a fleet without
    native seats never pays it."""
    import base64  # noqa: F401
    import hashlib  # noqa: F401
    import hmac  # noqa: F401
    import http.client  # noqa: F401
    import queue  # noqa: F401
    import secrets  # noqa: F401
    import ssl  # noqa: F401
    import string  # noqa: F401
    import textwrap  # noqa: F401
    import threading  # noqa: F401
    import traceback  # noqa: F401

    import st2.delivery.batch  # noqa: F401
    import st2.delivery.ledger  # noqa: F401
    import st2.delivery.pump  # noqa: F401
    import st2.drivers.human_desk  # noqa: F401
    import st2.drivers.lifecycle  # noqa: F401
    import st2.drivers.native_session  # noqa: F401
    import st2.drivers.pane_anchor  # noqa: F401
    import st2.drivers.resume_hold  # noqa: F401
    import st2.drivers.seat  # noqa: F401
    import st2.drivers.session_handoff  # noqa: F401
    import st2.drivers.session_route  # noqa: F401
    import st2.drivers.version_gate  # noqa: F401
    import st2.fast_verbs  # noqa: F401
    import st2.fs.lock  # noqa: F401
    import st2.records.driver_diagnostic  # noqa: F401
    import st2.records.harness_context  # noqa: F401
    import st2.records.harness_state  # noqa: F401
    import st2.records.placement  # noqa: F401
    import st2.runtime.resumable_session  # noqa: F401
    import st2.runtime.resume  # noqa: F401
    from st2 import drivers
    from st2.drivers.codex.rehearsal import rehearse as rehearse_codex

    for verb in drivers.native_session_verbs():   # every native wrapper's session module
        drivers.driver_module(drivers.session_harness(verb), "session")

    rehearse_codex()


def entry(words: list[str]) -> int:
    """What a forked process runs: ``st2 ding`` in the supervisor's shape without click
    (:mod:`st2.ding.route`), everything else through the click CLI."""
    from st2.ding import route

    status = route.run(words)
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
