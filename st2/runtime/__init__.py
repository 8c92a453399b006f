"""Host-local runtime, below the supervisor: one catalog's scope and session store on one host.

- :mod:`.layout` — every host-local path (the scope, the session store, the caches): the one
  place their names are spelled.
- :mod:`.runtime_home` — which scope directory a catalog has on a host, whatever path or
  environment names it (the catalog's pointer, the resolved-path digest).
- :mod:`.scope` — the runtime scope of one catalog on one host, its atomic publication, and the
  ``sun_path`` bound every session socket is judged against.
- :mod:`.launch_record` — the launch record: its schema, pure reader and writer.
- :mod:`.resumable_session` — the resumable-session record and the session store it lives in.
- :mod:`.resume` — resuming a seat's conversation across relaunches (the harness-neutral core).
- :mod:`.session_probe` — whether a recorded PTY session is provably dead.
- :mod:`.tmux` — the tmux client command line for a PTY task's own server.
- :mod:`.declaration_cache` — what the roster and the bus take from a seat's declaration, and the
  host-local cache of it.

The supervisor writes here; the DING notifier, the roster and ``st2 validate`` read it without
importing the supervisor.
"""
