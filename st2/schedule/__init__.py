"""Scheduled prompts: ``schedule "<name>" { every … | at … ; prompt … }`` posted into the seat's own
inbox as stream work (the built-in stream ``schedule``) by ``st2 up`` (docs/catalog.md §Scheduled
prompts).

- :mod:`.timing` — the slots of a cadence: the next run after an instant, the last slot at or
  before one (pure, zone-aware).
- :mod:`.state` — the per-seat schedule state record in the host-local session store.
- :mod:`.runner` — the supervisor's schedule thread: at most one post per due schedule, one
  catch-up after any downtime, posted through :mod:`st2.bus.stream`.
"""
