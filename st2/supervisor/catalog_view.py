"""The supervisor's read of the catalog: discover this host's seats and lower each one.

Discovery and declaration parsing belong to :mod:`st2.catalog.discovery` and
:mod:`st2.declarations`; this module only joins them to lowering.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.drivers.hook_assets import hooks_directory
from st2.supervisor.lowering import SeatPlan, lower, st2_command, task_base_environment


@dataclass
class CatalogView:
    plans: list[SeatPlan] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # catalog.kdl's own errors (also in ``errors``): while it does not validate, archival waits.
    catalog_errors: list[str] = field(default_factory=list)
    catalog: object = None   # the CatalogDeclaration read (its resource providers and commands)

    def plan(self, identity: str) -> SeatPlan | None:
        return next((plan for plan in self.plans if plan.identity == identity or plan.agent == identity), None)

    def fingerprint(self) -> tuple:
        """A semantic summary: equal fingerprints mean the same desired tasks."""
        return (
            tuple(sorted(self.errors)),
            tuple(
                (plan.agent, plan.desired_state, plan.desired_state_reason, plan.errors,
                 tuple((task.runtime_id, task.kind, task.argv, task.keep) for task in plan.tasks))
                for plan in self.plans
            ),
        )


def read_catalog(location: CatalogLocation) -> CatalogView:
    """Discover and lower every seat declared for ``location.host``. Never raises for bad
    declarations: each becomes an error line, ``catalog.kdl``'s first. Another host's seats, and
    discovery problems in another host's subtree, are not this supervisor's: replication may
    deliver them, and they neither launch here nor hold back this host's reconciliation."""
    from st2.declarations.catalog import load_catalog_declaration

    from st2.runtime import layout
    from st2.runtime.scope import RuntimeScope

    view = CatalogView()
    catalog_declaration, catalog_diagnostics = load_catalog_declaration(location.root)
    view.catalog = catalog_declaration
    providers = catalog_declaration.providers
    sockets = layout.resource_sockets(RuntimeScope(location.root, location.host).directory)
    view.catalog_errors = [_diagnostic_text(item) for item in catalog_diagnostics if item.is_error]
    view.errors.extend(view.catalog_errors)
    base_environment = task_base_environment()
    accounts = catalog_declaration.accounts or {}
    stand_ins = {}
    if any(account.failover is not None for account in accounts.values()):
        import time

        from st2.accounts.placement import effective_accounts

        stand_ins = effective_accounts(accounts, location.root, int(time.time()), base_environment)
    command = st2_command()
    hooks = hooks_directory()
    for host, identity, declaration_path, discovery_error in _discover(location.root, location.host):
        if discovery_error is not None:
            view.errors.append(discovery_error)
            continue
        if host != location.host:
            continue
        declaration, diagnostics = _load(declaration_path)
        if declaration is None:
            view.errors.extend(diagnostics or [f"{declaration_path}: cannot be loaded"])
            continue
        if declaration.identity != identity:
            view.errors.append(f"{declaration_path}: declares agent {declaration.identity!r} in directory {identity!r}")
            continue
        view.plans.append(lower(declaration, location.host, location.root,
                                base_environment=base_environment, hooks=hooks, command=command,
                                providers=providers, resource_sockets=sockets,
                                accounts=accounts, account=stand_ins.get(declaration.account)))
    view.plans.sort(key=lambda plan: plan.agent)
    return view


def _discover(root: Path, this_host: str):
    from st2.catalog.discovery import diagnostic_host, discover

    found = discover(root)
    for error in found.errors:
        if diagnostic_host(error) in (None, this_host):
            yield None, None, None, _diagnostic_text(error)
    for seat in found.seats:
        yield seat.host, seat.identity, Path(seat.declaration_path), None


def _load(path: Path):
    from st2.declarations import load_agent

    declaration, diagnostics = load_agent(path)
    if declaration is None:
        return None, [_diagnostic_text(item) for item in diagnostics or ()]
    return declaration, []


def _diagnostic_text(diagnostic) -> str:
    """``file:line:column: severity[code]: message`` as the declarations layer prints it."""
    return str(diagnostic)
