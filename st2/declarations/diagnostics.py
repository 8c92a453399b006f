"""Structured declaration diagnostics: the ``st2.agent-spec-diagnostic.v1`` envelope.

Automation branches on ``code``, ``severity`` and ``layer``, never on prose, so codes are stable
constants listed in :data:`CODES`. ``layer`` is one of ``syntax`` (KDL itself), ``declaration``
(node shape), ``core`` (field values and their invariants) and ``catalog`` (the catalog around
the file: layout, discovery, cross-seat checks). The JSON field order is pinned by
:meth:`Diagnostic.wire`; ``span``, ``fieldPath`` and ``help`` are ``null`` only where the failing
layer has no source location. Standard library only.
"""

from __future__ import annotations

from collections import namedtuple

from st2.base import harnesses
from st2.base.terminal_text import escaped

SCHEMA = "st2.agent-spec-diagnostic.v1"

ERROR = "error"
WARNING = "warning"

SYNTAX = "syntax"
DECLARATION = "declaration"
CORE = "core"
CATALOG = "catalog"

# code -> what it means. Codes are part of the wire contract: never rename one.
CODES: dict[str, str] = {
    "kdl-syntax": "the file is not valid KDL 2",
    "unreadable-declaration": "the declaration file cannot be read or is not UTF-8",
    "missing-agent": "agent.kdl holds no `agent` node",
    "multiple-agents": "agent.kdl holds more than one `agent` node",
    "unexpected-top-level-node": "a top-level node other than the one the file declares",
    "unknown-node": "a child node st2 does not know",
    "duplicate-field": "a field that may appear once appears again",
    "invalid-value": "a field's arguments, properties or children have the wrong shape or type",
    "unknown-property": "a property the node does not accept",
    "task-name-missing": "a task (pty, exec, stream) without one positional string name",
    "duplicate-task": "two tasks with the same name or runtime id",
    "unsupported-schedule": "`schedule` is reserved and not implemented (no longer emitted)",
    "subscription-invalid": "a `subscribe` with a malformed binding, stream or agent",
    "schedule-invalid": "a `schedule` block with a malformed name, cadence, zone or prompt",
    "undeclared-account": "a seat's `account`, or an account's `failover`, names no `account` block of catalog.kdl",
    "config-dir-unsupported": "an account's `config-dir` names a harness whose driver knows no config variable",
    "identity-mismatch": "the declared identity differs from the seat directory's name",
    "host-mismatch": "the declared host differs from the host directory's name",
    "name-too-long": "`name` exceeds 160 characters",
    "description-too-long": "`description` exceeds 1000 characters",
    "presentation-invalid": "`name` or `description` is empty, padded or holds control characters",
    "argv-and-command": "both `argv` and `command` are declared; exactly one launch form is allowed",
    "empty-argv": "`argv` has no program",
    "compact-conflict": "a compact launch or `ding` collides with an explicit task of the same name",
    "not-runnable": "no authored task has `argv` or `command`",
    "unknown-type": "`type` other than `service`",
    "unknown-desired-state": "`desired-state` other than running, suspended or retired",
    "desired-state-reason-required": "suspended or retired without `reason`",
    "desired-state-reason-forbidden": "running, or no desired-state, with a `reason`",
    "desired-state-reason-invalid": "`reason` empty, over 160 bytes, padded or holding control characters",
    "lifecycle-conflict": "both legacy `retired` and `desired-state` are declared",
    "unknown-lifecycle": "task lifecycle other than `service` or `adopt-only`",
    "unknown-resume": "`resume` other than `last` or `never`",
    "resume-without-driver": "`resume` on a seat without a typed driver block",
    "restart-invalid": "a `restart` field with a malformed value",
    "resource-invalid": "a `resource` binding with a missing or malformed name, uri, relation or reason",
    "duplicate-resource": "two `resource` bindings with the same name",
    "render-invalid": "a `render` operation with the wrong arguments or content",
    "unknown-render-operation": "a `render` child other than copy, file, json-upsert, ensure-line, git-exclude",
    "reserved-environment": "an authored ST_AGENT that conflicts with the runner-owned value",
    "catalog-entry-unexpected": "an entry in the agents or principals namespace that is not a seat or principal",
    "catalog-entry-symlink": "a symlink where the catalog requires a real directory or file",
    "catalog-entry-unsafe-name": "a host, identity or principal name that is not one safe path component",
    "catalog-unreadable": "a catalog directory could not be listed",
    "declaration-not-regular": "agent.kdl or principal.kdl is not a regular non-symlink file",
    "driver-block-invalid": f"a typed driver block ({', '.join(harnesses.names())}) its driver cannot expand",
    "dangling-supervisor": "`supervisor` names no seat in this catalog",
    "templates-invalid": "_templates breaks its bounds (depth, count, size) or holds a symlink or special file",
    "diagnostics-truncated": "more problems than one file lists; the rest are counted",
    "nesting-too-deep": "children blocks nested deeper than a declaration may be",
    "socket-path-too-long": "a pty task's session socket path exceeds the portable 104-byte sun_path bound",
    "worktree-incomplete": "a `worktree` block without `repo` or `branch`",
    "worktree-invalid": "a `worktree` field that is empty, unprintable, or a relative `repo` or `path`",
    "worktree-branch-invalid": "a `worktree` branch git would refuse as refs/heads/<branch>",
    "worktree-workspace-conflict": "both `workspace` and `worktree`: the worktree is the workspace",
    "worktree-repo-invalid": "a worktree's repository is missing, a symlink, or not a repository (this host's seats)",
    "worktree-in-catalog": "a worktree's repository or worktree lies inside the catalog (this host's seats)",
    "worktree-repo-in-worktree": "a worktree's repository lies inside another seat's worktree (this host's seats)",
    "worktree-branch-claimed": "two seats of one host claim one branch of one repository",
    "worktree-path-claimed": "two seats of one host claim one worktree path",
}


class Span(namedtuple("Span", ("offset", "length", "line", "column"))):
    """A source location: byte offset and length, 1-based line and column (column counted in
    Unicode scalar values)."""

    __slots__ = ()
    offset: int
    length: int
    line: int
    column: int

    def as_dict(self) -> dict[str, int]:
        return {"offset": self.offset, "length": self.length, "line": self.line, "column": self.column}


class Diagnostic(namedtuple("Diagnostic", ("code", "severity", "layer", "source", "span", "field_path", "message", "help"),
                            defaults=(None,))):
    """One problem in one file. ``str()`` gives the human line ``file:line:column: severity[code]: message``."""

    __slots__ = ()
    code: str
    severity: str
    layer: str
    source: str | None
    span: Span | None
    field_path: tuple[str, ...] | None
    message: str
    help: str | None  # = None

    def wire(self) -> dict:
        """The ``st2.agent-spec-diagnostic.v1`` object, fields in their pinned order."""
        return {
            "schema": SCHEMA,
            "code": self.code,
            "severity": self.severity,
            "layer": self.layer,
            "source": self.source,
            "span": self.span.as_dict() if self.span is not None else None,
            "fieldPath": list(self.field_path) if self.field_path is not None else None,
            "message": self.message,
            "help": self.help,
        }

    def human(self) -> str:
        """``file:line:column: severity[code]: message``, then ``help`` on a line of its own
        (:data:`HELP_SEPARATOR`). A control character in the message or help (a declared value
        quoted back) is shown as its escape, so the text breaks no line and drives no terminal."""
        location = self.source or "<catalog>"
        if self.span is not None:
            location = f"{location}:{self.span.line}:{self.span.column}"
        text = f"{printable(location)}: {self.severity}[{self.code}]: {printable(self.message)}"
        if self.help:
            text += f"{HELP_SEPARATOR}{printable(self.help)}"
        return text

    def __str__(self) -> str:
        return self.human()

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def promoted(self) -> "Diagnostic":
        """This diagnostic as an error (``--strict``)."""
        return self if self.severity == ERROR else self._replace(severity=ERROR)


HELP_SEPARATOR = "\n  help: "


printable = escaped
"""A diagnostic's text safe to print (:func:`st2.base.terminal_text.escaped`)."""


def one_line(text: str) -> str:
    """A diagnostic's human text (:meth:`Diagnostic.human`, or any problem line) as one line,
    for a table row or a one-finding-per-line report: its help joined with ``; help:`` and any
    other line break or control character escaped."""
    return printable(text.replace(HELP_SEPARATOR, "; help: "))


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(diagnostic.severity == ERROR for diagnostic in diagnostics)
