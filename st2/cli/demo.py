"""`st2 demo`: st2's main job on the bundled demo catalog (shell seats, no model account)."""

from __future__ import annotations

import click


@click.command("demo")
@click.option("--keep", is_flag=True, help="Leave the demo catalog (and its seats) in place afterwards.")
def demo(keep: bool) -> None:
    """Build the demo catalog under a temp dir, run st2 on it and print its roster."""
    from st2.demo.run import run_demo

    raise SystemExit(run_demo(keep=keep, echo=click.echo))
