"""The seat host's preload manifests: the modules a forked per-seat process imports, imported
once in the host before it forks so every child shares those pages instead of importing its own.

:data:`DING` is what a forked DING stub runs (the front door's ``ding`` row, or the click route
for any other spelling), the stub serving its seat itself, and the DING service: the notifier,
its screen grammars and watch. :data:`RESOURCE_RUNTIMES` is what a forked built-in provider
runtime runs (``st2 resource-runtime <scheme>`` on the front door's forked row, and the ``file:``,
``git:`` and ``cmd:`` observers); it is small (about 50 KiB in the host, docs/memory.md §Resource
provider runtimes), so the host imports it with :data:`DING` at its start.
:data:`SESSION_WRAPPERS` is what a forked Codex or opencode session wrapper runs, its lazily imported paths included (each native driver's own session module
is added from the driver table by the host's preload); the host imports it at its first
``fork-session`` request only (:mod:`st2.seathost.server`), so a fleet without native seats
never pays it. Each is checked against the ``sys.modules`` of a traced run of the same entries
(tests/seathost/test_preload.py): a module the run imports and the preload does not, or a
manifest entry the run never imports, fails it.
"""

from __future__ import annotations

DING: tuple[str, ...] = (
    "selectors",
    "subprocess",
    "st2.bus.mailbox",
    "st2.catalog.location",
    "st2.catalog.seat_watch",
    "st2.cli.common",
    "st2.cli.ding",
    "st2.cli.ding_service",
    "st2.declarations.agent",
    "st2.declarations.catalog",
    "st2.delivery.hold",
    "st2.ding.harness",
    "st2.ding.notice",
    "st2.ding.notifier",
    "st2.ding.ownership",
    "st2.ding.route",
    "st2.ding.serve",
    "st2.ding.service",
    "st2.ding.stub",
    "st2.ding.terminal",
    "st2.drivers",
    "st2.front.table",
    "st2.fs.log",
    "st2.records.status",
    "st2.runtime.scope",
    "st2.seathost.watch_client",
)

RESOURCE_RUNTIMES: tuple[str, ...] = (
    "st2.resources.observers",
    "st2.resources.protocol",
    "st2.resources.runtime",
    "st2.resources.state",
    "st2.worktree.git",
)

SESSION_WRAPPERS: tuple[str, ...] = (
    "base64",
    "hashlib",
    "hmac",
    "http.client",
    "queue",
    "secrets",
    "ssl",
    "string",
    "textwrap",
    "threading",
    "traceback",
    "st2.delivery.batch",
    "st2.delivery.ledger",
    "st2.delivery.pump",
    "st2.drivers.human_desk",
    "st2.drivers.lifecycle",
    "st2.drivers.native_session",
    "st2.drivers.pane_anchor",
    "st2.drivers.resume_hold",
    "st2.drivers.seat",
    "st2.drivers.session_route",
    "st2.drivers.version_gate",
    "st2.fs.lock",
    "st2.records.driver_diagnostic",
    "st2.records.harness_context",
    "st2.records.harness_state",
    "st2.records.placement",
    "st2.runtime.resumable_session",
    "st2.runtime.resume",
)


def import_all(manifest: tuple[str, ...]) -> None:
    """Import every module ``manifest`` names."""
    for name in manifest:
        __import__(name)
