"""`st2 doctor`: advisories and failures about the catalog, its records and its tasks.

- :mod:`.event_journal` — Doctor names a fleet event journal the supervisor cannot use
  (:mod:`st2.events.journal`).
- :mod:`.filesystem` — Doctor names the machine faults every writer of st2 hits.
- :mod:`.findings` — a Doctor finding: an advisory never changes the exit status; a failure does.
- :mod:`.health` — supervisor and task health for ``st2 doctor``.
- :mod:`.records` — record advisories (docs/records.md §Doctor advisories).
- :mod:`.replication` — Doctor's replication advisories.
- :mod:`.run` — run every Doctor check over one catalog.
- :mod:`.schedules` — Doctor's schedule lines: each declared schedule's next run.
- :mod:`.wakeups` — Doctor's wake-up check: every live DING notifier wakes on inotify.
- :mod:`.worktrees` — Doctor's worktree findings: a retired seat's worktree holding work, a
  running seat's worktree held.
"""
