"""The ``pi { … }`` driver block → the seat's argv (omp's ``omp { … }`` is the same block with
omp's names: :mod:`st2.drivers.omp.expansion`).

::

    agent "worker" {
        workspace "~/src/app"
        ding                                   // pi's delivery is DING into its TUI
        pi {
            provider "anthropic"               // optional: --provider
            model "claude-sonnet-4-5"          // optional: --model
            args "--offline"                   // optional: further pi arguments, in order
            executable "pi"                    // optional: the pi program (default "pi")
        }
    }

expands to the canonical PTY task's argv::

    <st2> driver pi-session --identity <host>.<identity> --runtime-id <host>.<identity>
          -- pi [--provider P] [--model M] [args…]

and the wrapper injects st2's channel extension (``-e <hooks>/pi-channel.ts``) when it launches.
The block renders nothing into the workspace: the extension is passed per launch, never written
into the harness's own configuration. The driver block *is* the launch, so a seat declaring it
beside ``argv``/``command`` is refused.
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


def expand(declaration, host: str, st2_command: list[str]):
    """The ``pi { … }`` block (see the module docstring)."""
    return expand_block(declaration, host, st2_command, "pi", "pi-session")
