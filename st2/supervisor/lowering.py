"""Lowering: one seat declaration becomes the tasks the supervisor keeps running.

- the canonical agent PTY task ``<host>.<identity>`` (from ``argv``/``command``),
- the derived DING exec task ``<host>.<identity>.ding`` running ``st2 ding <host>.<identity>``
  (its target PTY task) when the seat declares ``ding`` (a companion of the agent task),
- stream tasks for streams with a launch (companions too), authored ``exec``/``pty`` tasks,
- one resource provider runtime ``<host>.<identity>.resource-<scheme>`` per URI scheme the
  seat's ``resource`` bindings use that has a provider (a companion, like a stream adapter;
  docs/resources.md §Providers), told its socket in ``ST2_RESOURCE_SOCKET``.

Every task's environment carries ``CATALOG``, ``ST_ROOT``, ``ST_AGENT=<host>.<identity>`` and
``ST_HOOKS``. An authored ``ST_AGENT`` equal to that value is accepted; any other value refuses
the whole seat here, before any workspace or runner mutation. The PTY metadata is runner-owned
too: every PTY task carries the actor path ``ST_ACTOR_PATH`` (the seat's directory in the
catalog), and only the canonical agent PTY carries the agent role ``ST_ROLE=agent``; whatever the
supervisor inherited or a task authored under those two names is dropped, so an exec task or an
authored PTY never claims to be the agent. The compact form (``argv``) and the explicit
``pty "agent"`` task lower to the same values, and a dead task relaunched is lowered again, so
it keeps them and its ``ST_AGENT``.
"""

from __future__ import annotations

import enum
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from st2.drivers.hook_assets import hooks_directory
from st2.declarations.model import DEFAULT_RESTART, RUNNING, AgentDeclaration, Restart

# The supervisor's own service plumbing must not leak into tasks: a task that inherited
# NOTIFY_SOCKET could tell systemd the supervisor is ready or stopping.
SUPERVISOR_ONLY_ENVIRONMENT = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS",
                               "LISTEN_PID", "LISTEN_FDNAMES", "TMUX", "TMUX_PANE")

DING_TASK = "ding"
AGENT_TASK = "agent"
ACTOR_PATH = "ST_ACTOR_PATH"
ROLE = "ST_ROLE"
AGENT_ROLE = "agent"


class TaskRole(enum.Enum):
    AGENT = "agent"          # the canonical agent PTY task
    DING = "ding"            # derived DING companion
    STREAM = "stream"        # derived stream companion
    RESOURCE = "resource"    # derived resource provider runtime companion
    AUTHORED = "authored"    # an explicit exec/pty task


@dataclass(frozen=True)
class Task:
    runtime_id: str
    agent: str               # <host>.<identity>
    identity: str
    name: str
    role: TaskRole
    kind: str                # "pty" | "exec"
    argv: tuple[str, ...]
    environment: dict[str, str]
    directory: str | None
    restart: Restart
    keep: bool = False
    lifecycle: str = "service"

    @property
    def companion(self) -> bool:
        """Derived companions run only alongside an eligible canonical agent task."""
        return self.role in (TaskRole.DING, TaskRole.STREAM, TaskRole.RESOURCE)


@dataclass(frozen=True)
class SeatPlan:
    host: str
    identity: str
    agent: str
    desired_state: str
    desired_state_reason: str | None
    supervisor: str | None
    workspace: Path | None
    declaration_path: Path
    tasks: tuple[Task, ...] = ()
    errors: tuple[str, ...] = ()
    declaration: AgentDeclaration | None = field(default=None, compare=False)
    account: str | None = None   # the declared account its tasks are lowered onto (st2.accounts)

    @property
    def running(self) -> bool:
        return self.desired_state == RUNNING

    @property
    def agent_task(self) -> Task | None:
        return next((task for task in self.tasks if task.role is TaskRole.AGENT), None)


def st2_command() -> list[str]:
    """How a task runs this st2: the entry point we were started as when it is an ``st2``
    executable, else this interpreter with ``-m st2``."""
    invoked = sys.argv[0] if sys.argv else ""
    if os.path.basename(invoked) == "st2" and os.path.isfile(invoked):
        return [os.path.abspath(invoked)]
    found = shutil.which("st2")
    if found and os.path.dirname(found) == os.path.dirname(sys.executable):
        return [found]
    return [sys.executable, "-m", "st2"]


def expand_workspace(workspace: str | None) -> Path | None:
    if not workspace:
        return None
    return Path(os.path.expanduser(workspace))


def task_base_environment(environment: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every task starts from: the supervisor's, minus its service plumbing."""
    base = dict(os.environ if environment is None else environment)
    for name in SUPERVISOR_ONLY_ENVIRONMENT:
        base.pop(name, None)
    return base


def lower(declaration: AgentDeclaration, host: str, catalog: Path, *,
          base_environment: dict[str, str] | None = None, hooks: str | None = None,
          command: list[str] | None = None, providers: dict | None = None,
          resource_sockets: Path | None = None, accounts: dict | None = None,
          account: str | None = None) -> SeatPlan:
    """Lower ``declaration`` for ``host``. Errors are returned in the plan (with no tasks),
    never raised; a plan with errors must not be reconciled. Pass ``base_environment`` (from
    :func:`task_base_environment`), ``hooks`` and ``command`` (:func:`st2_command`, a PATH search)
    when lowering many seats at once. ``providers`` (scheme -> ``ResourceProvider``, from
    ``catalog.kdl``) and ``resource_sockets`` (the scope's socket directory) lower the seat's
    resource provider runtimes; without them the seat has none. ``accounts`` (``catalog.kdl``'s)
    puts a seat declaring ``account`` on it (:func:`st2.accounts.scope.seat_environment`, winning
    over the seat's own ``env``); ``account`` names another declared account to run it on instead
    (a failover or a move, :mod:`st2.accounts.placement`). An undeclared account is a plan error."""
    agent = f"{host}.{declaration.identity}"
    workspace = expand_workspace(declaration.workspace)
    if declaration.worktree is not None:  # the seat's own worktree is its workspace (st2.worktree)
        from st2.worktree.checkout import worktree_path

        workspace = Path(worktree_path(declaration.worktree, agent))
    driver_error = None
    if declaration.drivers:
        # Typed driver blocks (`claude { … }`) become the seat's argv and render operations.
        from st2.drivers import expand_driver_blocks

        try:
            declaration = expand_driver_blocks(declaration, host, command or st2_command())
        except ValueError as error:
            driver_error = str(error)
    plan = dict(
        host=host, identity=declaration.identity, agent=agent,
        desired_state=declaration.desired_state, desired_state_reason=declaration.desired_state_reason,
        supervisor=declaration.supervisor, workspace=workspace,
        declaration_path=Path(declaration.path), declaration=declaration,
    )
    injected = {
        "CATALOG": str(catalog),
        "ST_ROOT": str(catalog),
        "ST_AGENT": agent,
        "ST_HOOKS": hooks or hooks_directory(),
    }
    base = task_base_environment(base_environment)
    errors: list[str] = [driver_error] if driver_error else []
    account_name = account or declaration.account
    plan["account"] = account_name
    if account_name is not None:
        if account_name not in (accounts or {}):
            errors.append(f"{declaration.path}: account {account_name!r} is not declared in catalog.kdl; "
                          "leaving the seat alone")
        else:
            from st2.accounts.scope import seat_environment

            injected.update(seat_environment(accounts[account_name], catalog))
    tasks: list[Task] = []
    restart = declaration.restart_policy or DEFAULT_RESTART
    lowered = declaration.runtime_tasks(host)
    names = [task.name for task in lowered]
    for name in sorted({name for name in names if names.count(name) > 1}):
        errors.append(f"{declaration.path}: task name {name!r} is declared more than once")
    has_agent = any(task.name == AGENT_TASK and task.id == agent for task in lowered)
    for declared in lowered:
        authored_agent = declared.env.get("ST_AGENT")
        if authored_agent is not None and authored_agent != agent:
            errors.append(
                f"{declaration.path}: task {declared.name!r} sets ST_AGENT={authored_agent!r}, "
                f"but this seat is {agent!r}; refusing the seat before any launch"
            )
            continue
        role = _role(declared, agent)
        if role is TaskRole.STREAM and not has_agent:
            errors.append(f"{declaration.path}: stream {declared.name!r} launches, but the seat has no "
                          "agent argv/command; a stream alone makes nothing runnable")
            continue
        if role is TaskRole.DING and not has_agent:
            errors.append(f"{declaration.path}: ding is declared, but the seat has no agent argv/command")
            continue
        if role is TaskRole.DING:
            # The notifier is told its target: the canonical agent PTY task.
            argv = (*(command or st2_command()), "ding", agent)
        elif declared.argv is not None:
            argv = tuple(declared.argv)
        else:
            argv = ("/bin/sh", "-c", declared.command)
        environment = {**base, **declared.env, **injected}
        environment.pop(ACTOR_PATH, None)
        environment.pop(ROLE, None)
        if declared.kind == "pty":
            environment[ACTOR_PATH] = str(Path(declaration.path).parent)
            if role is TaskRole.AGENT:
                environment[ROLE] = AGENT_ROLE
        directory = declared.cwd or (str(workspace) if workspace else str(declaration.path.parent))
        tasks.append(Task(
            runtime_id=declared.id, agent=agent, identity=declaration.identity, name=declared.name,
            role=role, kind=declared.kind, argv=argv, environment=environment,
            directory=os.path.expanduser(directory), restart=restart, keep=declared.keep,
            lifecycle=declared.lifecycle,
        ))
    if providers and resource_sockets is not None and has_agent:
        tasks += _resource_runtimes(declaration, agent, providers, resource_sockets, command, base, injected,
                                    restart, {task.name for task in tasks}, errors)
    if errors:
        return SeatPlan(**plan, errors=tuple(errors))
    return SeatPlan(**plan, tasks=tuple(tasks))


RESOURCE_TASK_PREFIX = "resource-"
RESOURCE_SOCKET_VARIABLE = "ST2_RESOURCE_SOCKET"


def resource_task_name(scheme: str) -> str:
    return RESOURCE_TASK_PREFIX + scheme


def _resource_runtimes(declaration, agent, providers, sockets, command, base, injected, restart,
                       taken, errors) -> list[Task]:
    """One provider runtime task per scheme the seat's bindings use (sorted by scheme)."""
    schemes = sorted({resource.uri.partition(":")[0] for resource in declaration.resources} & set(providers))
    tasks = []
    for scheme in schemes:
        provider = providers[scheme]
        name = resource_task_name(scheme)
        if name in taken:
            errors.append(f"{declaration.path}: task name {name!r} is taken by the {scheme}: resource provider")
            continue
        runtime_id = f"{agent}.{name}"
        argv = tuple(provider.argv) if provider.argv else (*(command or st2_command()), "resource-runtime", scheme)
        environment = {**base, **injected, RESOURCE_SOCKET_VARIABLE: str(sockets / runtime_id)}
        tasks.append(Task(runtime_id=runtime_id, agent=agent, identity=declaration.identity, name=name,
                          role=TaskRole.RESOURCE, kind="exec", argv=argv, environment=environment,
                          directory=str(declaration.path.parent), restart=restart))
    return tasks


def _role(task, agent: str) -> TaskRole:
    if task.name == AGENT_TASK and task.id == agent and task.kind == "pty":
        return TaskRole.AGENT
    if task.derived and task.name == DING_TASK and task.argv is None and task.command is None:
        return TaskRole.DING
    if task.derived:
        return TaskRole.STREAM
    return TaskRole.AUTHORED
