"""``st2 metrics --textfile PATH``: write the fleet's Prometheus metrics once for node_exporter's
textfile collector (parsing glue over :func:`st2.web.metrics.write_textfile`).

Exit status: 0 written; 74 (:data:`st2.fs.errors.EXIT_OS_ERROR`) when the machine refused the
write, with one line on stderr.
"""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("metrics")
@click.option("--textfile", required=True, metavar="PATH",
              help="Write the metrics here (atomically; node_exporter reads only a name ending in .prom).")
@catalog_options
def metrics(textfile: str, location) -> None:
    """Read the fleet once and write its Prometheus metrics to PATH."""
    from st2.base.clock import command_clock
    from st2.fs.errors import EXIT_OS_ERROR, os_error_line
    from st2.runtime.declaration_cache import DeclarationCache
    from st2.top.live import LiveFleet
    from st2.web.metrics import write_textfile

    # The declarations as `st2 agents` and `st2 top` read them.
    live = LiveFleet(location, clock=command_clock(), cache=DeclarationCache.open(location.root))
    live.load()
    try:
        write_textfile(live, textfile)
    except OSError as error:
        click.echo(os_error_line(["metrics"], error), err=True)
        exit_with(EXIT_OS_ERROR)
