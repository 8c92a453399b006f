"""The ``claude { … }`` driver block → the seat's argv and render operations.

::

    agent "worker" {
        workspace "~/src/app"
        ding
        claude {
            model "claude-sonnet-4-5"          // optional: --model
            permission-mode "default"          // optional: --permission-mode
            args "--verbose"                   // optional: further claude arguments, in order
            executable "claude"                // optional: the claude program (default "claude")
        }
    }

expands to the canonical PTY task's argv::

    <st2> driver claude-session --identity <host>.<identity> --runtime-id <host>.<identity>
          -- claude [--model M] [--permission-mode P] [args…]

and prepends two render operations to the seat's own: a ``json-upsert`` of
``.claude/settings.local.json`` with :func:`.settings.settings` (``arrays="union"``: the merge owns
only st2's entries) and a ``git-exclude`` of that file. The driver block *is* the launch, so a seat
declaring it beside ``argv``/``command`` is refused.
"""

from __future__ import annotations

from typing import Any

from st2.drivers.block import read_fields
from st2.drivers.claude import settings as claude_settings

FIELDS = ("executable", "model", "permission-mode", "args")
SINGLE_VALUE_FIELDS = ("executable", "model", "permission-mode")


class ClaudeBlock:
    """The block's validated content."""

    __slots__ = ("executable", "model", "permission_mode", "args")

    def __init__(self, executable: str = "claude", model: str | None = None, permission_mode: str | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.executable = executable
        self.model = model
        self.permission_mode = permission_mode
        self.args = args

    def claude_argv(self) -> list[str]:
        argv = [self.executable]
        if self.model is not None:
            argv += ["--model", self.model]
        if self.permission_mode is not None:
            argv += ["--permission-mode", self.permission_mode]
        return argv + list(self.args)


def read_block(node: Any) -> ClaudeBlock:
    """Validate the ckdl node of ``claude { … }``; raise ValueError naming the first problem."""
    values = read_fields(node, "claude", FIELDS, SINGLE_VALUE_FIELDS)
    return ClaudeBlock(values.get("executable", "claude"), values.get("model"), values.get("permission-mode"),
                       values.get("args", ()))


def session_argv(st2_command: list[str], agent: str, runtime_id: str, block: ClaudeBlock) -> tuple[str, ...]:
    return (*st2_command, "driver", "claude-session", "--identity", agent, "--runtime-id", runtime_id, "--",
            *block.claude_argv())


def render_operations():
    from st2.declarations.model import RenderOperation

    return (
        RenderOperation("json-upsert", claude_settings.TARGET, content=claude_settings.settings_json(),
                        arrays=claude_settings.ARRAYS),
        RenderOperation("git-exclude", claude_settings.TARGET),
    )


def expand(declaration, host: str, st2_command: list[str]):
    """Return ``declaration`` with the ``claude`` block expanded (see the module docstring).
    Raise ValueError when the block is invalid or the seat also declares argv/command."""
    block = declaration.drivers.get("claude")
    if block is None:
        return declaration
    if declaration.argv is not None or declaration.command is not None:
        raise ValueError(f"{declaration.path}: agent \"{declaration.identity}\" declares `claude {{ … }}` and "
                         "`argv`/`command`; the driver block is the launch, so remove one of them")
    try:
        content = read_block(block.node)
    except ValueError as error:
        raise ValueError(f"{declaration.path}: agent \"{declaration.identity}\": {error}") from None
    agent = f"{host}.{declaration.identity}"
    return declaration._replace(
        argv=session_argv(st2_command, agent, agent, content),
        render=render_operations() + tuple(declaration.render),
    )
