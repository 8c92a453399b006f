"""The ``opencode { … }`` driver block → the seat's argv.

::

    agent "coder" {
        opencode {
            model "fake/fake-model"   // optional: providerID/modelID every delivered prompt names
            executable "opencode"     // optional: the opencode program (default "opencode")
            operator "alice"          // optional: the principal a line typed in the PTY is sent as
            view "transcript"         // optional: "attach" (default: opencode's own TUI) or "transcript"
        }
    }

expands to the canonical PTY task's argv::

    <st2> driver opencode-session --identity <host>.<identity> --runtime-id <host>.<identity>
          [--model P/M] [--operator P] [--view transcript] -- opencode serve

The wrapper adds ``--hostname 127.0.0.1 --port 0`` at launch, reads the port the server chose from
its "listening" line and keeps it, with the server password it generated, in host-local state only
(never in the catalog or the argv). The block *is* the launch, so a seat declaring it beside
``argv``/``command`` is refused; the seat's delivery belongs to the wrapper, so ``ding`` is too.
"""

from __future__ import annotations

from typing import Any

from st2.drivers.block import expand_native_block, read_fields

FIELDS = ("executable", "model", "operator", "view")
VIEWS = ("attach", "transcript")
SINGLE_VALUE_FIELDS = FIELDS


class OpencodeBlock:
    __slots__ = ("executable", "model", "operator", "view")

    def __init__(self, executable: str = "opencode", model: str | None = None, operator: str | None = None,
                 view: str = "attach") -> None:
        self.executable = executable
        self.model = model
        self.operator = operator
        self.view = view


def split_model(model: str) -> tuple[str, str] | None:
    """``(providerID, modelID)`` of ``provider/model`` (the model id may itself hold slashes)."""
    provider, slash, model_id = model.partition("/")
    return (provider, model_id) if slash and provider and model_id else None


def read_block(node: Any) -> OpencodeBlock:
    """Validate the ckdl node of ``opencode { … }``; raise ValueError naming the first problem."""
    values = read_fields(node, "opencode", FIELDS, SINGLE_VALUE_FIELDS)
    for name, value in values.items():
        if not value.isprintable():
            raise ValueError(f"`opencode {{ {name} }}` takes a printable string (no control characters)")
    model = values.get("model")
    if model is not None and split_model(model) is None:
        raise ValueError(f"`opencode {{ model }}` {model!r} is not providerID/modelID (e.g. \"anthropic/claude-sonnet-4\")")
    view = values.get("view", "attach")
    if view not in VIEWS:
        raise ValueError(f"`opencode {{ view }}` {view!r} is not \"attach\" or \"transcript\"")
    return OpencodeBlock(values.get("executable", "opencode"), model, values.get("operator"), view)


def session_argv(st2_command: list[str], agent: str, runtime_id: str, block: OpencodeBlock) -> tuple[str, ...]:
    model = ("--model", block.model) if block.model is not None else ()
    operator = ("--operator", block.operator) if block.operator is not None else ()
    view = ("--view", block.view) if block.view != "attach" else ()
    return (*st2_command, "driver", "opencode-session", "--identity", agent, "--runtime-id", runtime_id, *model,
            *operator, *view, "--", block.executable, "serve")


def expand(declaration, host: str, st2_command: list[str]):
    """Return ``declaration`` with the ``opencode`` block expanded (see the module docstring).
    Raise ValueError when the block is invalid, or the seat also declares argv/command or ding."""
    return expand_native_block(declaration, host, st2_command, "opencode", "an opencode seat", read_block, session_argv)
