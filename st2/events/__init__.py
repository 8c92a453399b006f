"""Fleet events (`st2 events`): typed transitions of the fleet's observed state.

:mod:`.event` is the wire line (``st2.fleet-event.v1``); :mod:`.facets` turns the roster's own
projection (:func:`st2.roster.build.seat_row`), this host's park markers and the usage verdict
into the per-kind values whose changes are events, and diffs two of them; :mod:`.journal` is the
host-local bounded journal the supervisor appends to and every reader follows; :mod:`.engine` is
the supervisor's watcher that drives them; :mod:`.notify` runs the operator's hooks.
"""
