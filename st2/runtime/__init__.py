"""Host-local runtime layout, below the supervisor.

- :mod:`.scope` — where one catalog's runtime lives on one host (``scopes/<catalog-digest>/<host>/``),
  the catalog digest, and the ``sun_path`` bound every session socket is judged against.
- :mod:`.launch_record` — the launch record: its schema, pure reader and writer.
- :mod:`.session_probe` — whether a recorded PTY session is provably dead.

The supervisor writes here; the DING notifier, the roster and ``st2 validate`` read it without
importing the supervisor.
"""
