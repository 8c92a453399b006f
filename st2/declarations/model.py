"""The declaration model an ``agent.kdl`` lowers to.

These are immutable ``NamedTuple`` records rather than pydantic models on purpose: the roster
loads every declaration of the catalog on each ``st2 agents`` call (627 seats within a 250 ms
budget), and importing pydantic and building its schemas costs 130-190 ms on the development
machine before a single file is read (a frozen slotted dataclass costs ~1.6 ms to define, a
NamedTuple ~0.3 ms). Validation is done once, by :mod:`st2.declarations.agent`, which also knows
where in the source each value came from, so every refusal carries an exact span. Mappings in
these records are read-only by contract; the defaults are immutable empty mappings.

Everything here is the *declared* shape. Lowering to runtime tasks (the compact launch becomes
the canonical PTY task ``<host>.<identity>``, ``ding`` a derived exec task) is
:meth:`AgentDeclaration.runtime_tasks`. Standard library only.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from st2.base import harnesses

EMPTY: Mapping[str, Any] = MappingProxyType({})

NAME_MAX_CHARS = 160
DESCRIPTION_MAX_CHARS = 1000
DESIRED_STATE_REASON_MAX_BYTES = 160
RESOURCE_REASON_MAX_BYTES = 160

RUNNING = "running"
SUSPENDED = "suspended"
RETIRED = "retired"
DESIRED_STATES = (RUNNING, SUSPENDED, RETIRED)

TASK_KINDS = ("pty", "exec", "stream")
SERVICE = "service"         # st2 launches the task and restarts it under its restart policy
ADOPT_ONLY = "adopt-only"   # st2 adopts a live generation but never launches or restarts one
LIFECYCLES = (SERVICE, ADOPT_ONLY)
RESTART_MODES = ("delay", "fail")
DRIVER_HARNESSES = harnesses.names()  # the typed driver blocks, in the table's order (st2.base.harnesses)
# Fields the original treats as render-only: accepted, kept, never acted on by the runner.
RENDER_ONLY_FIELDS = ("harness", "model", "persona", "permissions", "transport", "strategy")
RENDER_OPERATIONS = ("copy", "file", "json-upsert", "ensure-line", "git-exclude")
JSON_ARRAY_MODES = ("union", "replace")
# ``resume "last" | "never"``: the words of st2.runtime.resume's policies, restated here
# because the declaration model imports nothing of the runtime.
RESUME_POLICIES = ("last", "never")
DEFAULT_RESUME = "last"


class Restart(NamedTuple):
    """Crash policy: at most ``attempts`` restarts per ``interval_seconds``, ``delay_seconds``
    apart. ``mode`` ``delay`` keeps restarting (the counter resets each interval); ``fail`` parks."""

    attempts: int = 3
    interval_seconds: float = 60.0
    delay_seconds: float = 0.0
    mode: str = "delay"


DEFAULT_RESTART = Restart()


class Resource(NamedTuple):
    """A named typed reference the agent uses. st2 carries it; it never resolves it."""

    name: str
    uri: str
    tag: str | None = None
    relation: str | None = None
    reason: str | None = None

    def wire(self) -> dict[str, Any]:
        """The roster descriptor: ``name``, ``_tag``, ``uri``, then ``relation``/``reason`` when
        declared (absent fields are omitted, as the original serializes them)."""
        descriptor: dict[str, Any] = {"name": self.name}
        if self.tag is not None:
            descriptor["_tag"] = self.tag
        descriptor["uri"] = self.uri
        if self.relation is not None:
            descriptor["relation"] = self.relation
        if self.reason is not None:
            descriptor["reason"] = self.reason
        return descriptor


class Task(NamedTuple):
    """One authored ``pty``/``exec``/``stream`` task, or one derived by lowering.

    ``argv`` and ``command`` are mutually exclusive; a ``stream`` with neither is external
    ingress (nothing is launched for it). ``id`` is the explicit runtime id, if declared."""

    kind: str
    name: str
    argv: tuple[str, ...] | None = None
    command: str | None = None
    id: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = EMPTY
    tags: Mapping[str, str] = EMPTY
    keep: bool = False
    lifecycle: str = "service"
    derived: bool = False

    @property
    def launches(self) -> bool:
        return self.argv is not None or self.command is not None


class RenderOperation(NamedTuple):
    """One ordered materialization step of ``render {}``.

    ``copy`` uses ``source`` and ``target``; ``file`` and ``json-upsert`` use ``target`` and
    ``content`` (``arrays`` is ``union`` or ``replace`` for json-upsert); ``ensure-line`` uses
    ``target`` and ``line``; ``git-exclude`` uses ``target`` (one operation per path)."""

    operation: str
    target: str
    source: str | None = None
    content: str | None = None
    line: str | None = None
    arrays: str | None = None


class DriverBlock(NamedTuple):
    """A typed driver block (``claude { … }`` …), parsed but opaque here.

    ``node`` is the ckdl node; ``node_path`` its index path in the document. A driver package
    interprets it and reports problems with exact spans through
    ``Context(declaration_text, source).report(code, node_path + (child_index,), part, …)``
    from :mod:`st2.declarations.context`."""

    harness: str
    node: Any
    node_path: tuple[int, ...]


class Worktree(NamedTuple):
    """``worktree { repo "<path>"; branch "<name>"; base "<ref>"; path "<dir>" }``: the seat's
    own git worktree of ``repo`` on ``branch`` (created from ``base``, default the repository's
    ``HEAD``, when the branch does not exist yet), at ``path`` or by default beside the
    repository (:func:`st2.runtime.layout.default_worktree`). Paths are as declared (``~``
    unexpanded); :mod:`st2.worktree` resolves them on the seat's own host."""

    repo: str
    branch: str
    base: str | None = None
    path: str | None = None


class Schedule(NamedTuple):
    """``schedule "<name>" { every "24h" | at "09:00" "Europe/Berlin"; prompt "…" }``: a prompt
    posted into the seat's own inbox as stream work on a cadence (:mod:`st2.schedule`). Exactly
    one of ``every_seconds`` (whole seconds, 60 s .. 365 d) and ``at`` (``(hour, minute)`` in the
    IANA ``zone``) is set."""

    name: str
    prompt: str
    every_seconds: int | None = None
    at: tuple[int, int] | None = None
    zone: str | None = None

    @property
    def cadence(self) -> str:
        """The canonical cadence text: ``every 86400s`` or ``at 09:00 Europe/Berlin`` (a changed
        cadence re-arms the schedule)."""
        if self.every_seconds is not None:
            return f"every {self.every_seconds}s"
        return f"at {self.at[0]:02d}:{self.at[1]:02d} {self.zone}"


class Subscription(NamedTuple):
    """``subscribe "<binding>" stream="<stream>" [agent="<owner>"]``: the seat receives each
    accepted transition of the binding (of the seat ``agent`` names, else its own) as a stream
    event on its own declared ``stream`` (:mod:`st2.resync`)."""

    binding: str
    stream: str
    agent: str | None = None


class AgentDeclaration(NamedTuple):
    """One validated ``agent.kdl``."""

    identity: str
    host: str | None
    path: Path
    name: str | None = None
    description: str | None = None
    role: str | None = None
    workspace: str | None = None
    supervisor: str | None = None
    desired_state: str = RUNNING
    desired_state_reason: str | None = None
    legacy_retired: bool = False
    keep: bool = False
    lifecycle: str = "service"
    restart: Restart | None = None
    argv: tuple[str, ...] | None = None
    command: str | None = None
    env: Mapping[str, str] = EMPTY
    ding: bool = False
    meta: Mapping[str, str] = EMPTY
    meta_entries: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    resources: tuple[Resource, ...] = ()
    tasks: tuple[Task, ...] = ()
    render: tuple[RenderOperation, ...] = ()
    drivers: Mapping[str, DriverBlock] = EMPTY
    render_only: Mapping[str, tuple[Any, ...]] = EMPTY
    id: str | None = None
    address: str | None = None
    resume: str = DEFAULT_RESUME
    worktree: Worktree | None = None
    schedules: tuple[Schedule, ...] = ()
    subscriptions: tuple[Subscription, ...] = ()
    account: str | None = None  # the model account it runs on (catalog.kdl `account`), None: the host's

    @property
    def retired(self) -> bool:
        return self.desired_state == RETIRED

    @property
    def restart_policy(self) -> Restart:
        """The declared policy, else the runner default (3 per 60 s, no delay, keep restarting)."""
        return self.restart if self.restart is not None else DEFAULT_RESTART

    @property
    def managed_by(self) -> tuple[str, ...]:
        """Every ``meta { managed-by … }`` marker, in order (more than one is ambiguous authority)."""
        return tuple(values[0] for key, values in self.meta_entries
                     if key == "managed-by" and values and isinstance(values[0], str))

    def runtime_tasks(self, host: str) -> tuple[Task, ...]:
        """Lower to the tasks the supervisor runs on ``host``, sorted by name.

        The compact ``argv``/``command`` becomes the canonical PTY task ``agent`` with id
        ``<host>.<identity>``; ``ding`` becomes the derived exec task ``ding`` with id
        ``<host>.<identity>.ding`` (its command is filled in by the supervisor, which owns the
        st2 executable path); explicit tasks keep their declared id or get
        ``<host>.<identity>.<name>``. A stream with neither argv nor command is not lowered."""
        runtime_id = f"{host}.{self.identity}"
        lowered: list[Task] = []
        if self.argv is not None or self.command is not None:
            lowered.append(Task(kind="pty", name="agent", argv=self.argv, command=self.command,
                                id=runtime_id, env=dict(self.env), lifecycle=self.lifecycle))
        for task in self.tasks:
            if task.kind == "stream" and not task.launches:
                continue
            environment = dict(self.env)
            environment.update(task.env)
            lowered.append(Task(kind="exec" if task.kind == "stream" else task.kind, name=task.name,
                                argv=task.argv, command=task.command,
                                id=task.id or f"{runtime_id}.{task.name}", cwd=task.cwd,
                                env=environment, tags=dict(task.tags), keep=task.keep,
                                lifecycle=task.lifecycle, derived=task.kind == "stream"))
        if self.ding:
            lowered.append(Task(kind="exec", name="ding", id=f"{runtime_id}.ding",
                                env=dict(self.env), derived=True))
        lowered.sort(key=lambda task: task.name)
        return tuple(lowered)
