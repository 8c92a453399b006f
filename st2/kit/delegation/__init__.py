"""Delegation pieces st2 ships (docs/kit.md §Delegation model, docs/kit.md §Turn-end liveness hook). The
hooks that use them are Claude Code's and live in :mod:`st2.drivers.claude.hooks`.

- :mod:`launch_record` — the ``pid=<n> run=<key>`` launch record a producer's launcher writes.
- :mod:`process_liveness` — whether a recorded PID is a live process (start time, zombies).
- :mod:`producer_liveness` — ``st2 check producer-liveness``, the reader over one record or a set.
- :mod:`knobs` — the ``DELEGATION_KIT_*`` knobs these read, with the table validator.
- :mod:`.agent_definitions` — agent-type definitions under ``DELEGATION_KIT_AGENT_DIR``, for
  dispatch guard rule D5.
- :mod:`.checkout` — where the scratch dir and the stop log live, seen from a linked git worktree.
- :mod:`.reader_spawn` — resolving and running the turn-end hook's liveness reader as a bounded
  child.
- :mod:`.stop_log` — the turn-end hook's log: one appended line per firing.
- :mod:`.task_view` — what the SubagentStop payload says beside the reader.

Every module here is standard library only: the hooks and the reader are hot paths.
"""
