"""``admit-unmeasured`` nodes of ``catalog.kdl`` (docs/drivers.md §Measured builds)::

    catalog {
        admit-unmeasured "codex" "0.160.0"            // launch this build though no capture pins it
        admit-unmeasured "opencode" "1.18.40" "1.19.0"
    }

A driver's version gate admits exactly its measured builds. An operator may launch another exact
build of a gated harness by naming it here; the seat then runs with its context producer
withholding (no harness-context reading is published) and a ``context`` driver-diagnostic that
Doctor names ``context-withheld``. One node per harness, one or more exact ``MAJOR.MINOR.PATCH``
builds; each problem is reported at its own line and column. Standard library only.
"""

from __future__ import annotations

import re
from functools import partial

from st2.base import harnesses
from st2.declarations.diagnostics import CATALOG

FIELD = "admit-unmeasured"
EXACT_BUILD = re.compile(r"(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})")


def admit_node(context, node, path: tuple[int, ...], admitted: dict[str, tuple[str, ...]]) -> None:
    """Read one ``admit-unmeasured "<harness>" "<build>"…`` into ``admitted`` (harness → builds)
    or report why not, at the argument at fault."""
    from st2.declarations import fields
    from st2.declarations.context import NAME, argument

    field_path = ("catalog", FIELD)
    words = fields.strings(context, node, path, field_path)
    if words is None:
        return
    if len(words) < 2:
        context.report("invalid-value", path, NAME, field_path,
                       f"`{FIELD}` needs a harness and at least one exact build, e.g. "
                       f'{FIELD} "codex" "0.160.0"', layer=CATALOG)
        return
    harness, builds = words[0], words[1:]
    if harness not in harnesses.names():
        context.report("invalid-value", path, argument(0), field_path,
                       f"`{FIELD}` names no harness {harness!r} (harnesses: {', '.join(harnesses.names())})",
                       layer=CATALOG, help=partial(fields.suggestion, harness, harnesses.names()))
        return
    if harness in admitted:
        context.report("duplicate-field", path, argument(0), field_path,
                       f"`{FIELD}` for {harness!r} is declared more than once (name every build on one node)",
                       layer=CATALOG)
        return
    for index, build in enumerate(builds, start=1):
        if not EXACT_BUILD.fullmatch(build):
            context.report("invalid-value", path, argument(index), field_path,
                           f"`{FIELD}` build {build!r} is not an exact MAJOR.MINOR.PATCH version",
                           layer=CATALOG)
            return
        if build in builds[:index - 1]:
            context.report("duplicate-field", path, argument(index), field_path,
                           f"`{FIELD}` names {harness} {build} twice", layer=CATALOG)
            return
    admitted[harness] = builds
