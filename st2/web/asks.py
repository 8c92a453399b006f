"""What a seat is blocked on, as the web face shows and answers it.

- A native seat (Codex, opencode) answers through its wrapper's answer channel
  (:mod:`st2.drivers.answer_channel`): the page lists its pending asks, each form carrying the
  ask's identity (the wrapper's incarnation and the ask's digest), and the wrapper refuses an
  answer whose identity no pending ask has.
- A Claude seat at a permission dialog answers through its waiting ``PermissionRequest`` hook
  (:mod:`st2.drivers.claude.permission`), under the same identity rule.
- Any other seat blocked on a human (a Claude dialog st2 cannot answer safely, pi, omp, a
  free-text question without a channel) shows its captured pane and the exact `st2 attach` to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from st2.catalog.location import CatalogLocation
from st2.drivers import answer_channel
from st2.runtime.scope import RuntimeScope

PANE_LINES = 40


@dataclass
class Blocked:
    """``asks`` and ``incarnation`` from the wrapper when it answered; else ``pane`` (the
    captured screen, None when no PTY answered) and ``attach`` (the command line)."""

    asks: list[dict] = field(default_factory=list)
    incarnation: str | None = None
    channel: str | None = None   # "native" or "claude": who answers
    pane: str | None = None
    attach: str = ""


def attach_command(location: CatalogLocation, runtime_id: str) -> str:
    identity = runtime_id.split(".", 1)[1] if "." in runtime_id else runtime_id
    return f"st2 --catalog {location.root} --host {location.host} attach {identity}"


def read(location: CatalogLocation, runtime_id: str) -> Blocked:
    """Ask the seat's wrapper for its pending asks; without a channel, capture its pane."""
    scope = RuntimeScope(location.root, location.host)
    reply = answer_channel.request(scope.directory, runtime_id, {"op": "asks"})
    if reply is not None and isinstance(reply.get("asks"), list):
        asks = [ask for ask in reply["asks"] if isinstance(ask, dict) and isinstance(ask.get("digest"), str)]
        return Blocked(asks=asks, incarnation=reply.get("incarnation"), channel="native",
                       attach=attach_command(location, runtime_id))
    from st2.drivers.claude import permission

    ask = permission.read_ask(scope.directory, runtime_id)
    if ask is not None:
        return Blocked(asks=[{"digest": ask["digest"], "kind": "permission", "text": ask.get("text", "")}],
                       incarnation=ask.get("incarnation"), channel="claude", attach=attach_command(location, runtime_id))
    return Blocked(pane=capture_pane(scope, runtime_id), attach=attach_command(location, runtime_id))


def capture_pane(scope: RuntimeScope, runtime_id: str) -> str | None:
    """The seat's visible pane as plain text (its last :data:`PANE_LINES` lines), or None."""
    from st2.ding.terminal import Terminal
    from st2.runtime import launch_record
    from st2.runtime.launch_record import MalformedRecord

    try:
        record = launch_record.read(scope, runtime_id)
    except (MalformedRecord, OSError):
        return None
    if record is None or record.kind != "pty" or not record.socket:
        return None
    screen = Terminal(record.socket).capture()
    if screen is None:
        return None
    lines = list(screen.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines[-PANE_LINES:])


def answer(location: CatalogLocation, runtime_id: str, form: dict) -> str:
    """Send one answer from the page's form to the seat's wrapper; the outcome line."""
    scope = RuntimeScope(location.root, location.host)
    if form.get("channel") == "claude":
        from st2.drivers.claude import permission

        return str(permission.answer(scope.directory, runtime_id, form.get("incarnation", ""),
                                     form.get("digest", ""), form.get("verb", ""))["outcome"])
    reply = answer_channel.request(scope.directory, runtime_id, {
        "op": "answer", "incarnation": form.get("incarnation", ""), "digest": form.get("digest", ""),
        "verb": form.get("verb", ""), "text": form.get("text", "")})
    if reply is None:
        return "not answered: the seat's wrapper does not answer (is it running?)"
    return str(reply.get("outcome", "not answered"))
