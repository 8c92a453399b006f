"""``st2 agent desired-state``: one source-preserving edit of a seat's lifecycle intent.

``running`` removes the lifecycle node (running is canonically omitted); ``suspended`` and
``retired`` write ``desired-state "<state>" reason="<reason>"`` in place of any existing
``desired-state`` or legacy ``retired`` node, or as the agent's first child. Every other byte of
the declaration is kept. The edit is a rewrite through :func:`st2.authoring.publication.rewrite`:
marker-matched authority (a ``nix``-managed declaration only for ``--managed-by nix`` exactly),
the full-catalog gate a publication of the same bytes would pass, an atomic publish and a
catalog-generation commit so a resident supervisor converges at once.

Success proves authored intent only; ``st2 up`` and ``st2 doctor`` prove convergence.
"""

from __future__ import annotations

from dataclasses import dataclass

from st2.authoring.authority import AuthorityRefused
from st2.authoring.gate import GateRefused
from st2.authoring.publication import PublishRefused, rewrite
from st2.authoring.source_edit import quote, set_field
from st2.catalog.location import CatalogLocation
from st2.declarations.model import DESIRED_STATE_REASON_MAX_BYTES, DESIRED_STATES, RUNNING


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
    :class:`DesiredStateRefused` with nothing written when the request, its authority or the
    resulting catalog is invalid."""
    _check_request(state, reason)

    def edit(text: str, declaration) -> str:
        if (declaration.desired_state == state and declaration.desired_state_reason == reason
                and not declaration.legacy_retired):
            return text
        replacement = None if state == RUNNING else f"desired-state {quote(state)} reason={quote(reason)}"
        return set_field(text, ("desired-state", "retired"), replacement)

    try:
        result = rewrite(location, identity, edit, lifecycle=True, managed_by=managed_by)
    except (PublishRefused, AuthorityRefused, GateRefused, OSError) as refusal:
        raise DesiredStateRefused(str(refusal)) from refusal
    after = result.declaration
    if after.desired_state != state or after.desired_state_reason != reason:
        raise DesiredStateRefused("the edited declaration did not load as intended")
    return Receipt(result.agent, state, reason, result.changed)


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
