"""The supervisor's read of the catalog: discover this host's seats and lower each one.

Discovery and declaration parsing belong to :mod:`st2.catalog.discovery` and
:mod:`st2.declarations`; this module only joins them to lowering. Until those land in a given
checkout, :func:`_fallback_discover` / :func:`_fallback_load` read the same files with a
deliberately small subset of the grammar (enough for shell seats), so the supervisor never
depends on import order between parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.supervisor.lowering import SeatPlan, lower


@dataclass
class CatalogView:
    plans: list[SeatPlan] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

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
    declarations: each becomes an error line."""
    view = CatalogView()
    for host, identity, declaration_path, discovery_error in _discover(location.root):
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
        view.plans.append(lower(declaration, location.host, location.root))
    view.plans.sort(key=lambda plan: plan.agent)
    return view


def _discover(root: Path):
    try:
        from st2.catalog.discovery import discover
    except ImportError:
        yield from _fallback_discover(root)
        return
    found = discover(root)
    for error in getattr(found, "errors", ()):
        yield None, None, None, str(error)
    for seat in found.seats:
        yield seat.host, seat.identity, Path(seat.declaration_path), None


def _load(path: Path):
    try:
        from st2.declarations import load_agent
    except ImportError:
        return _fallback_load(path)
    declaration, diagnostics = load_agent(path)
    return declaration, [str(item) for item in diagnostics or ()] if declaration is None else []


def _fallback_discover(root: Path):
    agents = root / "agents"
    try:
        hosts = sorted(agents.iterdir())
    except FileNotFoundError:
        return
    for host in hosts:
        if not host.is_dir() or host.name.startswith("."):
            continue
        for seat in sorted(host.iterdir()):
            if seat.is_dir() and not seat.name.startswith(".") and (seat / "agent.kdl").is_file():
                yield host.name, seat.name, seat / "agent.kdl", None


def _fallback_load(path: Path):
    import ckdl

    from st2.declarations import model
    from st2.declarations.durations import parse_duration_seconds

    try:
        document = ckdl.parse(path.read_text())
    except Exception as error:  # ckdl raises its own ParseError; any failure is a diagnostic
        return None, [f"{path}: {error}"]
    if len(document.nodes) != 1 or document.nodes[0].name != "agent" or not document.nodes[0].args:
        return None, [f"{path}: expected exactly one agent node"]
    node = document.nodes[0]
    fields: dict = {"identity": node.args[0], "host": None, "path": path}
    tasks, render, env = [], [], {}
    for child in node.children:
        name, args, props = child.name, list(child.args), dict(child.properties)
        if name in ("workspace", "supervisor", "command") and args:
            fields[name] = args[0]
        elif name == "argv":
            fields["argv"] = tuple(str(arg) for arg in args)
        elif name == "ding":
            fields["ding"] = True
        elif name == "desired-state" and args:
            fields["desired_state"] = args[0]
            fields["desired_state_reason"] = props.get("reason")
        elif name == "env":
            env.update({entry.name: str(entry.args[0]) for entry in child.children if entry.args})
        elif name == "restart":
            values = {entry.name: entry.args[0] for entry in child.children if entry.args}
            fields["restart"] = model.Restart(
                attempts=int(values.get("attempts", 3)),
                interval_seconds=parse_duration_seconds(str(values.get("interval", "60s"))) or 60.0,
                delay_seconds=parse_duration_seconds(str(values.get("delay", "0s"))) or 0.0,
                mode=str(values.get("mode", "delay")),
            )
        elif name in ("exec", "pty", "stream") and args:
            values = {entry.name: entry for entry in child.children}
            task_env = {}
            if "env" in values:
                task_env = {entry.name: str(entry.args[0]) for entry in values["env"].children if entry.args}
            tasks.append(model.Task(
                kind=name, name=args[0],
                argv=tuple(values["argv"].args) if "argv" in values else None,
                command=values["command"].args[0] if "command" in values else None,
                keep=bool(values["keep"].args[0]) if "keep" in values and values["keep"].args else False,
                env=task_env,
            ))
        elif name == "render":
            for entry in child.children:
                entry_args = [str(arg) for arg in entry.args]
                entry_props = dict(entry.properties)
                if entry.name == "copy":
                    render.append(model.RenderOperation("copy", entry_args[1], source=entry_args[0]))
                elif entry.name in ("file", "json-upsert"):
                    render.append(model.RenderOperation(
                        entry.name, entry_args[0], content=entry_args[1] if len(entry_args) > 1 else "",
                        arrays=entry_props.get("arrays")))
                elif entry.name == "ensure-line":
                    render.append(model.RenderOperation("ensure-line", entry_args[0], line=entry_args[1]))
                elif entry.name == "git-exclude":
                    render.append(model.RenderOperation("git-exclude", entry_args[0]))
    fields.update(tasks=tuple(tasks), render=tuple(render), env=env)
    return model.AgentDeclaration(**fields), []
