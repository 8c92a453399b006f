"""The seat host: one host-level process per runtime scope that forks every per-seat process
(DING stubs, the DING service, forked native session wrappers) from pre-imported, frozen pages,
and serves every seat's inotify wake-ups from one instance.

Contract: each forked child is its own process in its own session and process group, with its own
log, directory and environment, and the supervisor's launch record for it holds the same PID, start
time, generation id and argv digest a spawned one would, so adoption, ``st2 tasks --json``, ``st2
down`` and restarts read it as a spawned one's; a crash of one child ends only that child. The host
is not a task: SIGKILLed, its children run on (re-parented), each watch wakes on its own timer until
the next ``st2 up`` pass starts a new host, and they re-register with it. A host of another build is
retired, never forked from. Right after ``gc.freeze()`` the host forks one zygote, an idle copy of
itself that only forks, so pages the host writes later stay shared with every child; a dead zygote
is replaced at the next fork. (What this buys per seat: docs/memory.md §Per-seat memory and inotify
at fleet scale.)

- :mod:`.client` — the supervisor's side: start, reach and retire the scope's host.
- :mod:`.fork` — the child side of a fork: its session, descriptors and entry.
- :mod:`.hub` — the shared inotify watch: one instance, a wake pipe per registration.
- :mod:`.keeper` — the keep registrations: the five-minute duties of every Claude wrapper while it
  is the slim anchor.
- :mod:`.preload` — the modules the host imports before it forks each kind of child (checked
  against traced runs by tests/seathost/test_preload.py).
- :mod:`.server` — the host's loop: requests, forks, watches, keeps.
- :mod:`.session_fork` — a native seat's session wrapper forked onto its pane's terminal.
- :mod:`.watch_client` — a per-seat process's side of the shared watch.
- :mod:`.wire` — the socket, the request lines and descriptor passing.
- :mod:`.zygote` — the idle child that forks.
"""
