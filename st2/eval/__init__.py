"""``st2 eval``: a compact team and the eval that exercises it, in one ``.kdl`` file (docs/eval.md).

- :mod:`.spec` — the spec's grammar, read into a model with ``file:line:column`` diagnostics.
- :mod:`.world` — the hermetic temp catalog and state home the eval runs in.
- :mod:`.shell` — one command held as a process group with a deadline.
- :mod:`.judges` — declarative checks, and the reading of an ``ask`` judge's reply.
- :mod:`.run` — the run itself: boot, kickoff, steps, judges, teardown, the verdict.
"""
