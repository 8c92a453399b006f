"""`st2 ding-service --scope-directory DIR` — parsing glue over
:class:`st2.ding.service.DingService`: the host-level process that runs every seat's DING loop
for the seats' stubs (the seat host forks it when the first stub asks; nobody needs to by hand)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("ding-service")
@click.option("--scope-directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The runtime scope directory whose seats' DING loops this service runs.")
def ding_service(scope_directory: Path) -> int:
    """Run every seat's DING notifier loop, one thread per seat, for the seats' stubs."""
    from st2.ding import spawner
    from st2.ding.service import DingService

    spawner.start()   # while this process is single-threaded: the seats' tmux clients spawn there
    return DingService(scope_directory).serve()
