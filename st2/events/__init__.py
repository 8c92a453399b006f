"""Fleet events (`st2 events`): typed transitions of the fleet's observed state.

- :mod:`.event` — the wire line (``st2.fleet-event.v1``).
- :mod:`.facets` — a roster row, a park marker or the usage verdict as the per-kind values whose
  changes are events, and the diff of two of them.
- :mod:`.projection` — reads the facets through the roster's own :func:`st2.roster.build.seat_row`.
- :mod:`.journal` — the host-local bounded journal the supervisor appends to and every reader follows.
- :mod:`.flap` — the journal's budget per facet: a flapping seat cannot roll every other seat's
  events off.
- :mod:`.engine` — the supervisor's watcher that drives them.
- :mod:`.notify` — runs the operator's ``catalog.kdl`` hooks.
- :mod:`.dispatch` — the bounded queue, worker thread and rate limit the hooks and the web's
  pushes share.
- :mod:`.apprise_send` — a hook's run that sends the event to its apprise URLs.
- :mod:`.hook_process` — one run of an operator hook's command, a process group st2 ends.
- :mod:`.reading` — the reader's side of ``st2 events``.

This package sits below the supervisor (which starts the engine and hands it its park reader) and
above the roster, records and usage readers.
"""
