"""``st2 web [--listen HOST:PORT] [--cert F --key F] [--insecure-remote]``, ``st2 web pair [--url U]
[--no-qr]`` and ``st2 web token metrics`` — parsing glue over :mod:`st2.web.serve`."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options
from st2.fs.errors import EXIT_OS_ERROR, os_error_line

EXIT_REFUSED = 2


def _store(location):
    from st2.runtime.resumable_session import SessionStore

    return SessionStore.of(location.root, location.host).directory


def _access(location):
    from st2.web.access import Access

    return Access(_store(location))


@click.group("web", invoke_without_command=True)
@click.option("--listen", default=None, metavar="HOST:PORT", help="Address to serve (default 127.0.0.1:8377; port 0 picks one).")
@click.option("--cert", default=None, type=click.Path(dir_okay=False), help="TLS certificate (PEM).")
@click.option("--key", default=None, type=click.Path(dir_okay=False), help="TLS private key (PEM).")
@click.option("--insecure-remote", is_flag=True, help="Serve a non-loopback address without TLS (behind an encrypting tunnel only).")
@catalog_options
@click.pass_context
def web(context, listen: str | None, cert: str | None, key: str | None, insecure_remote: bool, location) -> None:
    """Serve the fleet's web face: live roster, seat detail, actions, events and /metrics."""
    context.obj = {**(context.obj or {}), "location": location}
    if context.invoked_subcommand is not None:
        return
    from st2.base.clock import command_clock
    from st2.runtime.declaration_cache import DeclarationCache
    from st2.top.live import LiveFleet
    from st2.web.access import SecretUnreadable
    from st2.web.serve import DEFAULT_LISTEN, ListenRefused, serve

    if bool(cert) != bool(key):
        click.echo("st2 web: give both --cert and --key, or neither", err=True)
        context.exit(EXIT_REFUSED)
    live = LiveFleet(location, clock=command_clock(), cache=DeclarationCache.open(location.root), recent=500)
    try:
        serve(location, listen or DEFAULT_LISTEN, cert, key, insecure_remote, _store(location), live)
    except ListenRefused as refusal:
        click.echo(f"st2 web: {refusal}", err=True)
        context.exit(EXIT_REFUSED)
    except SecretUnreadable as error:
        click.echo(f"st2 web: {error}", err=True)
        context.exit(EXIT_REFUSED)
    except OSError as error:
        click.echo(os_error_line(["web"], error), err=True)
        context.exit(EXIT_OS_ERROR)


@web.command("pair")
@click.option("--url", default=None, help="The address a browser reaches this host's `st2 web` at (default: the one it serves).")
@click.option("--qr/--no-qr", default=None, help="Print a QR code for a phone (default: when stdout is a terminal).")
@click.pass_context
def pair(context, url: str | None, qr: bool | None) -> None:
    """Print a pairing link (valid 10 minutes, once) and its QR code."""
    from st2.web.access import SecretUnreadable
    from st2.web.serve import DEFAULT_LISTEN, pair_text, served_url, stdout_is_terminal

    location = context.obj["location"]
    try:
        access = _access(location)
    except (SecretUnreadable, OSError) as error:
        click.echo(f"st2 web pair: {error}" if isinstance(error, SecretUnreadable) else os_error_line(["web", "pair"], error),
                   err=True)
        context.exit(EXIT_REFUSED)
    base = url or served_url(_store(location)) or f"http://{DEFAULT_LISTEN}"
    click.echo(pair_text(base, access.pairing_token(), stdout_is_terminal() if qr is None else qr), nl=False)


@web.command("token")
@click.argument("purpose", type=click.Choice(["metrics"]))
@click.pass_context
def token(context, purpose: str) -> None:
    """Print the bearer token a machine reader sends (`metrics`: Prometheus's `authorization`)."""
    from st2.web.access import SecretUnreadable

    try:
        click.echo(_access(context.obj["location"]).bearer(purpose))
    except (SecretUnreadable, OSError) as error:
        click.echo(f"st2 web token: {error}" if isinstance(error, SecretUnreadable) else os_error_line(["web", "token"], error),
                   err=True)
        context.exit(EXIT_REFUSED)
