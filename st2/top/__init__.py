"""`st2 top`: a live fleet view. :mod:`.model` projects the roster, task inventory and usage
readers into cells (no projection of its own), :mod:`.refresh` turns inotify events into the set
of seats to re-read, :mod:`.plain` prints one frame, and :mod:`.app` / :mod:`.widgets` are the
Textual UI (imported only by `st2 top` itself: never by the roster, a hook or DING)."""
