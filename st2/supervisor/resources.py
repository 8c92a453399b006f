"""The supervisor's side of resource observation: the bindings this host's running seats
declare, each with the provider runtime task that serves its scheme (docs/resources.md
§Providers), handed to :class:`st2.resources.host.ResourceHost` after every pass."""

from __future__ import annotations

from st2.declarations.resource_providers import target_path
from st2.resources.host import ResourceHost, Watched
from st2.supervisor.lowering import TaskRole


def watched(view, seat_directory) -> list[Watched]:
    """Every binding of a running seat whose scheme has a provider runtime task in its plan.
    ``seat_directory(host, identity)`` gives a seat's catalog directory."""
    catalog = view.catalog
    if catalog is None:
        return []
    providers, commands = catalog.providers, catalog.commands
    found = []
    for plan in view.plans:
        if not plan.running or plan.declaration is None:
            continue
        runtimes = {task.name: task.runtime_id for task in plan.tasks if task.role is TaskRole.RESOURCE}
        for resource in plan.declaration.resources:
            scheme = resource.uri.partition(":")[0]
            runtime_id = runtimes.get(f"resource-{scheme}")
            if runtime_id is None:
                continue
            provider = providers[scheme]
            target = _target(scheme, resource.uri, commands, provider)
            found.append(Watched(plan.agent, resource.name, resource.uri, scheme,
                                 str(seat_directory(plan.host, plan.identity)), runtime_id, target,
                                 provider.interval_seconds, provider.timeout_seconds, provider.demand))
    return found


def _target(scheme: str, uri: str, commands: dict, provider) -> dict:
    """What the runtime is told to observe: a path, or the command ``catalog.kdl`` names."""
    if scheme in ("file", "git"):
        return {"path": target_path(uri)}
    if scheme == "cmd":
        command = commands.get(uri.partition(":")[2])
        if command is None:
            return {"argv": None, "timeoutSeconds": None}
        return {"argv": list(command.argv), "timeoutSeconds": min(command.timeout_seconds, provider.timeout_seconds * 0.8)}
    return {}


def start(scope_directory, wall_ms, say) -> ResourceHost:
    return ResourceHost(scope_directory, wall_ms, say).start()
