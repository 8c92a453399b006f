"""Declared non-agent service principals: ``principals/<host>/<name>/principal.kdl``.

A principal declaration is one node, ``principal "<name>" host="<host>"`` (the original's form;
``host`` may be omitted, the path then gives it), whose content must match its path. It creates no task and no presence — only a bus endpoint: a canonical
``resources/inbox`` where typed request replies land. A principal never borrows an agent's
identity: one whose bus id is also a seat's is refused.

The *operator principal* of a catalog on a host is the principal named ``operator`` there,
``principals/<host>/operator/principal.kdl``: the identity a human at a shell sends as (``st2
message send`` with neither ``--as`` nor ``$ST_AGENT``), and the one a line typed into a native
seat's view is published from. :func:`operator_principal` finds it, :func:`ensure_operator`
declares it (the demo and ``st2 agent new`` do).
"""

from __future__ import annotations

import os
from collections import namedtuple

from st2.bus import AmbiguousRecipient, BusError
from st2.bus.addressing import seats
from st2.catalog.layout import PRINCIPALS_DIR
from st2.declarations.diagnostics import ERROR

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path


class Principal(namedtuple("Principal", ("host", "name", "directory"))):
    """A declared principal (a namedtuple class: a send imports this module, and dataclasses
    cost it milliseconds)."""

    __slots__ = ()
    host: str
    name: str
    directory: Path

    @property
    def bus_id(self) -> str:
        return f"{self.host}.{self.name}"


def _load(declaration: Path) -> Principal:
    """The principal declared at ``declaration``, read by the one ``principal.kdl`` reader
    (:func:`st2.declarations.principal.load_principal`, the one ``st2 validate`` uses). Raise
    :class:`BusError` carrying its first error when it does not load."""
    from st2.declarations.principal import load_principal

    loaded, diagnostics = load_principal(declaration)
    errors = [diagnostic for diagnostic in diagnostics if diagnostic.severity == ERROR]
    if loaded is None or errors:
        raise BusError(f"{declaration}: {errors[0].message if errors else 'not a principal declaration'}")
    directory = declaration.parent
    host = loaded.host or directory.parent.name
    if directory.name != loaded.principal or directory.parent.name != host:
        raise BusError(
            f"{declaration}: content {host}.{loaded.principal} must match "
            f"principals/<host>/<name>/principal.kdl"
        )
    return Principal(host=host, name=loaded.principal, directory=directory)


def principals(catalog: Path) -> list[Principal]:
    """Every declared principal (shared discovery finds the files), sorted. Raise
    :class:`BusError` for a malformed declaration."""
    from pathlib import Path  # discovery's paths are Paths: a principal lookup pays for them

    from st2.catalog.discovery import discover

    return [_load(Path(found.declaration_path)) for found in discover(Path(catalog)).principals]


def resolve_principal(catalog: Path, name: str, this_host: str) -> Principal:
    """The principal ``name`` names: its bus id, or its bare name on ``this_host``.

    Raise :class:`BusError` when it is not a declared principal or when its bus id is also a
    seat's (a principal cannot impersonate an agent)."""
    found = [
        principal
        for principal in principals(catalog)
        if principal.bus_id == name or (principal.host == this_host and principal.name == name)
    ]
    if not found:
        raise BusError(f"{name!r} is not a declared service principal in catalog {catalog}")
    principal = found[0]
    if any(seat.bus_id == principal.bus_id for seat in seats(catalog)):
        raise BusError(f"service principal {principal.bus_id} collides with an agent identity")
    return principal


def resolve_box_owner(catalog: Path, name: str, this_host: str):
    """The seat, or else the principal, whose boxes ``name`` names (for ls, read, archive and
    reply routing). Raise the seat lookup's :class:`BusError` when neither matches."""
    from st2.bus.addressing import resolve_seat

    try:
        return resolve_seat(catalog, name, for_delivery=False)
    except AmbiguousRecipient:
        raise
    except BusError as seat_error:
        try:
            return resolve_principal(catalog, name, this_host)
        except BusError:
            raise seat_error from None


OPERATOR = "operator"


def principal_declaration(host: str, name: str) -> bytes:
    """The bytes of principal ``name``'s ``principal.kdl`` on ``host``."""
    return f'principal "{name}" host="{host}"\n'.encode()


def operator_declaration(host: str) -> bytes:
    """The bytes of the operator principal's ``principal.kdl`` on ``host``."""
    return principal_declaration(host, OPERATOR)


def operator_principal(catalog: Path, host: str) -> Principal | None:
    """The operator principal of ``catalog`` on ``host``, or None when it is not declared.
    Raise :class:`BusError` when its declaration is malformed or collides with a seat."""
    declaration = os.path.join(catalog, PRINCIPALS_DIR, host, OPERATOR, "principal.kdl")
    if not os.path.exists(declaration):
        return None
    return resolve_principal(catalog, f"{host}.{OPERATOR}", host)


def ensure_operator(catalog: Path, host: str) -> Principal:
    """Declare the operator principal on ``host`` (:func:`ensure_principal`) and return it."""
    return ensure_principal(catalog, host, OPERATOR)


def ensure_principal(catalog: Path, host: str, name: str) -> Principal:
    """Declare principal ``name`` on ``host`` (atomically; an existing one is kept) with its
    ``resources/inbox`` and ``resources/archive``, and return it."""
    from st2.bus.publication import ensure_box, staging_directory
    from st2.catalog.layout import ARCHIVE, INBOX, RESOURCES
    from pathlib import Path

    from st2.fs.atomic import publish

    catalog = Path(catalog)
    directory = catalog / PRINCIPALS_DIR / host / name
    ensure_box(directory / RESOURCES / INBOX, catalog)
    ensure_box(directory / RESOURCES / ARCHIVE, catalog)
    declaration = directory / "principal.kdl"
    if not declaration.exists():
        publish(declaration, principal_declaration(host, name), staging_directory(catalog), root=catalog)
    return resolve_principal(catalog, f"{host}.{name}", host)


def resolve_sender(catalog: Path, name: str, this_host: str) -> str:
    """The bus id ``name`` sends as: exactly one declared seat (bus id, bare identity or
    address) or declared principal. Raise :class:`BusError` for an undeclared or ambiguous
    sender, exactly as a recipient is refused — mail never claims an identity nobody declared."""
    owner = resolve_box_owner(catalog, name, this_host)
    return owner.bus_id


NO_ACTING_IDENTITY = ("no acting identity: pass --as, set $ST_AGENT, or declare the operator principal "
                      "principals/<host>/operator/principal.kdl")


def sender_id(name: str, catalog: Path, this_host: str) -> str:
    """The declared bus id a message is sent as: ``name`` (``--as``, else ``$ST_AGENT``), or when
    it is empty the bus id of this host's declared operator principal. Raise :class:`BusError`
    when there is none (:data:`NO_ACTING_IDENTITY`), or the name is hostile, undeclared or names
    several (a hostile name gets its own reason first)."""
    from st2.bus.envelope import check_name

    if not name:
        operator = operator_principal(catalog, this_host)
        if operator is None:
            raise BusError(NO_ACTING_IDENTITY)
        name = operator.bus_id
    check_name("sender", name)
    return resolve_sender(catalog, name, this_host)
