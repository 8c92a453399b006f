"""`st2 driver …`: harness wrappers and tools. Parsing glue only.

`st2 driver claude-observe` and `st2 driver claude-statusline` are hot paths dispatched by
:mod:`st2.entry` before click loads; they are listed here only so `st2 driver --help` names them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from st2.cli.common import CatalogLocation, catalog_options, exit_with
from st2.drivers import SESSION_OPTION_CHOICES


IDENTITY = click.option("--identity", required=True,
                        help="The seat, <host>.<identity> (or a bare identity on this host).")


def _replay_options(*extra):
    """The options every ``st2 driver <harness> replay`` takes, in help order: the capture, the seat,
    the runtime id, then ``extra`` (the harness's own), then the catalog location."""
    decorators = (click.argument("capture", type=click.Path(exists=True, dir_okay=False, path_type=Path)),
                  IDENTITY,
                  click.option("--runtime-id", default=None, help="The PTY session the replayed observations name."),
                  *extra, catalog_options)

    def apply(function):
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def _resolve_seat(harness: str, location: CatalogLocation, identity: str):
    """The seat a replay writes into, or None after one line on stderr and exit status 2."""
    from st2.drivers import seat as seat_module

    try:
        return seat_module.resolve(location.root, identity)
    except seat_module.SeatNotFound as error:
        click.echo(f"st2 driver {harness} replay: {error}", err=True)
        exit_with(2)
        return None


@click.group()
def driver() -> None:
    """Harness drivers: the wrapper inside a seat's PTY, its hooks and tools."""


# The options a driver's wrapper verb may add to the common ones (its package's SESSION_OPTIONS).
SESSION_OPTIONS = {
    "--model": click.option("--model", default=None, help="providerID/modelID every delivered prompt names."),
    "--operator": click.option("--operator", default=None,
                               help="The declared principal a line typed in the PTY is sent as."),
    "--view": click.option("--view", type=click.Choice(list(SESSION_OPTION_CHOICES["--view"])), default="attach", show_default=True,
                           help="The pane: opencode's own TUI attached to the session, or the wrapper's transcript."),
}


def _session_verb(harness: str):
    """``st2 driver <harness>-session``: the driver's wrapper verb, with the options its package
    declares, running the same core the launched shape runs (:func:`st2.drivers.run_session`)."""
    from st2.drivers import package

    driver_package = package(harness)
    decorators = (driver.command(f"{harness}-session", context_settings={"ignore_unknown_options": True},
                                 help=driver_package.SESSION_HELP),
                  IDENTITY,
                  click.option("--runtime-id", default=None, help="The PTY task's runtime id (default: the seat's)."),
                  *(SESSION_OPTIONS[option] for option in driver_package.SESSION_OPTIONS),
                  click.argument("harness_argv", nargs=-1, type=click.UNPROCESSED, required=True,
                                 metavar=f"{harness.upper()}_ARGV..."),
                  catalog_options)

    def session(identity: str, runtime_id: str | None, harness_argv: tuple[str, ...], location: CatalogLocation,
                **options) -> None:
        from st2.drivers import run_session

        given = {f"--{name.replace('_', '-')}": value for name, value in options.items()}
        exit_with(run_session(harness, location.root, identity, runtime_id, list(harness_argv), given))

    for decorator in reversed(decorators):
        session = decorator(session)
    return session


def _session_verbs() -> None:
    from st2.base.harnesses import names

    for harness in names():
        _session_verb(harness)


_session_verbs()


@driver.command("claude-observe", context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def claude_observe(words: tuple[str, ...]) -> None:
    """Apply one Claude hook event (payload on stdin) to the seat's records (hot path)."""
    from st2.front.table import dispatch

    exit_with(dispatch("driver", "claude-observe", list(words)))


@driver.command("claude-permission")
@click.option("--identity", default=None, help="The seat (<host>.<identity>; default $ST_AGENT).")
@click.option("--catalog", default=None, help="Catalog root (default $ST_ROOT, then $CATALOG).")
def claude_permission(identity: str | None, catalog: str | None) -> None:
    """Claude's PermissionRequest hook: publish the ask and wait, bounded, for an answer from
    `st2 web` (payload on stdin; prints the decision, or nothing). Always exits 0."""
    from st2.drivers.claude.permission import main

    exit_with(main(catalog, identity))


@driver.command("claude-statusline", context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("words", nargs=-1, type=click.UNPROCESSED)
def claude_statusline(words: tuple[str, ...]) -> None:
    """The status-line tee: record the reading, then run the operator's renderer (hot path)."""
    from st2.front.table import dispatch

    exit_with(dispatch("driver", "claude-statusline", list(words)))


def _replay_rows(harness: str, run_replay, capture: Path, identity: str, runtime_id: str | None,
                 location: CatalogLocation) -> None:
    """Resolve the seat (exit 2 with one line when it does not) and print each replayed write."""
    from st2.base.clock import Clock

    seat = _resolve_seat(harness, location, identity)
    if seat is None:
        return
    for row in run_replay(capture, seat, Clock(), runtime_id):
        sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")


@driver.group("claude")
def claude() -> None:
    """Claude driver tools."""


@claude.command("replay")
@_replay_options()
def replay(capture: Path, identity: str, runtime_id: str | None, location: CatalogLocation) -> None:
    """Feed a captured status-line or hook JSONL through the Claude producers into the seat."""
    from st2.drivers.claude.replay import replay as run_replay

    _replay_rows("claude", run_replay, capture, identity, runtime_id, location)


def _channel_replay(harness: str):
    @driver.group(harness, help=f"{harness} driver tools.")
    def group() -> None:
        pass

    @group.command("replay", help=f"Feed a captured {harness} channel (frames JSONL) through the consumer into the seat.")
    @_replay_options()
    def channel_replay(capture: Path, identity: str, runtime_id: str | None, location: CatalogLocation) -> None:
        from st2.base.clock import Clock
        from st2.drivers.channel.replay import replay as run_replay

        seat = _resolve_seat(harness, location, identity)
        if seat is None:
            return
        diagnostics: list[str] = []
        for row in run_replay(capture, seat, harness, Clock(), runtime_id, diagnostics.append):
            sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
        for line in diagnostics:
            click.echo(f"st2 driver {harness} replay: {line}", err=True)

    return group


pi = _channel_replay("pi")
omp = _channel_replay("omp")


@driver.group("codex")
def codex() -> None:
    """Codex driver tools."""


@codex.command("replay")
@_replay_options()
def codex_replay(capture: Path, identity: str, runtime_id: str | None, location: CatalogLocation) -> None:
    """Feed a captured app-server JSONL through the Codex producers into the seat's records."""
    from st2.drivers.codex.replay import replay as run_replay

    _replay_rows("codex", run_replay, capture, identity, runtime_id, location)


@driver.group("opencode")
def opencode() -> None:
    """opencode driver tools."""


@opencode.command("replay")
@_replay_options(click.option("--providers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                              default=None, help="A GET /config/providers answer (default: config_providers*.json beside the capture)."))
def opencode_replay(capture: Path, identity: str, runtime_id: str | None, providers: Path | None,
                    location: CatalogLocation) -> None:
    """Feed a captured SSE stream (event.sse) through the opencode producers into the seat's records."""
    from st2.base.clock import Clock
    from st2.drivers.opencode.replay import replay as run_replay

    seat = _resolve_seat("opencode", location, identity)
    if seat is None:
        return
    problems: list[str] = []
    try:
        for row in run_replay(capture, seat, Clock(), runtime_id, providers, problems.append):
            sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
    except (ValueError, UnicodeDecodeError) as error:
        click.echo(f"st2 driver opencode replay: cannot read the providers window: {error}", err=True)
        exit_with(2)
        return
    for line in problems:
        click.echo(f"st2 driver opencode replay: {line}", err=True)
