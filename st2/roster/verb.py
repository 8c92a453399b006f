"""The body of ``st2 agents``, shared by the click command (:mod:`st2.cli.agents`) and its
click-free route (:mod:`st2.front.verbs`), so both print the same bytes by construction."""

from __future__ import annotations

from pathlib import Path
from typing import Callable


def agents(root: Path, host: str, *, as_json: bool, enrich: bool, status_filter: str | None,
           identity_filter: str | None, host_filter: str | None, echo: Callable[..., None]) -> int:
    """Build the roster and print it through ``echo`` (``click.echo``'s signature): warnings on
    stderr, then the JSON or text roster; or, when ``identity_filter`` names no seat (and no
    status filter explains an empty roster), the error line. Return the exit status."""
    from st2.base.clock import command_clock
    from st2.roster.build import build_roster
    from st2.runtime.declaration_cache import DeclarationCache

    now_ms = command_clock().wall_ms()
    rows, problems = build_roster(root, now_ms, enrich=enrich, status_filter=status_filter,
                                  identity_filter=identity_filter, host=host, host_filter=host_filter,
                                  cache=DeclarationCache.open(root))
    for problem in problems:
        echo(f"warning: {problem}", err=True)
    if identity_filter is not None and not rows and status_filter is None:
        echo(f"error: no agent {identity_filter} in {root}", err=True)
        return 1
    if as_json:
        from st2.roster.wire import to_json

        echo(to_json(rows, enrich))
    else:
        from st2.roster.human import format_rows

        echo(format_rows(rows, enrich=enrich, now_ms=now_ms))
    return 0
