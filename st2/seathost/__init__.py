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
thread per seat) and blocks; parsed without click (:mod:`st2.front.table`), since click's parse
alone dirtied ~1 MiB of a stub. If the service dies, each stub serves its seat itself, loudly.
Measured at 100 shell seats (``benchmarks/fleet_memory.py --seats 100 --mix shell``, same
machine, one after another): forked notifiers as before 4.51 MiB per seat (notifier 4.46 MiB);
forked notifiers parsed without click 3.91 MiB; stubs with the service 3.29 MiB per seat (stub
3.16 MiB, the service 10.60 MiB for all 100, 3 inotify instances); at 627 seats 3.26 MiB per
seat (the service 33.71 MiB, 628 threads, 5026 descriptors, still 3 inotify instances).

The host no longer forks a per-seat process itself (issue 19, third step): the host keeps
working after every fork (requests, every seat's inotify events, the keeper's timers), and each
page it writes after a fork stops being shared with the children forked before. Right after
``gc.freeze()`` it forks one **zygote** (:mod:`.zygote`), an idle copy of itself that only
forks: the host forwards every ``fork`` and ``fork-session`` request to it over a socketpair
(the same line, the same descriptors) and tracks the children by PID and start time. A dead
zygote is replaced at the next fork (the log says so; if none can be forked the host forks
directly); a zygote ends when its host does, and its children keep running. The native
wrappers' modules stay the host's lazy preload (at the first ``fork-session``), after which the
host replaces its zygote by one forked after the preload, so the wrappers share those pages.
Measured one after another on the same machine (``benchmarks/fleet_memory.py``): ``--seats 100
--mix shell,claude --settle 5`` before / after: shell seat 3.52 / 3.08–3.09 MiB, Claude seat 6.10 /
5.73–5.74 MiB (≤ 6 now met), DING stub 3.35 / 2.92–2.93 MiB, Claude slim anchor 2.64 / 2.63 MiB, host-level
processes 13.86 / 17.19 MiB for all 100 (host 3.47 / 4.30, zygote — / 2.54, service 10.39 /
10.36); ``--seats 20 --mix codex,opencode`` before / after: Codex seat 6.21 / 6.29 MiB, opencode
seat 7.74 / 7.84 MiB, forked wrapper 6.54 / 6.46 MiB, host-level 6.20 / 9.63 MiB for all 20 (the
zygote's fixed cost; the zygote doing the preload itself instead measured 6.60 / 8.16 MiB per
seat, host-level 14.65 MiB: the host's pages then stayed unshared).

Modules: :mod:`.wire` (socket, requests, fd passing), :mod:`.server` (the loop),
:mod:`.fork` (the child side), :mod:`.zygote` (the idle child that forks), :mod:`.hub` (the shared watch), :mod:`.client` (the
supervisor's side), :mod:`.watch_client` (a per-seat process's side), :mod:`.keeper` (the keep registrations: the
five-minute duties of every Claude wrapper while it is the slim anchor, which cannot import the
record modules).
"""
