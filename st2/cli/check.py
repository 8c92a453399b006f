"""``st2 check``: checks over records other processes write. Parsing glue only.

``st2 check producer-liveness`` is also a hot path (``st2.entry.HOT_PATHS``): the turn-end hook
spawns it, so the plain spelling never imports click. This command serves the same core when a
global option (``st2 --catalog X check …``) routes the call through the click CLI.
"""

from __future__ import annotations

import click

from st2.cli.common import exit_with
from st2.cli.usage import RawCommand


@click.group()
def check() -> None:
    """Checks over records other processes write (launch records: producer-liveness) and the
    delegation kit's gates (gate-tamper, agent-tier-explicit)."""


@check.command("producer-liveness", context_settings={"ignore_unknown_options": True})
@click.argument("path", required=False)
@click.option("--record", "record_key", default=None, metavar="KEY", help="Write <scratch>/KEY.run for a producer instead of reading.")
@click.option("--pid", type=int, default=None, help="The producer's PID (default: the calling process's parent).")
def producer_liveness(path: str | None, record_key: str | None, pid: int | None) -> None:
    """Exit 0 when no launch record under PATH names a live producer, 1 when one does, 2 when a
    record does not parse or PATH cannot be read. PATH is one .run record or a directory."""
    from st2.kit.delegation import producer_liveness as core

    if record_key is not None:
        if path is not None:
            raise click.UsageError("give PATH or --record KEY, not both")
        argv = ["--record", record_key] + (["--pid", str(pid)] if pid is not None else [])
    else:
        if path is None:
            raise click.UsageError("PATH is required (or --record KEY)")
        if pid is not None:
            raise click.UsageError("--pid goes with --record")
        argv = [path]
    exit_with(core.main(argv))


@check.command("gate-tamper", cls=RawCommand)
def gate_tamper(words: tuple[str, ...]) -> None:
    """[--fixture DIR]: a gate edit travels alone and carries no exemption for its own commit
    (exit 0 clean, 1 findings, 2 no reading)."""
    from st2.kit.gate_tamper import main

    exit_with(main(list(words)))


@check.command("agent-tier-explicit", cls=RawCommand)
def agent_tier_explicit(words: tuple[str, ...]) -> None:
    """[--] [AGENT_DIR]: every agent definition states model:, and a tiered one holds its
    class's bound model and effort (exit 0 clean, 1 findings, 2 no reading)."""
    from st2.kit.agent_tiers import check as run

    exit_with(run(list(words)))


@check.command("wait-probe", cls=RawCommand)
def wait_probe(words: tuple[str, ...]) -> None:
    """SUBCOMMAND [ARGS]: the hand-invoked wait-primitive instrument (produce, waiter, arm-local,
    record, report, sweep; exit 0 done, 1 report with no trials, 2 misuse)."""
    from st2.kit.wait_probe import main

    exit_with(main(list(words)))
