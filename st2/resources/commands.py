"""``st2 agent resource refresh|show|ls``: the cores (docs/resources.md §Demand and receipts).

:func:`refresh` queues one durable demand for a binding of a seat on this host (refused, with
the reason, when the seat or binding is not declared, the seat lives on another host, its scheme
has no provider or the provider does not take demand, or the queue is at its bound) and, with a
wait, watches for its receipt until the wait ends. Stopping the wait (expiry, Ctrl-C, a lost
terminal) cancels nothing: the demand stays queued and the host closes it.
"""

from __future__ import annotations

import time

from st2.resources import demand
from st2.resources import state as records
from st2.runtime import layout


class ResourceRefused(Exception):
    """The verb did nothing; the text is its one line."""


def _seat(location, name: str):
    """``(seat directory, agent id, declaration)`` of the seat ``name`` names."""
    from st2.declarations import load_agent
    from st2.records.placement import resolve_seat

    try:
        directory = resolve_seat(location.root, location.host, name)
    except LookupError as error:
        raise ResourceRefused(str(error)) from None
    host, identity = directory.parent.name, directory.name
    declaration, diagnostics = load_agent(location.paths.seat(host, identity).declaration)
    if declaration is None:
        first = str(diagnostics[0]) if diagnostics else "it does not load"
        raise ResourceRefused(f"{host}.{identity}: agent.kdl does not validate: {first}")
    return directory, f"{host}.{identity}", declaration


def _binding(declaration, agent: str, binding: str):
    for resource in declaration.resources:
        if resource.name == binding:
            return resource
    raise ResourceRefused(f"{agent} declares no resource {binding!r}")


def refresh(location, name: str, binding: str, wait_seconds: float | None, wall_ms,
            poll_seconds: float = 0.05) -> demand.Receipt:
    """Queue a demand and return its receipt: closed when the host closed it within the wait,
    else pending."""
    from st2.declarations.catalog import load_catalog_declaration

    scope, _, agent, resource = _local(location, name, binding)
    scheme = resource.uri.partition(":")[0]
    provider = load_catalog_declaration(location.root)[0].providers.get(scheme)
    if provider is None:
        raise ResourceRefused(f"no resource provider serves {scheme}: (catalog.kdl declares none)")
    if not provider.demand:
        raise ResourceRefused(f"the {scheme}: resource provider does not declare capability \"demand\"")
    try:
        seq = demand.admit(scope, agent, binding, wall_ms())
    except demand.AdmissionRefused as refusal:
        raise ResourceRefused(str(refusal)) from None
    queue = layout.resource_demand(scope, agent, binding)
    deadline = time.monotonic() + (wait_seconds or 0.0)
    while True:
        receipt = demand.read_receipt(queue, agent, binding, seq)
        if receipt.state == "closed" or time.monotonic() >= deadline:
            return receipt
        time.sleep(poll_seconds)


def show(location, name: str, binding: str) -> dict:
    """The binding's declaration and its state record (``state`` null when there is none)."""
    directory, agent, declaration = _seat(location, name)
    resource = _binding(declaration, agent, binding)
    current = records.read_file(directory, agent, binding)
    return {"agent": agent, "resource": resource.wire(),
            "state": records.to_wire(current) if current is not None else None}


def listing(location, name: str) -> list[dict]:
    """:func:`show` of every binding the seat declares, in name order."""
    directory, agent, declaration = _seat(location, name)
    states = records.read_all(directory, agent)
    return [{"agent": agent, "resource": resource.wire(),
             "state": records.to_wire(states[resource.name]) if resource.name in states else None}
            for resource in declaration.resources]


def receipt_line(receipt: demand.Receipt) -> str:
    """The human form of a receipt: one line."""
    head = f"{receipt.agent} resource {receipt.binding!r} demand {receipt.demand}"
    if receipt.state != "closed":
        return f"{head}: accepted, pending (the host will close it; nothing was cancelled)"
    tail = f"; {receipt.reason}" if receipt.reason else ""
    return (f"{head}: closed by {receipt.result} (watermark {receipt.watermark}, generation {receipt.generation}, "
            f"revision {receipt.revision}){tail}")


def state_line(entry: dict) -> str:
    """One binding in ``ls``'s human form."""
    state = entry["state"]
    uri = entry["resource"]["uri"]
    if state is None:
        return f"{entry['resource']['name']}\t{uri}\tno state yet"
    failure = state["lastFailure"]
    verdict = f"failing ({failure['kind']}: {failure['message']})" if failure else "ok"
    return f"{entry['resource']['name']}\t{uri}\trevision {state['revision']}\tgeneration {state['generation']}\t{verdict}"


def _local(location, name: str, binding: str):
    """``(scope directory, seat directory, agent, resource)`` of a binding of a seat on this host."""
    from st2.runtime.scope import RuntimeScope

    directory, agent, declaration = _seat(location, name)
    resource = _binding(declaration, agent, binding)
    host = agent.split(".", 1)[0]
    if host != location.host:
        raise ResourceRefused(f"{agent} lives on host {host!r}; run this there (this is {location.host!r})")
    scope = RuntimeScope(location.root, location.host)
    scope.ensure()
    return scope.directory, str(directory), agent, resource


def propose(location, name: str, binding: str, data: bytes, expect_revision: int, wall_ms) -> dict:
    """:func:`st2.resources.proposal.propose` for a binding of a seat on this host."""
    from st2.resources import proposal

    scope, directory, agent, resource = _local(location, name, binding)
    return proposal.propose(scope, directory, agent, binding, resource.uri, data, expect_revision, wall_ms)


def recover(location, name: str, binding: str, wall_ms) -> records.State:
    """:func:`st2.resources.proposal.recover` for a binding of a seat on this host."""
    from st2.resources import proposal

    scope, directory, agent, resource = _local(location, name, binding)
    if resource.uri.partition(":")[0] != "file":
        raise ResourceRefused(f"{agent} resource {binding!r} is not a file: binding; there is nothing to recover")
    return proposal.recover(scope, directory, agent, binding, resource.uri, f"{agent}.resource-file", wall_ms)
