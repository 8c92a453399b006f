"""A line a human types in a native seat's PTY, sent as a bus message into the seat's own inbox
from its operator: the principal the driver block's ``operator`` names, else the catalog's
operator principal on this host (``principals/<host>/operator``,
:func:`st2.bus.principals.operator_principal`). Shared by the Codex and opencode human views."""

from __future__ import annotations

from pathlib import Path


def publish_operator_line(catalog: Path, seat, operator: str | None, line: str, clock, note, block: str) -> None:
    """Send ``line``; report the outcome (or why nothing was written) through ``note``."""
    from st2.bus import BusError
    from st2.bus.addressing import resolve_seat
    from st2.bus.principals import OPERATOR, operator_principal, resolve_principal
    from st2.bus.send import send

    host = seat.agent.split(".", 1)[0]
    try:
        principal = (resolve_principal(catalog, operator, host) if operator
                     else operator_principal(catalog, host))
        if principal is None:
            note(f"no operator principal is declared (principals/{host}/{OPERATOR}/principal.kdl, or "
                 f"{block} {{ operator \"…\" }}); line not sent")
            return
        recipient = resolve_seat(catalog, seat.agent)
        receipt = send(catalog, recipient, sender=principal.bus_id, body=line, subject=line[:80], clock=clock)
    except BusError as error:
        note(f"line not sent: {error}")
        return
    note(f"sent as {principal.bus_id}: {receipt.filename}")
