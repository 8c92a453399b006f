"""``st2 hook …``: the harness hooks. Parsing glue only.

Every hook is a hot path (``st2.entry.HOT_PATHS``) dispatched before click loads; this group
exists so ``st2 --help`` and ``st2 hook --help`` name them, and so a global option (``st2
--catalog X hook …``) still reaches the same core. Each forwards its words untouched.
"""

from __future__ import annotations

import click

from st2.cli.common import exit_with
from st2.cli.usage import RawCommand


@click.group()
def hook() -> None:
    """Harness hooks (PreToolUse budget-guard and dispatch-guard, SubagentStop liveness)."""


def _forwarder(subverb: str, summary: str) -> click.Command:
    def callback(words: tuple[str, ...]) -> None:
        from st2.front.table import dispatch

        exit_with(dispatch("hook", subverb, list(words)))

    return RawCommand(subverb, callback=callback, help=summary)


hook.add_command(_forwarder("budget-guard", "PreToolUse on Agent: block a PAUSE verdict, advise on every other (payload on stdin)."))
hook.add_command(_forwarder("dispatch-guard", "PreToolUse on Agent: the dispatch rules D1–D6 (payload on stdin)."))
hook.add_command(_forwarder("subagent-stop-liveness", "SubagentStop: refuse a turn end while a producer it launched lives (payload on stdin)."))
