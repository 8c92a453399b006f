"""The ``codex { … }`` driver block → the seat's argv.

::

    agent "coder" {
        workspace "~/src/app"
        codex {
            model "gpt-5.1-codex"                // optional: -c model="…"
            approval-policy "on-request"         // optional: -c approval_policy="…"
            sandbox "workspace-write"            // optional: -c sandbox_mode="…"
            config "model_context_window=200000" // optional, repeatable args: -c key=value each
            executable "codex"                   // optional: the codex program (default "codex")
            operator "alice"                     // optional: the declared principal a line typed
                                                 // in the PTY is sent as (principals/<host>/alice)
        }
    }

expands to the canonical PTY task's argv::

    <st2> driver codex-session --identity <host>.<identity> --runtime-id <host>.<identity>
          [--operator P] -- codex app-server [-c model="M"] [-c approval_policy="P"] [-c sandbox_mode="S"] [-c k=v …]

The wrapper owns the app-server over stdio, so nothing is rendered into the workspace (Codex reads
no st2 hook). The driver block *is* the launch, so a seat declaring it beside ``argv``/``command``
is refused; and the seat's delivery belongs to the wrapper's pump, so ``ding`` is refused too.
"""

from __future__ import annotations

import json
from typing import Any

from st2.drivers.block import expand_native_block, read_fields

FIELDS = ("executable", "model", "approval-policy", "sandbox", "config", "operator")
SINGLE_VALUE_FIELDS = ("executable", "model", "approval-policy", "sandbox", "operator")
_CONFIG_KEYS = {"model": "model", "approval-policy": "approval_policy", "sandbox": "sandbox_mode"}


class CodexBlock:
    """The block's validated content."""

    __slots__ = ("executable", "model", "approval_policy", "sandbox", "config", "operator")

    def __init__(self, executable: str = "codex", model: str | None = None, approval_policy: str | None = None,
                 sandbox: str | None = None, config: tuple[str, ...] = (), operator: str | None = None) -> None:
        self.operator = operator
        self.executable = executable
        self.model = model
        self.approval_policy = approval_policy
        self.sandbox = sandbox
        self.config = config

    def codex_argv(self) -> list[str]:
        argv = [self.executable, "app-server"]
        for field, value in (("model", self.model), ("approval-policy", self.approval_policy),
                             ("sandbox", self.sandbox)):
            if value is not None:
                # A TOML basic string: json.dumps gives the same escapes for printable text.
                argv += ["-c", f"{_CONFIG_KEYS[field]}={json.dumps(value)}"]
        for override in self.config:
            argv += ["-c", override]
        return argv


def read_block(node: Any) -> CodexBlock:
    """Validate the ckdl node of ``codex { … }``; raise ValueError naming the first problem."""
    values = read_fields(node, "codex", FIELDS, SINGLE_VALUE_FIELDS)
    for name, value in values.items():
        words = value if isinstance(value, tuple) else (value,)
        if not all(word.isprintable() for word in words):
            raise ValueError(f"`codex {{ {name} }}` takes printable strings (no control characters)")
    for word in values.get("config", ()):
        key, equals, _ = word.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"`codex {{ config }}` override {word!r} is not key=value")
    return CodexBlock(values.get("executable", "codex"), values.get("model"),
                      values.get("approval-policy"), values.get("sandbox"), values.get("config", ()),
                      values.get("operator"))


def session_argv(st2_command: list[str], agent: str, runtime_id: str, block: CodexBlock) -> tuple[str, ...]:
    operator = ("--operator", block.operator) if block.operator is not None else ()
    return (*st2_command, "driver", "codex-session", "--identity", agent, "--runtime-id", runtime_id, *operator,
            "--", *block.codex_argv())


def expand(declaration, host: str, st2_command: list[str]):
    """Return ``declaration`` with the ``codex`` block expanded (see the module docstring).
    Raise ValueError when the block is invalid, or the seat also declares argv/command or ding."""
    return expand_native_block(declaration, host, st2_command, "codex", "a Codex seat", read_block, session_argv)
