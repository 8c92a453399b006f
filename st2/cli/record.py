"""`st2 record show <identity> [--raw]` — an operator's and a test's view of a seat's four
records: each record's raw bytes beside the projection a roster consumer would see. Parsing glue
over :mod:`st2.records`."""

from __future__ import annotations

import json

import click

from st2.cli.common import CatalogLocation, catalog_options
from st2.base.clock import SYSTEM_CLOCK
from st2.records.placement import resolve_seat


def show_seat(seat, now_ms: int, raw_only: bool) -> list[str]:
    """The lines `record show` prints for one seat directory."""
    from st2.fs.read import RECORD_LIMIT, read_bounded
    from st2.records import driver_diagnostic, harness_context, harness_state, status

    def raw_text(name: str) -> str:
        try:
            data = read_bounded(seat / name, RECORD_LIMIT, follow_symlinks=False)
        except FileNotFoundError:
            return "(no record)"
        except OSError as error:
            return f"(unreadable: {error.strerror})"
        text = data.decode("utf-8", errors="backslashreplace")
        # A one-line JSON record prints as itself; anything else (the two-line status) prints
        # as a JSON string so its line structure stays visible on one line.
        body = text[:-1] if text.endswith("\n") else text
        return body if body.startswith("{") and "\n" not in body else json.dumps(text)

    presence = status.read_file(seat / status.RECORD_NAME, now_ms)
    projections = {
        status.RECORD_NAME: {"presence": presence.presence, "form": presence.form, "reason": presence.reason},
        harness_state.RECORD_NAME: harness_state.to_wire(harness_state.read_file(seat / harness_state.RECORD_NAME, now_ms)),
        harness_context.RECORD_NAME: harness_context.to_wire(harness_context.read_file(seat / harness_context.RECORD_NAME, now_ms)),
        driver_diagnostic.RECORD_NAME: driver_diagnostic.to_wire(driver_diagnostic.read_file(seat / driver_diagnostic.RECORD_NAME, now_ms)),
    }
    lines = []
    for name, projection in projections.items():
        lines.append(f"== {name}")
        lines.append(f"raw:        {raw_text(name)}")
        if not raw_only:
            lines.append(f"projection: {json.dumps(projection, separators=(',', ':'))}")
    return lines


@click.group("record")
def record() -> None:
    """Inspect a seat's records."""


@record.command("show")
@click.argument("identity")
@click.option("--raw", "raw_only", is_flag=True, help="Print only the raw record bytes.")
@catalog_options
def show(identity: str, raw_only: bool, location: CatalogLocation) -> None:
    """Print each record of IDENTITY raw and as projected."""
    try:
        seat = resolve_seat(location.root, location.host, identity)
    except LookupError as error:
        raise click.ClickException(str(error)) from error
    for line in show_seat(seat, SYSTEM_CLOCK.wall_ms(), raw_only):
        click.echo(line)
