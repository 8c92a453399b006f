"""Load one ``agent.kdl`` into an :class:`~st2.declarations.model.AgentDeclaration`.

Given a path (normally ``<catalog>/agents/<host>/<identity>/agent.kdl``), :func:`load_agent`
returns ``(declaration, diagnostics)``: the declaration is ``None`` when any diagnostic is an
error, and every problem found is reported (one diagnostic per problem, each with the exact span of
the offending token). Unknown nodes are errors; a wrong value never silently becomes a default.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument, parse_kdl, plain, property_
from st2.declarations.diagnostics import CATALOG, ERROR, SYNTAX, Diagnostic
from st2.declarations.model import (DEFAULT_RESUME, DESCRIPTION_MAX_CHARS, RESUME_POLICIES, DESIRED_STATE_REASON_MAX_BYTES, DRIVER_HARNESSES,
                                    LIFECYCLES, NAME_MAX_CHARS, RENDER_ONLY_FIELDS, RETIRED, RUNNING,
                                    SUSPENDED, AgentDeclaration, DriverBlock)
from st2.declarations.render import read_render, read_resource
from st2.declarations.schedule import read_schedule
from st2.declarations.subscription import read_subscription
from st2.declarations.tasks import check_launch, read_argv, read_restart, read_task
from st2.declarations.worktree import read_worktree
from st2.fs.read import DECLARATION_LIMIT, read_text

STRING_FIELDS = frozenset(("identity", "host", "role", "type", "workspace", "supervisor", "command", "lifecycle",
                           "id", "address", "account"))
AGENT_FIELDS = (
    "identity", "name", "description", "host", "role", "type", "workspace", "supervisor",
    "desired-state", "retired", "keep", "lifecycle", "restart", "resource", "command", "argv",
    "ding", "env", "meta", "render", "pty", "exec", "stream", "id", "address", "schedule", "resume",
    "worktree", "subscribe", "account",
) + DRIVER_HARNESSES + RENDER_ONLY_FIELDS
KNOWN_FIELDS = frozenset(AGENT_FIELDS)
REPEATABLE = frozenset(("resource", "pty", "exec", "stream", "schedule", "subscribe"))


def load_agent(path: Path | str, *, source: str | None = None) -> tuple[AgentDeclaration | None, list[Diagnostic]]:
    """Read and validate one declaration. ``source`` names the file in diagnostics (default: the
    catalog-relative ``agents/<host>/<identity>/agent.kdl`` when the path has that shape)."""
    path = Path(path)
    host, identity = seat_of(path)
    if source is None:
        source = f"agents/{host}/{identity}/agent.kdl" if host is not None else str(path)
    try:
        text = read_text(path, DECLARATION_LIMIT)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return None, [Diagnostic(code="unreadable-declaration", severity=ERROR, layer=CATALOG, source=source,
                                 span=None, field_path=None, message=f"cannot read the declaration: {reason}")]
    return parse_agent(text, path=path, source=source, host=host, identity=identity)


def seat_of(path: Path) -> tuple[str | None, str | None]:
    """``(host, identity)`` from ``…/agents/<host>/<identity>/agent.kdl``, else ``(None, None)``."""
    parts = path.parts
    if len(parts) >= 4 and parts[-4] == "agents":
        return parts[-3], parts[-2]
    return None, None


def parse_agent(text: str, *, path: Path, source: str | None, host: str | None = None,
                identity: str | None = None) -> tuple[AgentDeclaration | None, list[Diagnostic]]:
    """Validate declaration ``text``; ``host``/``identity`` are the seat's directory names, which
    the declared values must match."""
    context = Context(text, source)
    document = parse_kdl(context, text)
    if document is None:
        return None, context.diagnostics()
    from st2.declarations.spans import SourceText, nesting_refusal

    deep = nesting_refusal(text, document.nodes)
    if deep is not None:
        return None, [Diagnostic(code="nesting-too-deep", severity=ERROR, layer=SYNTAX, source=source,
                                 span=SourceText(text).span(deep[0], deep[1]), field_path=None, message=deep[2])]

    agents = [index for index, node in enumerate(document.nodes) if node.name == "agent"]
    for index, node in enumerate(document.nodes):
        if node.name != "agent":
            context.report_shape("unexpected-top-level-node", (index,), NAME, (node.name,),
                                 f"agent.kdl accepts only top-level `agent` nodes, found `{node.name}`")
    if not agents:
        from st2.declarations.spans import SourceText

        context.add(Diagnostic(code="missing-agent", severity=ERROR, layer="declaration", source=source,
                               span=SourceText(text).span(0, 0), field_path=None,
                               message="agent.kdl declares no `agent` node",
                               help='write: agent "<identity>" { argv "<program>" }'))
        return None, context.diagnostics()
    for index in agents[1:]:
        context.report_shape("multiple-agents", (index,), WHOLE, ("agent",),
                             "agent.kdl declares exactly one `agent`; this is another")
    declaration = _read_agent(context, document.nodes[agents[0]], (agents[0],), path, host, identity)
    diagnostics = context.diagnostics()
    if any(diagnostic.severity == ERROR for diagnostic in diagnostics):
        return None, diagnostics
    return declaration, diagnostics


def _read_agent(context: Context, node: Any, path: tuple[int, ...], file_path: Path,
                directory_host: str | None, directory_identity: str | None) -> AgentDeclaration | None:
    declared = plain(node.args[0]) if node.args else None
    label = declared if isinstance(declared, str) else (directory_identity or "?")
    base = ("agent", label)
    fields.no_properties(context, node, path, ("agent",))
    if len(node.args) > 1 or (node.args and not isinstance(declared, str)) or declared == "":
        context.report_shape("invalid-value", path, argument(0) if node.args else NAME, ("agent",),
                             "`agent` takes one string argument: the identity")
        declared = None

    values: dict[str, Any] = {}
    seen: dict[str, int] = {}
    tasks: list = []
    resources: list = []
    schedules: list = []
    subscriptions: list = []
    drivers: dict[str, DriverBlock] = {}
    render_only: dict[str, tuple] = {}
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        name = child.name
        field_path = base + (name,)
        if name not in KNOWN_FIELDS:
            context.report_shape("unknown-node", child_path, NAME, field_path,
                                 f"unknown node `{name}` in agent \"{label}\"",
                                 help=partial(fields.suggestion, name, AGENT_FIELDS))
            continue
        if name not in REPEATABLE:
            if name in seen:
                context.report_shape("duplicate-field", child_path, NAME, field_path,
                                     f"`{name}` is declared more than once in agent \"{label}\"")
                continue
            seen[name] = index
        if name in STRING_FIELDS:
            value = fields.one_value(context, child, child_path, field_path, "string")
            if value == "" and name != "command":  # an empty command is check_launch's to report
                context.report_shape("invalid-value", child_path, argument(0), field_path,
                                     f"`{name}` must not be empty; omit it instead")
                value = None
            values[name] = value
        elif name in ("name", "description"):
            values[name] = _presentation(context, child, child_path, field_path)
        elif name == "desired-state":
            values[name] = _desired_state(context, child, child_path, field_path)
        elif name in ("retired", "keep"):
            values[name] = fields.one_value(context, child, child_path, field_path, "boolean")
        elif name == "ding":
            values[name] = _flag(context, child, child_path, field_path)
        elif name == "resume":
            values[name] = _resume(context, child, child_path, field_path)
        elif name == "argv":
            values[name] = read_argv(context, child, child_path, field_path)
        elif name == "restart":
            values[name] = read_restart(context, child, child_path, field_path)
        elif name == "env":
            values[name] = fields.string_map(context, child, child_path, field_path)
        elif name == "meta":
            values[name] = _meta(context, child, child_path, field_path)
        elif name == "render":
            values[name] = read_render(context, child, child_path, field_path)
        elif name == "worktree":
            values[name] = read_worktree(context, child, child_path, field_path)
        elif name == "resource":
            resource = read_resource(context, child, child_path, field_path)
            if resource is not None:
                if any(existing.name == resource.name for existing, _ in resources):
                    context.report("duplicate-resource", child_path, argument(0), field_path + (resource.name,),
                                   f"resource \"{resource.name}\" is bound more than once")
                else:
                    resources.append((resource, child_path))
        elif name in ("pty", "exec", "stream"):
            task = read_task(context, child, child_path, base)
            if task is not None:
                tasks.append((task, child_path))
        elif name in DRIVER_HARNESSES:
            drivers[name] = DriverBlock(harness=name, node=child, node_path=child_path)
        elif name in RENDER_ONLY_FIELDS:
            render_only[name] = tuple(plain(value) for value in child.args)
        elif name == "schedule":
            schedule = read_schedule(context, child, child_path, field_path)
            if schedule is not None:
                if any(existing.name == schedule.name for existing in schedules):
                    context.report("schedule-invalid", child_path, argument(0), field_path + (schedule.name,),
                                   f"schedule \"{schedule.name}\" is declared more than once")
                else:
                    schedules.append(schedule)
        elif name == "subscribe":
            subscription = read_subscription(context, child, child_path, field_path)
            if subscription is not None:
                if subscription in subscriptions:
                    context.report("subscription-invalid", child_path, argument(0), field_path + (subscription.binding,),
                                   f"subscription \"{subscription.binding}\" is declared more than once")
                else:
                    subscriptions.append(subscription)

    identity = _identity(context, node, path, base, declared, values, seen, directory_identity)
    host = values.get("host")
    if host is not None and directory_host is not None and host != directory_host:
        context.report("host-mismatch", path + (seen["host"],), argument(0), base + ("host",),
                       f"host \"{host}\" differs from the host directory \"{directory_host}\"",
                       help=f"the seat lives under agents/{directory_host}/; remove `host` or move the seat")
    check_launch(context, node, path, base, values, set(seen), f"agent \"{label}\"")
    desired_state, reason = _lifecycle(context, path, base, values, seen)
    _check_type(context, path, base, values, seen)
    lifecycle = values.get("lifecycle")
    if lifecycle is not None and lifecycle not in LIFECYCLES:
        context.report("unknown-lifecycle", path + (seen["lifecycle"],), argument(0), base + ("lifecycle",),
                       f"unknown lifecycle \"{lifecycle}\"; expected service or adopt-only")
    _check_tasks(context, path, base, label, tasks, values, seen, drivers)
    if values.get("resume") is not None and not drivers:
        context.report("resume-without-driver", path + (seen["resume"],), NAME, base + ("resume",),
                       f"`resume` applies to a seat with a typed driver block ({', '.join(DRIVER_HARNESSES)}); "
                       f"agent \"{label}\" has none",
                       help="remove `resume`, or declare the seat's harness block")
    _check_runner_environment(context, path, base, values, seen, directory_host, identity)
    if "worktree" in seen and "workspace" in seen:
        context.report("worktree-workspace-conflict", path + (seen["worktree"],), NAME, base + ("worktree",),
                       f"agent \"{label}\" declares both `workspace` and `worktree`; the worktree is the workspace",
                       help="remove `workspace`")

    if context.has_errors or identity is None:
        return None
    meta, meta_entries = values.get("meta") or ({}, ())
    return AgentDeclaration(
        identity=identity, host=host or directory_host, path=file_path,
        name=values.get("name"), description=values.get("description"), role=values.get("role"),
        workspace=values.get("workspace"), supervisor=values.get("supervisor"),
        desired_state=desired_state, desired_state_reason=reason,
        legacy_retired="retired" in seen, keep=bool(values.get("keep")),
        lifecycle=lifecycle or "service", restart=values.get("restart"),
        argv=values.get("argv"), command=values.get("command"), env=values.get("env") or {},
        ding=bool(values.get("ding")), meta=meta, meta_entries=meta_entries,
        resources=tuple(sorted((resource for resource, _ in resources), key=lambda resource: resource.name)),
        tasks=tuple(task for task, _ in tasks), render=values.get("render") or (),
        drivers=drivers, render_only=render_only, id=values.get("id"), address=values.get("address"),
        resume=values.get("resume") or DEFAULT_RESUME, worktree=values.get("worktree"),
        schedules=tuple(schedules), subscriptions=tuple(subscriptions), account=values.get("account"),
    )


def _identity(context: Context, node: Any, path: tuple[int, ...], base: tuple[str, ...], declared: str | None,
              values: dict[str, Any], seen: dict[str, int], directory_identity: str | None) -> str | None:
    child_identity = values.get("identity")
    if declared is not None and child_identity is not None and declared != child_identity:
        context.report("identity-mismatch", path + (seen["identity"],), argument(0), base + ("identity",),
                       f"`identity \"{child_identity}\"` contradicts `agent \"{declared}\"`")
        return None
    identity = child_identity or declared
    if identity is None:
        if directory_identity is None:
            context.report_shape("invalid-value", path, NAME, ("agent",),
                                 "the agent has no identity: write `agent \"<identity>\"`")
        return directory_identity
    if directory_identity is not None and identity != directory_identity:
        where = (path + (seen["identity"],), argument(0)) if child_identity is not None else (path, argument(0))
        context.report("identity-mismatch", where[0], where[1], base,
                       f"identity \"{identity}\" differs from the seat directory \"{directory_identity}\"",
                       help="a seat's identity is its directory name: rename one of them")
        return None
    return identity


def _presentation(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> str | None:
    value = fields.one_value(context, node, path, field_path, "string")
    if value is None:
        return None
    field = node.name
    limit = NAME_MAX_CHARS if field == "name" else DESCRIPTION_MAX_CHARS
    if len(value) > limit:
        context.report(f"{field}-too-long", path, argument(0), field_path,
                       f"`{field}` is {len(value)} characters; the limit is {limit}")
        return None
    if value == "" or value.strip() != value or not fields.printable_line(value):
        context.report("presentation-invalid", path, argument(0), field_path,
                       f"`{field}` must be one non-empty printable line without surrounding whitespace",
                       help=f"omit `{field}` to clear it")
        return None
    return value


def _desired_state(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> tuple[str, str | None] | None:
    state = fields.one_value(context, node, path, field_path, "string", allowed_properties=("reason",))
    reason = plain(node.properties["reason"]) if "reason" in node.properties else None
    if "reason" in node.properties and not isinstance(reason, str):
        context.report_shape("invalid-value", path, property_("reason"), field_path + ("reason",),
                             "desired-state `reason` must be a string")
        return None
    return (state, reason) if state is not None else None


def _lifecycle(context: Context, path: tuple[int, ...], base: tuple[str, ...], values: dict[str, Any],
               seen: dict[str, int]) -> tuple[str, str | None]:
    """Desired state and its reason. ``running`` carries no reason; suspended and retired need one
    (1..160 bytes, one line, no surrounding whitespace); legacy ``retired #true`` needs none."""
    pair = values.get("desired-state")
    if "desired-state" in seen and "retired" in seen:
        context.report("lifecycle-conflict", path + (max(seen["desired-state"], seen["retired"]),), NAME,
                       base + ("desired-state",),
                       "the agent declares both legacy `retired` and `desired-state`; choose one lifecycle form")
        return RUNNING, None
    if pair is None:
        return (RETIRED, None) if values.get("retired") else (RUNNING, None)
    state, reason = pair
    where = path + (seen["desired-state"],)
    field_path = base + ("desired-state",)
    if state not in (RUNNING, SUSPENDED, RETIRED):
        context.report("unknown-desired-state", where, argument(0), field_path,
                       f"unknown desired state \"{state}\"; expected running, suspended or retired")
        return RUNNING, None
    if state == RUNNING:
        if reason is not None:
            context.report("desired-state-reason-forbidden", where, property_("reason"), field_path + ("reason",),
                           "`desired-state \"running\"` takes no `reason`")
        return RUNNING, None
    if reason is None:
        context.report("desired-state-reason-required", where, WHOLE, field_path,
                       f"`desired-state \"{state}\"` needs a `reason`",
                       help=f'write: desired-state "{state}" reason="why"')
        return state, None
    if (not reason or len(reason.encode()) > DESIRED_STATE_REASON_MAX_BYTES or reason.strip() != reason
            or not fields.printable_line(reason)):
        context.report("desired-state-reason-invalid", where, property_("reason"), field_path + ("reason",),
                       "desired-state `reason` must be 1..160 UTF-8 bytes on one line without surrounding whitespace")
    return state, reason


def _check_type(context: Context, path: tuple[int, ...], base: tuple[str, ...], values: dict[str, Any],
                seen: dict[str, int]) -> None:
    job_type = values.get("type")
    if job_type is not None and job_type != "service":
        context.report("unknown-type", path + (seen["type"],), argument(0), base + ("type",),
                       f"unknown type \"{job_type}\"; the only type is \"service\"")


def _check_tasks(context: Context, path: tuple[int, ...], base: tuple[str, ...], label: str, tasks: list,
                 values: dict[str, Any], seen: dict[str, int], drivers: dict[str, DriverBlock]) -> None:
    names: dict[str, str] = {}
    for task, task_path in tasks:
        if task.name in names:
            context.report("duplicate-task", task_path, argument(0), base + (task.kind, task.name),
                           f"task name \"{task.name}\" is already used by a {names[task.name]} task")
            continue
        names[task.name] = task.kind
    compact = "argv" in seen or "command" in seen
    for task, task_path in tasks:
        if compact and task.kind == "pty" and task.name == "agent":
            context.report("compact-conflict", task_path, argument(0), base + ("pty", "agent"),
                           f"agent \"{label}\" declares both a compact launch and `pty \"agent\"`; choose one form")
        if values.get("ding") and task.kind == "exec" and task.name == "ding":
            context.report("compact-conflict", task_path, argument(0), base + ("exec", "ding"),
                           f"agent \"{label}\" declares both compact `ding` and `exec \"ding\"`; choose one form")
    # A typed driver block (claude { … }) is a launch too: its driver expands it into the argv.
    runnable = values.get("argv") is not None or values.get("command") is not None or drivers or any(
        task.launches and task.kind in ("pty", "exec") for task, _ in tasks)
    if not runnable and not context.has_errors:
        context.report("not-runnable", path, NAME, base,
                       f"agent \"{label}\" has no task with `argv` or `command`",
                       help='add `argv "<program>" …` (or `command "<shell line>"`)')


def _check_runner_environment(context: Context, path: tuple[int, ...], base: tuple[str, ...],
                              values: dict[str, Any], seen: dict[str, int], host: str | None,
                              identity: str | None) -> None:
    """ST_AGENT belongs to the runner (``<host>.<identity>``); an authored conflicting value is refused."""
    environment = values.get("env") or {}
    if "ST_AGENT" in environment and host is not None and identity is not None:
        expected = f"{host}.{identity}"
        if environment["ST_AGENT"] != expected:
            env_path = path + (seen["env"],)
            context.report("reserved-environment", env_path, WHOLE, base + ("env", "ST_AGENT"),
                           f"ST_AGENT \"{environment['ST_AGENT']}\" conflicts with the runner-owned \"{expected}\"",
                           help="omit ST_AGENT; the runner sets it")


def _flag(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> bool | None:
    """``ding`` alone means on; ``ding #true``/``ding #false`` are accepted too."""
    if not node.args and not node.properties and not node.children:
        return True
    return fields.one_value(context, node, path, field_path, "boolean")


def _resume(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> str | None:
    """``resume "last"`` (the default: a relaunch after a crash or reboot resumes the recorded
    harness session) or ``resume "never"`` (every launch starts fresh)."""
    value = fields.one_value(context, node, path, field_path, "string")
    if value is not None and value not in RESUME_POLICIES:
        context.report("unknown-resume", path, argument(0), field_path,
                       f"unknown resume policy \"{value}\"; expected {' or '.join(RESUME_POLICIES)}")
        return None
    return value


def _meta(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]):
    """``meta { managed-by "nix" … }``: an open bag of ownership and provenance markers, kept in
    order with duplicates (a writer must see an ambiguous multi-marker declaration as such)."""
    fields.no_arguments(context, node, path, field_path)
    fields.no_properties(context, node, path, field_path)
    entries = tuple((child.name, tuple(plain(value) for value in child.args)) for child in node.children)
    counts: dict[str, int] = {}
    for key, _ in entries:
        counts[key] = counts.get(key, 0) + 1
    meta = {key: arguments[0] for key, arguments in entries
            if counts[key] == 1 and len(arguments) == 1 and isinstance(arguments[0], str)}
    return meta, entries
