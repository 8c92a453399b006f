"""Resources: what a seat's ``resource`` bindings observe (docs/resources.md).

A binding's URI scheme selects a provider runtime; the host accepts each result through one
acceptance core and publishes one atomic state record per binding (:mod:`st2.resources.state`).

- :mod:`.state` — the state record: schema, reader (malformed reads absent), the one writer.
- :mod:`.protocol` — the versioned line protocol between host and provider runtime.
- :mod:`.observers` — the built-in observations: ``file:``, ``git:``, ``cmd:``.
- :mod:`.runtime` — a built-in provider runtime process (``st2 resource-runtime``).
- :mod:`.registry` — the generation the host gives each runtime registration.
- :mod:`.acceptance` — the one acceptance core: a result against the current record.
- :mod:`.demand` — durable refresh demands, the admission bound, receipts.
- :mod:`.host` — the supervisor's resource thread: dispatch, coalescing, fencing, publication.
- :mod:`.proposal` — atomic proposals to a ``file:`` binding: the CAS, its intent, recovery.
- :mod:`.commands` — the cores of ``st2 agent resource refresh|show|ls|propose|recover``.

"""
