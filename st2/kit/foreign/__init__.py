"""The foreign-vendor run (seed 002 §The foreign-vendor run, §Resuming a session, §The keyed
verdict): one audit or sweep on another vendor's coding agent, in a throwaway clone, budgeted
by that vendor's own usage snapshot.

- :mod:`.clone` — the run's tree: a shared, no-checkout clone of the top level checked out detached
  at the committed HEAD.
- :mod:`.executor` — ``st2 foreign run|resume|close`` (seed 002 §The foreign-vendor run, §Resuming a
  session).
- :mod:`.keyed_verdict` — the keyed verdict (seed 002 §The keyed verdict).
- :mod:`.session` — session.txt, the open session's record beside its clone.
"""
