"""Marker-matched declaration authority (docs/catalog.md §Declaration authority).

A declaration carrying ``meta { managed-by "nix" }`` belongs to the Nix projection that wrote
it. A write path that *rewrites* a declaration (the lifecycle verb, ``st2 agent publish``) admits
it only from a caller asserting exactly the one marker that declaration carries; every inexact
claim is refused before any write, each with its own code:

- ``invalid-managed-by``: the assertion is empty, padded, or carries control characters;
- ``nix-managed-declaration``: no assertion, and the incumbent carries the ``nix`` marker;
- ``managed-by-unmarked``: an assertion, and the incumbent carries no marker (or there is no
  readable incumbent to confirm it: its bytes do not load);
- ``managed-by-mismatch``: an assertion that is not exactly the incumbent's single marker
  (a declaration with several markers is unresolvable and admits no assertion at all).

Other markers are labels: they refuse nothing without an assertion. Presentation, address,
stream and Resource authoring refuse a Nix-owned declaration outright (:func:`refuse_nix_owned`);
no assertion admits them. Authority is always read from the incumbent, so creating a declaration
and republishing byte-identical bytes stay open (the caller decides those before asking).
"""

from __future__ import annotations

NIX = "nix"


class AuthorityRefused(Exception):
    """A write was refused for its ownership claim; nothing was written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


def markers(declaration) -> tuple[str, ...]:
    """The incumbent's ``managed-by`` markers, in order; ``()`` for no (readable) declaration."""
    return tuple(declaration.managed_by) if declaration is not None else ()


def check_assertion(assertion: str | None) -> None:
    """Refuse a malformed ``--managed-by`` value before anything else is looked at."""
    if assertion is None:
        return
    if (not assertion or assertion != assertion.strip()
            or any(ord(character) < 0x20 or ord(character) == 0x7F for character in assertion)):
        raise AuthorityRefused("invalid-managed-by",
                               f"--managed-by {assertion!r} must name a marker exactly: not empty, not padded")


def admit_rewrite(agent: str, incumbent_markers: tuple[str, ...], assertion: str | None) -> str | None:
    """Decide whether a caller asserting ``assertion`` may rewrite ``agent``'s declaration whose
    markers are ``incumbent_markers``. Return the admitted marker (the assertion that matched, for
    the receipt) or ``None`` when no assertion was needed. Raise :class:`AuthorityRefused`."""
    check_assertion(assertion)
    if assertion is None:
        if NIX in incumbent_markers:
            raise AuthorityRefused("nix-managed-declaration",
                                   f"{agent} is managed by nix; change it there, or pass --managed-by nix "
                                   "if you are that owner")
        return None
    if not incumbent_markers:
        raise AuthorityRefused("managed-by-unmarked",
                               f"{agent} carries no managed-by marker, so --managed-by {assertion} claims "
                               "an ownership its declaration does not state")
    if len(incumbent_markers) > 1:
        raise AuthorityRefused("managed-by-mismatch",
                               f"{agent} names several owners ({', '.join(incumbent_markers)}); ownership is "
                               "unresolvable and no assertion admits a rewrite")
    if assertion != incumbent_markers[0]:
        raise AuthorityRefused("managed-by-mismatch",
                               f"{agent} is managed by {incumbent_markers[0]}, not {assertion}")
    return assertion


def refuse_nix_owned(agent: str, incumbent_markers: tuple[str, ...]) -> None:
    """Presentation, address, stream and Resource authoring never touch a Nix-owned declaration."""
    if NIX in incumbent_markers:
        raise AuthorityRefused("nix-managed-declaration",
                               f"{agent} is managed by nix; change it in its Nix source (no assertion admits "
                               "this edit)")
