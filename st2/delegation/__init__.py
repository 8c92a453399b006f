"""Delegation pieces st2 ships (docs/kit.md §Delegation model, docs/kit.md §Turn-end liveness hook). The
hooks that use them are Claude Code's and live in :mod:`st2.drivers.claude.hooks`.

- :mod:`launch_record` — the ``pid=<n> run=<key>`` launch record a producer's launcher writes.
- :mod:`process_liveness` — whether a recorded PID is a live process (start time, zombies).
- :mod:`producer_liveness` — ``st2 check producer-liveness``, the reader over one record or a set.
- :mod:`knobs` — the ``DELEGATION_KIT_*`` knobs these read, with the table validator.

Every module here is standard library only: the hooks and the reader are hot paths.
"""
