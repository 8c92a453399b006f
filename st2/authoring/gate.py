"""The full-catalog gate: a write is admitted only when the catalog it would produce validates.

The prospective catalog is judged in place (``validate_catalog`` with an overlay of the one
seat's new text), so nothing is written before admission and every error elsewhere in the
catalog refuses too: a publication never commits a catalog the supervisor would reject.
Warnings pass. An error confined to another host's subtree (``agents/<other>/…``,
``principals/<other>/…``, neither this host nor the published seat's) is that host's to fix:
replication delivered it here, no supervisor that runs this seat reads it, and it does not
hold back this publication.
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.authoring.validation import Overlay, validate_catalog
from st2.declarations.diagnostics import ERROR, Diagnostic


class GateRefused(Exception):
    """The prospective catalog does not validate; ``diagnostics`` are its errors."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        lines = "; ".join(diagnostic.human().splitlines()[0] for diagnostic in diagnostics)
        super().__init__(f"[full-catalog-validation] the catalog would not validate: {lines}")
        self.diagnostics = diagnostics
        self.code = "full-catalog-validation"


def admit(location: CatalogLocation, host: str, identity: str, text: str,
          directory: Path | None = None) -> None:
    """Raise :class:`GateRefused` unless the catalog with ``agents/<host>/<identity>/agent.kdl``
    holding ``text`` (the seat's other files read from ``directory`` when given) validates."""
    diagnostics = validate_catalog(location.root, location.host,
                                   overlay=Overlay(host, identity, text, directory))
    from st2.catalog.discovery import diagnostic_host

    concerned = (None, location.host, host)
    errors = [diagnostic for diagnostic in diagnostics
              if diagnostic.severity == ERROR and diagnostic_host(diagnostic) in concerned]
    if errors:
        raise GateRefused(errors)
