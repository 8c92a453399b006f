"""``st2 agent describe`` and ``st2 agent address``: presentation authoring.

``describe`` sets or clears the seat's ``name`` and ``description``; ``address`` its mutable bus
``address``. Neither ever touches the identity or its directory (the immutable key). Each is a
source-preserving rewrite through the full-catalog gate and refuses a Nix-owned declaration
outright: presentation belongs to whoever owns the declaration's source.
"""

from __future__ import annotations

from dataclasses import dataclass

from st2.authoring.publication import rewrite
from st2.authoring.source_edit import quote, set_field
from st2.catalog.location import CatalogLocation

KEEP = object()                                 # "leave this field as it is"


@dataclass(frozen=True)
class PresentationReceipt:
    agent: str
    changed: bool
    fields: dict

    def wire(self) -> dict:
        return {"result": "changed" if self.changed else "unchanged", "identity": self.agent, **self.fields}

    def line(self) -> str:
        shown = ", ".join(f"{key} {value!r}" if value is not None else f"no {key}" for key, value in self.fields.items())
        return f"{self.agent} {'now has' if self.changed else 'already has'} {shown}"


def _setter(field: str, value):
    def edit(text: str, declaration) -> str:
        if value is KEEP or getattr(declaration, field) == value:
            return text
        return set_field(text, (field,), None if value is None else f"{field} {quote(value)}")
    return edit


def describe(location: CatalogLocation, identity: str, *, name=KEEP, description=KEEP) -> PresentationReceipt:
    """Set (a string) or clear (``None``) the name and/or description."""

    def edit(text: str, declaration) -> str:
        text = _setter("name", name)(text, declaration)
        return _setter("description", description)(text, declaration)

    result = rewrite(location, identity, edit, lifecycle=False)
    declaration = result.declaration
    return PresentationReceipt(result.agent, result.changed,
                               {"name": declaration.name, "description": declaration.description})


def address(location: CatalogLocation, identity: str, value: str | None) -> PresentationReceipt:
    """Set (a string) or clear (``None``: the bare identity answers again) the seat's address."""
    result = rewrite(location, identity, _setter("address", value), lifecycle=False)
    declaration = result.declaration
    effective = declaration.address or declaration.identity
    return PresentationReceipt(result.agent, result.changed,
                               {"address": declaration.address,
                                "busAddress": None if declaration.retired else f"{location.host}.{effective}"})
