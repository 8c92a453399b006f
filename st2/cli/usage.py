"""`st2 usage verdict|poll|trend`: parsing glue only.

`st2 usage verdict` and `st2 usage poll` are hot paths dispatched by ``st2.entry`` before click
loads; these click commands are reached only when a global option precedes the verb (`st2
--catalog X usage verdict`) and for `st2 usage --help`. Each forwards its words unparsed to the
core function, whose own argv grammar (the ``--`` escape, the dash-led refusal) is the contract.
"""

from __future__ import annotations

import click

from st2.cli.common import exit_with



class RawCommand(click.Command):
    """A command whose words reach the callback untouched as ``words`` (click would otherwise
    eat the ``--`` the core grammar gives meaning to), except that ``-h``/``--help`` before any
    ``--`` prints the command's help and runs nothing, as for every other verb."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from st2.front.table import asks_for_help

        if asks_for_help(args):  # `--help` before any `--` is help and runs nothing
            click.echo(ctx.get_help())
            ctx.exit(0)
        ctx.params = {"words": tuple(args)}
        return []


def _root_catalog() -> None:
    """``st2 --catalog C usage …``: the core finds a declared account's catalog as ``$CATALOG``
    (what the root option defaults from), so the root option is handed on the same way."""
    import os

    catalog = (click.get_current_context().find_root().obj or {}).get("catalog")
    if catalog:
        os.environ["CATALOG"] = catalog


@click.group()
def usage() -> None:
    """The usage budget: the usage.txt snapshot, its verdict, its poller and its trend
    (`--account A` on each: a declared account's)."""


@usage.command(cls=RawCommand)
def verdict(words: tuple[str, ...]) -> None:
    """[--account A] [--] [usage-file [credentials-file]]: OK/RESET-OK exit 0, PAUSE 1, STALE 2."""
    from st2.front.table import dispatch

    _root_catalog()
    exit_with(dispatch("usage", "verdict", list(words)))


@usage.command(cls=RawCommand)
def poll(words: tuple[str, ...]) -> None:
    """[--account A] [--timeout SECONDS]: one poll cycle of the usage endpoint into usage.txt (fail-soft)."""
    from st2.front.table import dispatch

    _root_catalog()
    exit_with(dispatch("usage", "poll", list(words)))


@usage.command(cls=RawCommand)
def trend(words: tuple[str, ...]) -> None:
    """[--account A] [--] [history-file]: the footprint trend over the sample history (exit 0 or 2)."""
    from st2.front.table import dispatch

    _root_catalog()
    exit_with(dispatch("usage", "trend", list(words)))
