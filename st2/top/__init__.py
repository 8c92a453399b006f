"""`st2 top`: a live fleet view. Its model, watch and actions are shared with `st2 web` (:mod:`st2.web`).

- :mod:`.model` — projects the roster, task inventory and usage readers into cells (no projection
  of its own).
- :mod:`.refresh` — turns inotify events into the set of seats to re-read.
- :mod:`.events_view` — the view's recent fleet events, read from this host's event journal.
- :mod:`.usage_view` — the header's usage reading.
- :mod:`.live` — the fleet, usage and events kept current by one watch (both faces' refresh).
- :mod:`.actions` — what the view's keys do, each through the verb's own core.
- :mod:`.plain` — prints one frame.
- :mod:`.app` / :mod:`.widgets` — the Textual UI (imported only by `st2 top` itself: never by the
  roster, a hook or DING).
"""
