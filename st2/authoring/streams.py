"""``st2 agent stream add|rm``: authoring a seat's ``stream`` declarations (docs/catalog.md §Derived companions:
stream authoring is serialized, authority-scoped, source-preserving and
fail-closed for Nix ownership and invalid declarations).

``add`` appends ``stream "<name>" {}`` (external ingress: nothing is launched), ``stream "<name>"
{ command "…" }`` or ``stream "<name>" { argv "…" … }`` as the agent's last child; the same stream
again is ``unchanged``, a different one of that name is refused. ``rm`` removes it and is
idempotent. Authority: an operator (no ``ST_AGENT``) may author any seat; a seat acting as
``ST_AGENT`` only itself or a seat it supervises, directly or through its chain. A Nix-owned
declaration is refused outright; the result passes the full-catalog gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from st2.authoring.publication import PublishRefused, Rewritten, resolve_identity, rewrite
from st2.authoring.source_edit import append_child, quote, remove_child
from st2.catalog.discovery import discover
from st2.catalog.location import CatalogLocation
from st2.declarations import load_agent

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
CHAIN_LIMIT = 32


@dataclass(frozen=True)
class ChildReceipt:
    """What a stream or resource edit did: ``{"result", "identity", "<kind>": name, "present"}``."""

    agent: str
    kind: str                                   # "stream" or "resource"
    name: str
    changed: bool
    present: bool

    def wire(self) -> dict:
        return {"result": "changed" if self.changed else "unchanged", "identity": self.agent,
                self.kind: self.name, "present": self.present}

    def line(self) -> str:
        state = "declares" if self.present else "does not declare"
        return f"{self.agent} {'now ' if self.changed else ''}{state} {self.kind} {self.name!r}"


def render(name: str, argv: tuple[str, ...] | None, command: str | None) -> str:
    if argv is not None and command is not None:
        raise PublishRefused("invalid-stream", "a stream takes argv or command, not both")
    if argv is not None and (not argv or any(not part for part in argv)):
        raise PublishRefused("invalid-stream", "a stream's argv needs a program and no empty word")
    if command is not None and not command.strip():
        raise PublishRefused("invalid-stream", "a stream's command must not be empty")
    if argv is not None:
        return f"stream {quote(name)} {{ argv {' '.join(quote(part) for part in argv)} }}"
    if command is not None:
        return f"stream {quote(name)} {{ command {quote(command)} }}"
    return f"stream {quote(name)} {{}}"


def _check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise PublishRefused("invalid-stream", f"stream name {name!r} must be lower-case letters, digits, "
                                               "'.', '_' or '-', starting with a letter or digit")


def check_actor(location: CatalogLocation, agent: str, actor: str | None) -> None:
    """Refuse ``actor`` (a ``<host>.<identity>`` seat) authoring ``agent`` unless it is that seat
    or one of its supervisors."""
    if not actor or actor == agent:
        return
    supervisors = {}
    for seat in discover(location.root).seats:
        declaration, _ = load_agent(seat.declaration_path)
        if declaration is not None and declaration.supervisor:
            supervisor = declaration.supervisor
            supervisors[seat.runtime_id] = supervisor if "." in supervisor else f"{seat.host}.{supervisor}"
    current = agent
    for _ in range(CHAIN_LIMIT):
        current = supervisors.get(current)
        if current is None:
            break
        if current == actor:
            return
    raise PublishRefused("stream-not-authorized", f"{actor} neither is nor supervises {agent}, so it may not "
                                                  "author its streams")


def add_named(location: CatalogLocation, identity: str, kind: str, name: str, rendered: str,
              existing_of, wanted, actor: str | None) -> Rewritten:
    """Append ``rendered`` (a ``kind "<name>" …`` node) unless ``existing_of(declaration)`` already
    holds one of that name: equal to ``wanted`` it is unchanged, otherwise refused."""
    host, bare = resolve_identity(location, identity)
    check_actor(location, f"{host}.{bare}", actor)

    def edit(text: str, declaration) -> str:
        existing = existing_of(declaration)
        if existing is None:
            return append_child(text, rendered)
        if existing == wanted:
            return text
        raise PublishRefused(f"{kind}-exists", f"{kind} {name!r} is already declared differently; "
                                               f"`st2 agent {kind} rm {identity} {name}` first")

    return rewrite(location, identity, edit, lifecycle=False)


def remove_named(location: CatalogLocation, identity: str, kind: str, name: str, actor: str | None) -> Rewritten:
    host, bare = resolve_identity(location, identity)
    check_actor(location, f"{host}.{bare}", actor)
    return rewrite(location, identity, lambda text, declaration: remove_child(text, kind, name), lifecycle=False)


def add(location: CatalogLocation, identity: str, name: str, *, argv: tuple[str, ...] | None = None,
        command: str | None = None, actor: str | None = None) -> ChildReceipt:
    _check_name(name)
    rendered = render(name, argv, command)
    wanted = (tuple(argv) if argv is not None else None, command)
    result = add_named(location, identity, "stream", name, rendered,
                       lambda declaration: next(((task.argv, task.command) for task in declaration.tasks
                                                 if task.kind == "stream" and task.name == name), None),
                       wanted, actor)
    return ChildReceipt(result.agent, "stream", name, result.changed, True)


def remove(location: CatalogLocation, identity: str, name: str, *, actor: str | None = None) -> ChildReceipt:
    _check_name(name)
    result = remove_named(location, identity, "stream", name, actor)
    return ChildReceipt(result.agent, "stream", name, result.changed, False)
