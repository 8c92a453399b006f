"""The eval spec: one ``.kdl`` file describing a compact team and the eval that exercises it.

:func:`load_spec` reads the file and returns ``(spec, diagnostics)``; ``spec`` is ``None`` when any
diagnostic is an error. Every problem is one ``st2.agent-spec-diagnostic.v1`` diagnostic at
``file:line:column`` in the spec file itself. The grammar (docs/eval.md has it whole)::

    host "lab"                         // optional; default "eval"
    env { KEY "value" }                // cascades into every agent, run step and judge
    agent "<identity>" { … }           // an agent.kdl body: command/argv, ding, env, workspace, …
    eval {
        copy "./fixture"               // the fixture folder's contents; `_git` becomes `.git`
        message { from "requester"; to "<identity>"; content "./task.md" }
        max-timeout "120s"             // the whole eval
        supervise                      // respawn a dead seat from the spec while it runs
        agent "judge" { … }            // eval-only agents
        run "<label>" { command "…"; workspace "dir"; env { … }; allow-nonzero }
        judges {
            judge "<name>" { file "p" has "text"; file "p" lacks "text" }
            judge "<name>" { json "p" field "x" is "value" }
            judge "<name>" { committed "p" }
            judge "<name>" { exec "sh ./check.sh" }
            judge "<name>" { timeout "60s"; ask "judge" "prompt" }
        }
    }

An agent node is judged by the one ``agent.kdl`` validator (:func:`st2.declarations.agent.parse_agent`)
in place: the spec text with everything outside that node blanked to spaces (newlines kept), so
its diagnostics already carry the spec file's lines and columns. Standard library and ckdl only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument, parse_kdl, kdl_repr, plain
from st2.declarations.diagnostics import ERROR, Diagnostic
from st2.declarations.durations import DurationRefused, parse_duration
from st2.fs.read import DECLARATION_LIMIT, read_text

DEFAULT_HOST = "eval"
TOP_LEVEL = ("host", "env", "agent", "eval")
EVAL_FIELDS = ("copy", "message", "max-timeout", "supervise", "agent", "run", "judges")
RUN_FIELDS = ("command", "workspace", "env", "allow-nonzero")
MESSAGE_FIELDS = ("from", "to", "content")
CHECKS = ("file", "json", "committed")
JUDGE_FIELDS = ("timeout", "exec", "ask") + CHECKS


@dataclass(frozen=True)
class SpecAgent:
    """One seat: its identity, its ckdl node (env already cascaded) and whether only the eval has it."""

    identity: str
    node: Any
    eval_only: bool


@dataclass(frozen=True)
class Kickoff:
    sender: str
    recipient: str
    content: str


@dataclass(frozen=True)
class RunStep:
    label: str
    command: str
    workspace: str | None
    env: dict[str, str]
    allow_nonzero: bool


@dataclass(frozen=True)
class Check:
    """``kind`` is ``has``, ``lacks``, ``json`` or ``committed``; ``value`` a str, bool or int."""

    kind: str
    path: str
    text: str | None = None
    field: str | None = None
    value: Any = None


@dataclass(frozen=True)
class Judge:
    """Exactly one flavor: ``checks`` (declarative), ``command`` (shell) or ``ask`` (agent, prompt)."""

    name: str
    timeout: float | None
    checks: tuple[Check, ...] = ()
    command: str | None = None
    ask: tuple[str, str] | None = None


@dataclass(frozen=True)
class EvalBlock:
    copy: str | None
    message: Kickoff | None
    timeout: float
    supervise: bool
    runs: tuple[RunStep, ...]
    judges: tuple[Judge, ...]


@dataclass
class Spec:
    path: Path
    host: str
    env: dict[str, str]
    agents: list[SpecAgent] = field(default_factory=list)
    eval: EvalBlock | None = None

    @property
    def folder(self) -> Path:
        return self.path.parent


def find_spec(target: Path) -> Path:
    """The spec file ``target`` names: the file itself, or a folder's one top-level ``*.kdl``.
    Raise ValueError (one line) otherwise."""
    if target.is_file():
        return target
    if not target.is_dir():
        raise ValueError(f"{target}: no such eval folder or spec file")
    found = sorted(path for path in target.glob("*.kdl") if path.is_file())
    if len(found) != 1:
        raise ValueError(f"{target}: an eval folder holds exactly one top-level *.kdl spec, found {len(found)}")
    return found[0]


def load_spec(path: Path) -> tuple[Spec | None, list[Diagnostic]]:
    source = str(path)
    try:
        text = read_text(path, DECLARATION_LIMIT)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return None, [Diagnostic(code="unreadable-declaration", severity=ERROR, layer="catalog", source=source,
                                 span=None, field_path=None, message=f"cannot read the eval spec: {reason}")]
    return parse_spec(text, path=path, source=source)


def parse_spec(text: str, *, path: Path, source: str) -> tuple[Spec | None, list[Diagnostic]]:
    context = Context(text, source)
    document = parse_kdl(context, text)
    if document is None:
        return None, context.diagnostics()
    reader = _Reader(context, text, path, source)
    spec = reader.read(document.nodes)
    diagnostics = context.diagnostics() + reader.agent_diagnostics
    diagnostics.sort(key=lambda diagnostic: diagnostic.span.offset if diagnostic.span is not None else -1)
    if any(diagnostic.severity == ERROR for diagnostic in diagnostics):
        return None, diagnostics
    return spec, diagnostics


class _Reader:
    def __init__(self, context: Context, text: str, path: Path, source: str) -> None:
        self.context, self.text, self.path, self.source = context, text, path, source
        self.agent_diagnostics: list[Diagnostic] = []
        self._tree = None
        self.message_path: tuple[int, ...] | None = None
        self.ask_paths: dict[str, tuple[int, ...]] = {}

    def read(self, nodes: list) -> Spec:
        host, env = DEFAULT_HOST, {}
        seen: dict[str, int] = {}
        for index, node in enumerate(nodes):
            if node.name in ("host", "env", "eval") and self._duplicate(node, (index,), seen):
                continue
            if node.name == "host":
                value = fields.one_value(self.context, node, (index,), ("host",), "string")
                if value is not None:
                    host = self._name(value, "host", (index,), argument(0)) or host
            elif node.name == "env":
                env = fields.string_map(self.context, node, (index,), ("env",))
        spec = Spec(path=self.path, host=host, env=env)
        for index, node in enumerate(nodes):
            if node.name == "agent":
                self._agent(spec, node, (index,), eval_only=False)
            elif node.name == "eval":
                spec.eval = self._eval(spec, node, (index,))
            elif node.name not in TOP_LEVEL:
                self._unknown(node, (index,), (), TOP_LEVEL, "unexpected-top-level-node")
        identities = [agent.identity for agent in spec.agents]
        if not any(node.name == "eval" for node in nodes):
            self.context.report_shape("invalid-value", None, WHOLE, None, "the spec declares no `eval` block",
                                      help="eval { max-timeout \"300s\"; judges { … } }")
        elif spec.eval is not None and spec.eval.message is not None and spec.eval.message.recipient not in identities:
            self.context.report("invalid-value", self.message_path, WHOLE, ("eval", "message", "to"),
                                f"the kickoff goes to `{spec.eval.message.recipient}`, which no agent declares")
        if spec.eval is not None:
            for judge in spec.eval.judges:
                if judge.ask is not None and judge.ask[0] not in identities:
                    self.context.report("invalid-value", self.ask_paths.get(judge.name), WHOLE,
                                        ("eval", "judges", judge.name, "ask"),
                                        f"judge `{judge.name}` asks `{judge.ask[0]}`, which no agent declares")
        return spec

    # --- helpers -------------------------------------------------------------------------------
    def _duplicate(self, node: Any, path: tuple[int, ...], seen: dict[str, int]) -> bool:
        if node.name in seen:
            self.context.report_shape("duplicate-field", path, NAME, (node.name,),
                                      f"`{node.name}` may appear only once")
            return True
        seen[node.name] = path[-1]
        return False

    def _unknown(self, node: Any, path: tuple[int, ...], field_path: tuple[str, ...], known: tuple[str, ...],
                 code: str = "unknown-node") -> None:
        self.context.report_shape(code, path, NAME, field_path + (node.name,),
                                  f"unknown node `{node.name}`; expected one of {', '.join(known)}",
                                  help=fields.suggestion(node.name, known))

    def _name(self, value: str, kind: str, path: tuple[int, ...], part: Any) -> str | None:
        from st2.catalog.names import name_problem

        problem = name_problem(value, kind)
        if problem is not None:
            self.context.report("invalid-value", path, part, (kind,), problem)
            return None
        return value

    def _string(self, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> str | None:
        return fields.one_value(self.context, node, path, field_path, "string")

    def _duration(self, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> float | None:
        value = self._string(node, path, field_path)
        if value is None:
            return None
        try:
            seconds = parse_duration(value)
        except DurationRefused as refusal:
            self.context.report("invalid-value", path, argument(0), field_path, str(refusal))
            return None
        if seconds <= 0:
            self.context.report("invalid-value", path, argument(0), field_path, f"{kdl_repr(value)} is not positive")
            return None
        return seconds

    # --- agents --------------------------------------------------------------------------------
    def _agent(self, spec: Spec, node: Any, path: tuple[int, ...], *, eval_only: bool) -> None:
        import ckdl

        from st2.declarations.agent import parse_agent

        if len(node.args) != 1 or not isinstance(plain(node.args[0]), str):
            self.context.report_shape("invalid-value", path, NAME, ("agent",),
                                      "`agent` takes exactly one string: its identity")
            return
        identity = self._name(plain(node.args[0]), "identity", path, argument(0))
        if identity is None:
            return
        if any(agent.identity == identity for agent in spec.agents):
            self.context.report_shape("duplicate-field", path, argument(0), ("agent", identity),
                                      f"agent `{identity}` is declared twice")
            return
        declaration, diagnostics = parse_agent(self._isolated(path), path=self.path, source=self.source,
                                               host=spec.host, identity=identity)
        self.agent_diagnostics.extend(diagnostics)
        if declaration is None:
            return
        merged = dict(spec.env) | dict(declaration.env)
        children = [child for child in node.children if child.name != "env"]
        if merged:
            children.append(ckdl.Node(None, "env", children=[ckdl.Node(None, key, value)
                                                             for key, value in sorted(merged.items())]))
        copied = ckdl.Node(None, "agent", *node.args, children=children)
        spec.agents.append(SpecAgent(identity=identity, node=copied, eval_only=eval_only))

    def _isolated(self, path: tuple[int, ...]) -> str:
        """The spec text with every byte outside the node at ``path`` blanked (newlines kept), so
        positions in it are positions in the spec."""
        from st2.declarations.spans import locate

        if self._tree is None:
            self._tree = locate(self.text)
        nodes, node = self._tree, None
        for index in path:
            node = nodes[index]
            nodes = node.children

        def blank(part: str) -> str:
            return "".join(c if c in "\r\n" else " " * len(c.encode()) for c in part)

        return blank(self.text[:node.start]) + self.text[node.start:node.end] + blank(self.text[node.end:])

    # --- eval ----------------------------------------------------------------------------------
    def _eval(self, spec: Spec, node: Any, path: tuple[int, ...]) -> EvalBlock | None:
        fields.no_arguments(self.context, node, path, ("eval",))
        fields.no_properties(self.context, node, path, ("eval",))
        copy = message = timeout = None
        supervise = False
        runs: list[RunStep] = []
        judges: list[Judge] = []
        seen: dict[str, int] = {}
        for index, child in enumerate(node.children):
            child_path, field_path = path + (index,), ("eval", child.name)
            if child.name in ("copy", "message", "max-timeout", "supervise", "judges") and self._duplicate(
                    child, child_path, seen):
                continue
            if child.name == "copy":
                copy = self._string(child, child_path, field_path)
            elif child.name == "message":
                message = self._message(child, child_path)
                self.message_path = child_path
            elif child.name == "max-timeout":
                timeout = self._duration(child, child_path, field_path)
            elif child.name == "supervise":
                fields.no_arguments(self.context, child, child_path, field_path)
                fields.no_children(self.context, child, child_path, field_path)
                supervise = True
            elif child.name == "agent":
                self._agent(spec, child, child_path, eval_only=True)
            elif child.name == "run":
                step = self._run(child, child_path, {step.label for step in runs})
                if step is not None:
                    runs.append(step)
            elif child.name == "judges":
                judges = self._judges(child, child_path)
            else:
                self._unknown(child, child_path, ("eval",), EVAL_FIELDS)
        if timeout is None and "max-timeout" not in seen:
            self.context.report_shape("invalid-value", path, NAME, ("eval",),
                                      "`eval` needs `max-timeout`, the whole eval's bound", help='max-timeout "300s"')
        if not judges and "judges" not in seen:
            self.context.report_shape("invalid-value", path, NAME, ("eval",),
                                      "`eval` needs a `judges` block: a verdict is all of its judges passing")
        if timeout is None:
            return None
        return EvalBlock(copy=copy, message=message, timeout=timeout, supervise=supervise, runs=tuple(runs),
                         judges=tuple(judges))

    def _message(self, node: Any, path: tuple[int, ...]) -> Kickoff | None:
        fields.no_arguments(self.context, node, path, ("eval", "message"))
        values: dict[str, str] = {}
        for index, child in enumerate(node.children):
            child_path = path + (index,)
            if child.name not in MESSAGE_FIELDS:
                self._unknown(child, child_path, ("eval", "message"), MESSAGE_FIELDS)
            elif child.name in values:
                self.context.report_shape("duplicate-field", child_path, NAME, ("eval", "message", child.name),
                                          f"`{child.name}` may appear only once")
            else:
                value = self._string(child, child_path, ("eval", "message", child.name))
                if value is not None:
                    values[child.name] = value
        missing = [name for name in MESSAGE_FIELDS if name not in values]
        if missing:
            self.context.report_shape("invalid-value", path, NAME, ("eval", "message"),
                                      f"`message` needs {', '.join(f'`{name}`' for name in missing)}",
                                      help='message { from "requester"; to "worker"; content "./task.md" }')
            return None
        if self._name(values["from"], "principal", path, WHOLE) is None:
            return None
        return Kickoff(sender=values["from"], recipient=values["to"], content=values["content"])

    def _run(self, node: Any, path: tuple[int, ...], labels: set[str]) -> RunStep | None:
        field_path = ("eval", "run")
        if len(node.args) != 1 or not isinstance(plain(node.args[0]), str) or not plain(node.args[0]):
            self.context.report_shape("invalid-value", path, NAME, field_path,
                                      "`run` takes exactly one string, its label", help='run "build" { command "make" }')
            return None
        label = plain(node.args[0])
        if label in labels:
            self.context.report_shape("duplicate-field", path, argument(0), field_path + (label,),
                                      f"run step `{label}` is declared twice")
            return None
        command = workspace = None
        env: dict[str, str] = {}
        allow_nonzero = False
        for index, child in enumerate(node.children):
            child_path, child_field = path + (index,), field_path + (label, child.name)
            if child.name == "command":
                command = self._string(child, child_path, child_field)
            elif child.name == "workspace":
                workspace = self._string(child, child_path, child_field)
            elif child.name == "env":
                env = fields.string_map(self.context, child, child_path, child_field)
            elif child.name == "allow-nonzero":
                fields.no_arguments(self.context, child, child_path, child_field)
                allow_nonzero = True
            else:
                self._unknown(child, child_path, field_path + (label,), RUN_FIELDS)
        if command is None:
            self.context.report_shape("invalid-value", path, argument(0), field_path + (label,),
                                      f"run step `{label}` needs a `command`")
            return None
        return RunStep(label=label, command=command, workspace=workspace, env=env, allow_nonzero=allow_nonzero)

    def _judges(self, node: Any, path: tuple[int, ...]) -> list[Judge]:
        judges: list[Judge] = []
        for index, child in enumerate(node.children):
            child_path = path + (index,)
            if child.name != "judge":
                self._unknown(child, child_path, ("eval", "judges"), ("judge",))
                continue
            judge = self._judge(child, child_path, {judge.name for judge in judges})
            if judge is not None:
                judges.append(judge)
        if not any(child.name == "judge" for child in node.children):
            self.context.report_shape("invalid-value", path, NAME, ("eval", "judges"),
                                      "`judges` holds no `judge`: an eval with nothing to judge cannot pass")
        return judges

    def _judge(self, node: Any, path: tuple[int, ...], names: set[str]) -> Judge | None:
        if len(node.args) != 1 or not isinstance(plain(node.args[0]), str) or not plain(node.args[0]):
            self.context.report_shape("invalid-value", path, NAME, ("eval", "judges", "judge"),
                                      "`judge` takes exactly one string, its name")
            return None
        name = plain(node.args[0])
        base = ("eval", "judges", name)
        if name in names:
            self.context.report_shape("duplicate-field", path, argument(0), base, f"judge `{name}` is declared twice")
            return None
        timeout = command = ask = None
        checks: list[Check] = []
        flavors: list[str] = []
        for index, child in enumerate(node.children):
            child_path, child_field = path + (index,), base + (child.name,)
            if child.name == "timeout":
                timeout = self._duration(child, child_path, child_field)
            elif child.name == "exec":
                command = self._string(child, child_path, child_field)
                flavors.append("exec")
            elif child.name == "ask":
                ask = self._ask(child, child_path, child_field)
                self.ask_paths[name] = child_path
                flavors.append("ask")
            elif child.name in CHECKS:
                check = self._check(child, child_path, child_field)
                if check is not None:
                    checks.append(check)
                flavors.append("checks")
            else:
                self._unknown(child, child_path, base, JUDGE_FIELDS)
        if len(set(flavors)) != 1 or flavors.count("exec") > 1 or flavors.count("ask") > 1:
            self.context.report_shape("invalid-value", path, argument(0), base,
                                      f"judge `{name}` must be exactly one of: declarative checks "
                                      "(file/json/committed), one `exec`, or one `ask`")
            return None
        if command is None and ask is None and not checks:
            return None
        return Judge(name=name, timeout=timeout, checks=tuple(checks), command=command, ask=ask)

    def _ask(self, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> tuple[str, str] | None:
        values = [plain(value) for value in node.args]
        if len(values) != 2 or not all(isinstance(value, str) and value for value in values) or node.children:
            self.context.report_shape("invalid-value", path, NAME, field_path,
                                      "`ask` takes two strings: the judging agent and the prompt",
                                      help='ask "judge" "Reply PASS or FAIL, then one sentence."')
            return None
        fields.no_properties(self.context, node, path, field_path)
        return values[0], values[1]

    def _check(self, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> Check | None:
        values = [plain(value) for value in node.args]
        fields.no_properties(self.context, node, path, field_path)
        fields.no_children(self.context, node, path, field_path)
        shapes = {"file": 'file "<path>" has|lacks "<text>"', "json": 'json "<path>" field "<name>" is <value>',
                  "committed": 'committed "<path>"'}
        if node.name == "file" and len(values) == 3 and all(isinstance(v, str) for v in values) \
                and values[1] in ("has", "lacks"):
            return Check(kind=values[1], path=values[0], text=values[2])
        if node.name == "json" and len(values) == 5 and isinstance(values[0], str) and values[1] == "field" \
                and isinstance(values[2], str) and values[3] == "is" \
                and (values[4] is None or isinstance(values[4], (str, bool, int))):
            return Check(kind="json", path=values[0], field=values[2], value=values[4])
        if node.name == "committed" and len(values) == 1 and isinstance(values[0], str):
            return Check(kind="committed", path=values[0])
        self.context.report_shape("invalid-value", path, NAME, field_path, f"expected {shapes[node.name]}",
                                  help=shapes[node.name])
        return None
