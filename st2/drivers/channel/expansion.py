"""The driver block of a channel harness (pi, omp): ``executable`` (default: the harness word),
``provider``, ``model`` and ``args`` → the canonical PTY task's argv running the harness's
``<harness>-session`` wrapper (:mod:`st2.drivers.pi.expansion` shows the shape). The block renders
nothing into the workspace: the extension is passed per launch, never written into the harness's
own configuration. The driver block *is* the launch, so a seat declaring it beside
``argv``/``command`` is refused.
"""

from __future__ import annotations

from typing import Any

from st2.drivers.block import read_fields

FIELDS = ("executable", "provider", "model", "args")
SINGLE_VALUE_FIELDS = ("executable", "provider", "model")


class Block:
    """A pi-family block's validated content."""

    __slots__ = ("executable", "provider", "model", "args")

    def __init__(self, executable: str, provider: str | None = None, model: str | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.executable = executable
        self.provider = provider
        self.model = model
        self.args = args

    def harness_argv(self) -> list[str]:
        argv = [self.executable]
        if self.provider is not None:
            argv += ["--provider", self.provider]
        if self.model is not None:
            argv += ["--model", self.model]
        return argv + list(self.args)


def read_block(node: Any, harness: str) -> Block:
    """Validate the ckdl node of ``<harness> { … }`` (the shared field grammar,
    :func:`st2.drivers.block.read_fields`); raise ValueError naming the first problem."""
    values = read_fields(node, harness, FIELDS, SINGLE_VALUE_FIELDS)
    return Block(values.get("executable", harness), values.get("provider"), values.get("model"),
                 values.get("args", ()))


def expand_block(declaration, host: str, st2_command: list[str], harness: str, verb: str):
    """Return ``declaration`` with its ``<harness>`` block expanded into the ``<verb>`` argv.
    Raise ValueError when the block is invalid or the seat also declares argv/command."""
    block = declaration.drivers.get(harness)
    if block is None:
        return declaration
    if declaration.argv is not None or declaration.command is not None:
        raise ValueError(f"{declaration.path}: agent \"{declaration.identity}\" declares `{harness} {{ … }}` and "
                         "`argv`/`command`; the driver block is the launch, so remove one of them")
    try:
        content = read_block(block.node, harness)
    except ValueError as error:
        raise ValueError(f"{declaration.path}: agent \"{declaration.identity}\": {error}") from None
    agent = f"{host}.{declaration.identity}"
    argv = (*st2_command, "driver", verb, "--identity", agent, "--runtime-id", agent, "--", *content.harness_argv())
    return declaration._replace(argv=argv)
