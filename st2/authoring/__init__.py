"""Catalog authoring: every st2 write path that changes a declaration or moves a seat.

Each verb (``st2 agent publish|new|describe|address|stream|desired-state``, ``st2 catalog
archive|unarchive``) runs under the catalog authoring lock (``.st2/catalog-authoring.lock``),
reads ownership from the incumbent declaration through :mod:`st2.authoring.authority`, admits
the prospective catalog through the full-catalog gate (:mod:`st2.authoring.gate`), publishes
atomically and advances ``.st2/catalog-generation`` so a resident supervisor converges at once.
The CLI modules are parsing glue over these functions.

- :mod:`.archive` — ``st2 catalog archive`` / ``unarchive``: moving a retired seat out of the live
  catalog and back (docs/catalog.md §Archival).
- :mod:`.auto_archive` — the supervisor's archive step.
- :mod:`.desired_state` — ``st2 agent desired-state``: one source-preserving edit of a seat's
  lifecycle intent.
- :mod:`.faults` — a test-only fault seam.
- :mod:`.graph` — ``st2 catalog graph --json``.
- :mod:`.account` — ``st2 agent account``: put a seat on another declared account.
- :mod:`.presentation` — ``st2 agent describe`` and ``st2 agent address``: presentation authoring.
- :mod:`.publication` — ``st2 agent publish``: compare-and-swap publication through the full-catalog
  gate.
- :mod:`.resources` — ``st2 agent resource add|rm``: a seat's ``resource`` bindings.
- :mod:`.retired_ledger` — ``.st2/retired-observed.json`` (``st2.catalog-retired-observed.v1``):
  when this catalog's supervisor first observed each seat's retirement, per host.
- :mod:`.source` — capturing a publication source (``--spec FILE`` or ``--bundle DIR``) and its
  digest.
- :mod:`.source_edit` — source-preserving edits of one ``agent.kdl``.
- :mod:`.starter` — ``st2 agent new <identity> --harness <h> [--workspace W]``.
- :mod:`.streams` — ``st2 agent stream add|rm``: a seat's ``stream`` declarations.
- :mod:`.tombstone` — the archive tombstone, ``.st2/archive/<host>/<identity>.tombstone.json``
  (``st2.catalog-archive-tombstone.v1``).
- :mod:`.transaction` — one cooperative authoring transaction.
- :mod:`.validation` — ``st2 validate``'s core: every problem in a catalog, one diagnostic each.
- :mod:`.wire` — wire models of the authoring path's JSON outputs.
- :mod:`.worktree_rules` — ``st2 validate``'s worktree rules for the selected host's seats.
- :mod:`.worktrees` — a seat's worktree when the seat leaves: kept and named by archival, skipped
  by auto-archive while it holds work, removed only by ``st2 agent worktree rm``.
"""
