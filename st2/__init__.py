"""st2 — supervise a fleet of coding-agent seats declared in a file catalog.

The root holds the entry layer only (the console script and ``python -m st2``); every other module lives in the package of its layer,
and the packages' imports form a DAG (tests/test_import_graph.py).

- :mod:`.__main__` — ``python -m st2``: runs :func:`st2.entry.console`.
- :mod:`.entry` — the `st2` console entry point.
- :mod:`.fleet` — the click-free cores of ``st2 up``, ``down``, ``tasks``, ``validate`` and ``doctor``.
- :mod:`.accounts` — model accounts: config locations, per-account budgets, the budget hold,
  moves between accounts and relaunch admission.
- :mod:`.authoring` — catalog authoring: every st2 write path that changes a declaration or moves a
  seat.
- :mod:`.base` — the primitives every layer may import: standard library only, importing nothing of
  st2.
- :mod:`.bus` — the message bus: mail files in each seat's ``resources/inbox`` and
  ``resources/archive``.
- :mod:`.catalog` — the catalog on disk: its layout, discovery of seats and principals, names,
  locations, and what a replication engine carries.
- :mod:`.cli` — the click CLI: each verb in its own module, imported only when invoked.
- :mod:`.declarations` — declarations: ``agent.kdl`` (and the catalog's own ``catalog.kdl``) into
  validated models.
- :mod:`.delivery` — native delivery shared by the pumps that drive a harness's own API (Codex
  app-server, opencode server).
- :mod:`.demo` — the bundled demo catalog: `shell` harness seats that need no model account.
- :mod:`.ding` — DING: exactly-once, screen-verified mail notices into a seat's terminal.
- :mod:`.doctor` — `st2 doctor`: advisories and failures about the catalog, its records and its
  tasks.
- :mod:`.drivers` — harness drivers: one package per harness (``st2.drivers.claude`` …).
- :mod:`.eval` — `st2 eval`: a compact team and the eval that exercises it, from one ``.kdl`` file.
- :mod:`.events` — fleet events (`st2 events`): typed transitions of the fleet's observed state.
- :mod:`.front` — the click-free front door: one argv-shape parser and one table of verb, accepted
  shape and core, tried before click loads.
- :mod:`.fs` — the filesystem seam: atomic publication, bounded reads, locks, logs, watches and the
  OS-error line.
- :mod:`.kit` — the delegation kit: its knobs, the cores of its hooks, the usage budget,
  its gates and arms.
- :mod:`.process` — reading live processes: one ``/proc/<pid>/stat`` parser for every part that
  checks a PID.
- :mod:`.records` — one module per replicated record kind (status, harness-state, harness-context,
  driver diagnostic): schema, reader, writer.
- :mod:`.roster` — the roster behind `st2 agents`.
- :mod:`.resources` — resource bindings: the per-binding state record, provider runtimes, host
  acceptance and demand.
- :mod:`.runtime` — host-local runtime, below the supervisor: one catalog's scope and session store
  on one host.
- :mod:`.resync` — resync: each accepted resource transition published as stream work into the
  inboxes of the seats subscribed to it.
- :mod:`.schedule` — scheduled prompts: each seat's declared schedules posted into its inbox as
  stream work by ``st2 up``.
- :mod:`.seathost` — the seat host: one host-level process per runtime scope that forks the per-seat
  processes from frozen pages and serves every seat's inotify wake-ups.
- :mod:`.service` — systemd integration: the user units rendered from ``units/`` and their
  installation.
- :mod:`.supervisor` — the supervisor: lower seat declarations to tasks and keep exactly those
  running (docs/architecture.md §Flow: the supervisor pass).
- :mod:`.top` — `st2 top`: a live fleet view.
- :mod:`.web` — `st2 web`: the fleet's web face (pages, live stream, actions, metrics).
- :mod:`.worktree` — each seat's own git worktree: made before its first launch, read for the
  roster, never removed while it holds the seat's work.
"""

__version__ = "0.1.0"
