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
    import st2.declarations.agent  # noqa: F401
    import st2.declarations.catalog  # noqa: F401
    import st2.ding.harness  # noqa: F401
    import st2.ding.notice  # noqa: F401
    import st2.ding.notifier  # noqa: F401
    import st2.ding.ownership  # noqa: F401
    import st2.ding.serve  # noqa: F401
    import st2.ding.terminal  # noqa: F401
    import st2.drivers  # noqa: F401
    import st2.records.status  # noqa: F401
    import st2.runtime.scope  # noqa: F401
    import st2.seathost.watch_client  # noqa: F401
    from st2.ding.rehearsal import rehearse

    rehearse()
    st2.cli.ding.ding.make_context("ding", ["h.rehearsal", "--poll-interval", "1"])  # click's parse path


@click.command("seat-host")
@click.option("--scope-directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The runtime scope directory whose per-seat processes this host forks.")
def seat_host(scope_directory: Path) -> int:
    """Fork per-seat processes from one pre-imported parent and share one inotify instance."""
    from st2.cli import run
    from st2.seathost.server import SeatHost

    preload()
    return SeatHost(scope_directory, run).serve()
