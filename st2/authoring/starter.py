"""``st2 agent new <identity> --harness <h> [--workspace W]``: a valid starter declaration,
published through the same compare-and-swap path as ``st2 agent publish --expect-absent``.

Only harnesses whose driver exists are offered (:func:`st2.drivers.available_harnesses`). The
starter is the smallest seat that runs: ``shell`` gets ``argv "sh"``; a driver harness its bare
typed block (``claude``), which its driver expands; ``ding`` is declared unless the driver
delivers mail natively. Edit it later with ``st2 agent digest`` / ``publish``. A catalog with no
operator principal on this host gets one (``principals/<host>/operator/principal.kdl``, from
:func:`st2.bus.principals.ensure_operator`), so the human who declared the seat can mail it.
"""

from __future__ import annotations

from dataclasses import dataclass

from st2.authoring.publication import PublishRefused, Published, check_names, publish
from st2.authoring.source import Captured
from st2.authoring.source_edit import quote
from st2.bus.principals import ensure_operator, operator_principal
from st2.catalog.location import CatalogLocation
from st2.base.digest import sha256
from st2.drivers import SHELL, available_harnesses, owns_delivery


def starter_text(identity: str, host: str, harness: str, workspace: str | None) -> str:
    lines = [f"agent {quote(identity)} {{", f"    host {quote(host)}"]
    if workspace is not None:
        lines.append(f"    workspace {quote(workspace)}")
    lines.append('    argv "sh"' if harness == SHELL else f"    {harness}")
    if harness == SHELL or not owns_delivery(harness):
        lines.append("    ding")
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class NewSeat:
    published: Published
    operator: str | None                        # the operator principal this call declared, if any


def new_seat(location: CatalogLocation, identity: str, harness: str, workspace: str | None) -> NewSeat:
    """Publish the starter for ``identity``; when the catalog declares no operator principal on
    this host yet, declare it too (the identity a human sends mail as). A host or identity
    discovery would refuse is refused first, before anything is written."""
    check_names(location.host, identity)
    offered = available_harnesses()
    if harness not in offered:
        raise PublishRefused("unknown-harness", f"no driver for harness {harness!r}; choose one of "
                                                f"{', '.join(offered)}")
    data = starter_text(identity, location.host, harness, workspace).encode()
    digest = sha256(data).hexdigest()
    published = publish(location, Captured("spec", data, digest), f"agents/{location.host}/{identity}/agent.kdl",
                        digest, expect_sha256=None)
    operator = None
    if operator_principal(location.root, location.host) is None:
        operator = ensure_operator(location.root, location.host).bus_id
    return NewSeat(published, operator)
