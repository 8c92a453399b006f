"""The seat host: one host-level process per runtime scope that forks the per-seat DING
notifiers from pre-imported, frozen pages and serves every seat's inotify wake-ups from ONE
instance.

Why (issue 19, measured with ``benchmarks/fleet_memory.py`` on the shared 2-core machine,
Python 3.11.7): a notifier spawned as its own ``python -m st2 ding`` costs 12.9 MiB PSS (4.5× a
bare ``python3 -S``, 2.9 MiB) and opens its own inotify instance, so 627 seats take 8 GiB and
run past ``fs.inotify.max_user_instances`` (128) at ~128 seats. Measured alternatives:

- importing less: the notifier's modules without click still cost 9.6 MiB (8.8 with ``-S``);
  ``os, json, enum, dataclasses, pathlib`` alone are 6.3 MiB, so no independent interpreter
  reaches 4 MiB;
- one process serving every seat's state machine: rejected, it would make one seat's crash
  every seat's and end the per-seat stop, adoption and inventory guarantees;
- forking each notifier from a pre-imported parent after ``gc.freeze()`` (this package): a
  child shares the parent's pages copy-on-write. Python 3.11 still writes refcounts and
  specializes bytecode in place, so the host first rehearses the notifier's paths
  (:mod:`st2.ding.rehearsal`): a forked notifier measured 7.1 MiB without the rehearsal,
  4.7–4.9 MiB with it.

What stays exactly as before: each notifier is its own process in its own session and process
group (the PID is the group id), with its own log, directory and environment; the supervisor's
launch record for it holds the same PID, start time, generation id and argv digest, so
adoption, ``st2 tasks --json``, ``st2 down`` and restarts read it unchanged; a crash of one
notifier ends only that process. The host is not a task: if it is SIGKILLed, its children keep
running (re-parented), each watch wakes on its timer until the next ``st2 up`` pass starts a
new host, and then re-registers. A host of another build is retired, never forked from.

The notifier's loop itself no longer runs in the forked child (issue 19, second step): a forked
notifier still dirtied ~4.6 MiB of its inherited pages as it ran (CPython writes the reference
count of every object it touches, so each touched object copies its page), while a child that
only blocks in a read stays under 1 MiB private. Each seat's DING task is now a *stub*
(:mod:`st2.ding.stub`) forked here exactly as the notifier was — the same separate process,
launch record, log and signals — that hands its loop to the scope's DING service
(:mod:`st2.ding.service`, one process, forked from this host on the first stub's request, one
thread per seat) and blocks; parsed without click (:mod:`st2.ding.route`), since click's parse
alone dirtied ~1 MiB of a stub. If the service dies, each stub serves its seat itself, loudly.
Measured at 100 shell seats (``benchmarks/fleet_memory.py --seats 100 --mix shell``, same
machine, one after another): forked notifiers as before 4.51 MiB per seat (notifier 4.46 MiB);
forked notifiers parsed without click 3.91 MiB; stubs with the service 3.29 MiB per seat (stub
3.16 MiB, the service 10.60 MiB for all 100, 3 inotify instances); at 627 seats 3.26 MiB per
seat (the service 33.71 MiB, 628 threads, 5026 descriptors, still 3 inotify instances).

Modules: :mod:`.wire` (socket, requests, fd passing), :mod:`.server` (the loop),
:mod:`.fork` (the child side), :mod:`.hub` (the shared watch), :mod:`.client` (the
supervisor's side), :mod:`.watch_client` (a per-seat process's side), :mod:`.keeper` (the keep registrations: the
five-minute duties of every Claude wrapper while it is the slim anchor, which cannot import the
record modules).
"""
