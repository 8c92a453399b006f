"""The DING service's wire: one unix stream socket per runtime scope
(``<scope>/ding-service.sock``), JSON lines framed and passed exactly as the seat host's
(:mod:`st2.seathost.wire`: one request line, descriptors beside it with ``SCM_RIGHTS``).

Requests (``op``):

- ``hello`` → ``{"protocol", "build", "pid", "listening", "serving"}``: who serves, for which
  build, whether it still takes registrations (a retired service only finishes its seats), and
  one row per seat it serves, ``{"target", "stub", "watch"}`` in target order (``stub`` the
  registering stub's PID, ``watch`` true when the seat's wake-ups come through the seat host's
  shared inotify instance, false while it wakes on its timer);
- ``serve`` ``{build, target, catalog, host, socket, settings}`` + the stub's log descriptor →
  ``{"ok": true, "pid"}`` or ``{"error"}``, then the connection stays open for the seat's
  lifetime: the stub may send one ``{"op": "stop"}`` line (its SIGTERM) and sends
  ``{"op": "ping"}`` every :data:`HEARTBEAT_SECONDS`, which the service's loop answers at once with
  ``{"pong": true}`` (the stub's heartbeat: :mod:`st2.ding.stub` kills a service that leaves a ping
  unanswered for :data:`HEARTBEAT_BOUND_SECONDS`); the service sends
  one ``{"exit": status}`` line when the seat's loop has ended (``"error"`` beside it for a
  target that is not a seat, which the stub reports as ``st2 ding`` would) and closes. The stub's
  end of the connection ending (its SIGKILL) stops the seat's loop; the service's ending without
  an ``exit`` line (its death) tells the stub to serve the seat itself. ``settings`` holds
  :class:`st2.ding.notifier.Settings` by field name in camel case, each optional;
- ``retire`` → ``{"ok": true}``: the service stops listening (its socket and lock go to a
  successor) and exits once the seats it serves have ended.

A request that is not one of these, or whose fields are missing or mistyped, is answered with
one ``{"error": "…"}`` line naming what is wrong, never a traceback; a line that is not one
(:func:`st2.seathost.wire.receive`'s rules) is dropped. A registered stub's line that is neither
``ping`` nor ``stop``, or longer than :data:`STUB_LINE_LIMIT`, stops its seat and drops the
connection (the stub then serves the seat itself).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from st2.ding.notifier import Settings
from st2.records.decoding import Malformed, load_object
from st2.runtime import layout

PROTOCOL = "st2.ding-service.v1"


HEARTBEAT_SECONDS = 2.0           # a registered stub pings this often (idle cost: docs/memory.md §The DING service)
HEARTBEAT_BOUND_SECONDS = 10.0    # a ping unanswered this long: the service is unresponsive
STUB_LINE_LIMIT = 4096
PING = b'{"op":"ping"}\n'
PONG = b'{"pong":true}\n'
STOP = b'{"op":"stop"}\n'


def stub_operation(line: bytes) -> str:
    """What a registered stub's line asks: ``"ping"``, ``"stop"``, or what is wrong with it."""
    try:
        operation = load_object(line).get("op")
    except Malformed as error:
        return f"a malformed line ({error})"
    return operation if operation in ("ping", "stop") else f"an unknown line (op {operation!r})"


def service_line(line: bytes) -> dict | None:
    """A line the service sent a registered stub: None for a ``pong``, else the seat's
    ``exit`` answer (``{"exit": 70}`` and a ``malformed`` reason for anything unreadable)."""
    try:
        body = load_object(line)
    except Malformed as error:
        return {"exit": 70, "malformed": f"a line that is not one JSON object ({error})"}
    if body.get("pong") is True and len(body) == 1:
        return None
    return body


def socket_path(scope_directory: Path) -> Path:
    return layout.ding_service_socket(Path(scope_directory))


def lock_path(scope_directory: Path) -> Path:
    return layout.ding_service_lock(Path(scope_directory))


def start_lock_path(scope_directory: Path) -> Path:
    return layout.ding_service_start_lock(Path(scope_directory))


def seat_lock_file(scope_directory: Path, target: str) -> Path:
    """Where :func:`seat_lock_path` is, without making its directory (for a reader)."""
    return layout.ding_service_seat_lock(Path(scope_directory), target)


def seat_lock_path(scope_directory: Path, target: str) -> Path:
    """The lock every notifier of ``target`` started by the service or a serving-itself stub
    holds for its whole loop (``flock``; the kernel releases it on any death)."""
    path = seat_lock_file(scope_directory, target)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


SETTING_FIELDS = {_camel(field.name): field.name for field in dataclasses.fields(Settings)}


def encode_settings(settings: Settings) -> dict:
    return {_camel(field.name): getattr(settings, field.name) for field in dataclasses.fields(Settings)}


def decode_settings(body: object) -> Settings:
    """The settings of a serve request; raise ValueError naming the first bad entry."""
    if not isinstance(body, dict):
        raise ValueError("settings is not an object")
    defaults = Settings()
    values = {}
    for key, value in body.items():
        name = SETTING_FIELDS.get(key)
        if name is None:
            raise ValueError(f"unknown setting {key!r}")
        default = getattr(defaults, name)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        if not ok and isinstance(default, bool):
            raise ValueError(f"setting {key!r} must be true or false")
        if not ok or (not isinstance(value, bool) and value < 0):
            raise ValueError(f"setting {key!r} must be a non-negative {type(default).__name__}")
        values[name] = value
    return Settings(**values)


@dataclasses.dataclass(frozen=True)
class ServeRequest:
    target: str
    catalog: str
    host: str
    socket: str | None
    settings: Settings


def serve_request(target: str, catalog: Path, host: str, socket: str | None, settings: Settings,
                  build: str) -> dict:
    return {"op": "serve", "build": build, "target": target, "catalog": os.path.abspath(catalog),
            "host": host, "socket": socket, "settings": encode_settings(settings)}


def parse_serve(body: dict) -> ServeRequest:
    """A ``serve`` request's fields; raise ValueError naming the first missing or mistyped one."""
    for key in ("target", "catalog", "host"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ValueError(f"{key!r} must be a non-empty string")
    if "/" in body["target"] or body["target"].startswith("."):
        raise ValueError("'target' must be a runtime id <host>.<identity>")
    if not os.path.isabs(body["catalog"]):
        raise ValueError("'catalog' must be an absolute path")
    socket = body.get("socket")
    if socket is not None and not (isinstance(socket, str) and socket):
        raise ValueError("'socket' must be a non-empty string or null")
    return ServeRequest(body["target"], body["catalog"], body["host"], socket,
                        decode_settings(body.get("settings", {})))
