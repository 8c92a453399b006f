"""The foreign-vendor run (docs/kit.md §Foreign run, docs/kit.md §Resuming a session,
docs/kit.md §Keyed verdict): one audit or sweep on another vendor's coding agent, in a throwaway clone, budgeted
by that vendor's own usage snapshot.

- :mod:`.clone` — the run's tree: a shared, no-checkout clone of the top level checked out detached
  at the committed HEAD.
- :mod:`.executor` — ``st2 foreign run|resume|close``.
- :mod:`.keyed_verdict` — the keyed verdict (docs/kit.md §Keyed verdict).
- :mod:`.session` — session.txt, the open session's record beside its clone.
"""
