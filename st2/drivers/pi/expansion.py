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

from st2.drivers.channel.expansion import expand_block


def expand(declaration, host: str, st2_command: list[str]):
    """The ``pi { … }`` block (see the module docstring)."""
    return expand_block(declaration, host, st2_command, "pi", "pi-session")
