"""``st2 agent desired-state``: one source-preserving edit of a seat's lifecycle intent.

``running`` removes the lifecycle node (running is canonically omitted); ``suspended`` and
``retired`` write ``desired-state "<state>" reason="<reason>"`` in place of any existing
``desired-state`` or legacy ``retired`` node, or as the agent's first child. Every other byte of
the declaration is kept. The edit runs under the catalog-authoring lock, is validated by the
declaration loader before it is published atomically, and then advances
``.st2/catalog-generation`` so a resident supervisor converges at once. A declaration carrying
``meta { managed-by "<owner>" }`` is edited only when the caller names that same owner.

Success proves authored intent only; ``st2 up`` and ``st2 doctor`` prove convergence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from st2.catalog.location import CatalogLocation
from st2.declarations.agent import parse_agent, seat_of
from st2.declarations.model import DESIRED_STATE_REASON_MAX_BYTES, DESIRED_STATES, RUNNING
from st2.declarations.spans import locate
from st2.fs.atomic import ensure_directory, publish

AUTHORING_LOCK_SECONDS = 10.0


class DesiredStateRefused(Exception):
    """The edit was refused; nothing was written."""


@dataclass(frozen=True)
class Receipt:
    agent: str
    desired_state: str
    reason: str | None
    changed: bool

    def line(self) -> str:
        because = f" ({self.reason})" if self.reason else ""
        verb = "is now" if self.changed else "already is"
        return f"{self.agent} {verb} {self.desired_state}{because}; `st2 up` converges its tasks"


def set_desired_state(location: CatalogLocation, identity: str, state: str, reason: str | None,
                      managed_by: str | None = None) -> Receipt:
    """Author ``state`` for the seat ``identity`` (bare or ``<host>.<identity>``). Raise
    :class:`DesiredStateRefused` with nothing written when the request or the result is invalid."""
    _check_request(state, reason)
    bare = identity[len(location.host) + 1:] if identity.startswith(f"{location.host}.") else identity
    agent = f"{location.host}.{bare}"
    path = location.paths.seat(location.host, bare).declaration
    if not path.is_file():
        raise DesiredStateRefused(f"no declaration for {agent} at {path}")
    control = ensure_directory(location.paths.control)
    with FileLock(str(location.paths.catalog_authoring_lock), timeout=AUTHORING_LOCK_SECONDS, thread_local=False):
        text = path.read_bytes().decode("utf-8")
        declaration, diagnostics = _parse(path, text)
        if declaration is None:
            raise DesiredStateRefused(f"{path} does not load; fix it first: " + "; ".join(str(d) for d in diagnostics))
        owners = declaration.managed_by
        if owners and managed_by not in owners:
            raise DesiredStateRefused(
                f"{agent} is managed by {', '.join(owners)}; edit it there, or pass --managed-by {owners[0]} "
                "if you are that owner")
        if declaration.desired_state == state and declaration.desired_state_reason == reason and not declaration.legacy_retired:
            return Receipt(agent, state, reason, changed=False)
        edited = _edit(text, state, reason)
        checked, diagnostics = _parse(path, edited)
        if checked is None or checked.desired_state != state or checked.desired_state_reason != reason:
            raise DesiredStateRefused("the edited declaration would not load as intended: "
                                      + "; ".join(str(d) for d in diagnostics))
        publish(path, edited.encode(), control, root=location.root, mode=path.stat().st_mode & 0o777)
        _advance_generation(location, control)
    return Receipt(agent, state, reason, changed=True)


def _parse(path: Path, text: str):
    host, identity = seat_of(path)
    return parse_agent(text, path=path, source=f"agents/{host}/{identity}/agent.kdl", host=host, identity=identity)


def _check_request(state: str, reason: str | None) -> None:
    if state not in DESIRED_STATES:
        raise DesiredStateRefused(f"desired state must be one of {', '.join(DESIRED_STATES)}")
    if state == RUNNING:
        if reason is not None:
            raise DesiredStateRefused("running takes no --reason")
        return
    if not reason:
        raise DesiredStateRefused(f"{state} needs --reason (why, in at most {DESIRED_STATE_REASON_MAX_BYTES} bytes)")
    if len(reason.encode()) > DESIRED_STATE_REASON_MAX_BYTES:
        raise DesiredStateRefused(f"--reason is over {DESIRED_STATE_REASON_MAX_BYTES} bytes")
    if any(ord(character) < 0x20 or ord(character) == 0x7F for character in reason):
        raise DesiredStateRefused("--reason must not contain control characters")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _edit(text: str, state: str, reason: str | None) -> str:
    agent = next(node for node in locate(text) if node.name == "agent")
    lifecycle = [child for child in agent.children if child.name in ("desired-state", "retired")]
    replacement = None if state == RUNNING else f"desired-state {_quote(state)} reason={_quote(reason)}"
    if lifecycle:
        first, rest = lifecycle[0], lifecycle[1:]
        for node in reversed(rest):
            text = _remove_node(text, node.start, node.end)
        if replacement is None:
            return _remove_node(text, first.start, first.end)
        return text[:first.start] + replacement + text[first.end:]
    if replacement is None:
        return text
    if agent.children:
        anchor = agent.children[0].start
        line_start = text.rfind("\n", 0, anchor) + 1
        indent = text[line_start:anchor]
        if indent.strip():
            return text[:anchor] + replacement + "; " + text[anchor:]
        return text[:line_start] + indent + replacement + "\n" + text[line_start:]
    brace = text.index("{", agent.name_end)
    return text[:brace + 1] + f"\n    {replacement}\n" + text[brace + 1:]


def _remove_node(text: str, start: int, end: int) -> str:
    """Remove a node; when it sits alone on its line(s), remove those lines entirely."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:start], text[end:line_end]
    if not before.strip() and after.strip() in ("", ";"):
        return text[:line_start] + text[min(line_end + 1, len(text)):]
    tail = end
    while tail < len(text) and text[tail] in " ;":
        tail += 1
    return text[:start] + text[tail:]


def _advance_generation(location: CatalogLocation, control: Path) -> None:
    target = location.paths.catalog_generation
    try:
        current = int(target.read_text().strip() or "0")
    except (OSError, ValueError):
        current = 0
    publish(target, f"{current + 1}\n".encode(), control, root=location.root)
