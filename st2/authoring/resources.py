"""``st2 agent resource add|rm``: authoring a seat's ``resource`` bindings
(``resource "<name>" uri="<absolute URI>" [reason="…"]``), source-preserving, through the
full-catalog gate (which judges the URI and the reason), with the same actor authority as stream
authoring, and refusing a Nix-owned declaration outright (docs/catalog.md §Declaration authority:
Resource authoring admits no assertion).
"""

from __future__ import annotations

from st2.authoring.publication import PublishRefused
from st2.authoring.source_edit import quote
from st2.authoring.streams import NAME, ChildReceipt, add_named, remove_named
from st2.catalog.location import CatalogLocation


def _check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise PublishRefused("invalid-resource", f"resource name {name!r} must be lower-case letters, digits, "
                                                 "'.', '_' or '-', starting with a letter or digit")


def add(location: CatalogLocation, identity: str, name: str, uri: str, reason: str | None = None, *,
        actor: str | None = None) -> ChildReceipt:
    _check_name(name)
    rendered = f"resource {quote(name)} uri={quote(uri)}" + (f" reason={quote(reason)}" if reason is not None else "")
    result = add_named(location, identity, "resource", name, rendered,
                       lambda declaration: next(((resource.uri, resource.reason) for resource in declaration.resources
                                                 if resource.name == name), None),
                       (uri, reason), actor)
    return ChildReceipt(result.agent, "resource", name, result.changed, True)


def remove(location: CatalogLocation, identity: str, name: str, *, actor: str | None = None) -> ChildReceipt:
    _check_name(name)
    result = remove_named(location, identity, "resource", name, actor)
    return ChildReceipt(result.agent, "resource", name, result.changed, False)
