"""The usage budget: the usage.txt snapshot contract, its poll producer, the verdict that gates
delegation on it, the sample history and the trend reporter over that history.

Everything here is standard library only: `st2 usage verdict`, `st2 usage poll` and
`st2 hook budget-guard` are hot paths and import these modules before click ever loads.

- :mod:`.history` — the usage-history log (``DELEGATION_KIT_USAGE_HISTORY``).
- :mod:`.knobs` — the DELEGATION_KIT_* knobs the usage budget reads, through st2's one knob table
  and reader (:mod:`st2.kit.knobs`).
- :mod:`.poll` — `st2 usage poll [--timeout SECONDS]`: one poll cycle of the usage snapshot's poll
  producer.
- :mod:`.trend` — `st2 usage trend [--] [history-file]`.
- :mod:`.verdict` — `st2 usage verdict [--] [usage-file [credentials-file]]`: the trustworthy budget
  verdict.
"""
