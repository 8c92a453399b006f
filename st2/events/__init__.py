"""Fleet events (`st2 events`): typed transitions of the fleet's observed state.

:mod:`.event` is the wire line (``st2.fleet-event.v1``); :mod:`.facets` turns a roster row, a
park marker or the usage verdict into the per-kind values whose changes are events, and diffs
two of them; :mod:`.projection` reads them through the roster's own
:func:`st2.roster.build.seat_row`; :mod:`.journal` is the host-local bounded journal the
supervisor appends to and every reader follows; :mod:`.engine` is the supervisor's watcher that
drives them; :mod:`.notify` runs the operator's ``catalog.kdl`` hooks; :mod:`.reading` is the
reader's side of ``st2 events``. This package sits below the supervisor (which starts the engine
and hands it its park reader) and above the roster, records and usage readers.
"""
