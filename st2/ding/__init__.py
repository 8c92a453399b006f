"""DING: exactly-once, screen-verified mail notices into a seat's terminal (docs/delivery.md §DING).

``notice`` builds the frame, ``harness`` names the screen grammars that read a captured pane
(:mod:`st2.drivers.screen`), ``ownership`` is the persisted delivery state machine, ``terminal``
talks to the seat's own tmux server, and ``notifier`` is the loop behind ``st2 ding``, woken by
the seat's watch (:mod:`st2.seathost.watch_client`) on inbox and status mutations.

- :mod:`.control_client` — a seat's tmux server spoken to through one kept control-mode client
  instead of one spawned client per command list.
- :mod:`.notice` — the DING notice: one printable line per unread message (docs/delivery.md §Notice).
- :mod:`.notifier` — the notifier loop behind ``st2 ding <runtime-id>``: one per PTY seat.
- :mod:`.ownership` — DING ownership: the persisted delivery state machine of one notifier.
- :mod:`.rehearsal` — a rehearsal of the notifier's code over a scratch seat, for the seat host to
  run once before it freezes its heap and forks notifiers.
- :mod:`.route` — ``st2 ding`` without click, in the one shape the supervisor launches it, for the
  stubs the seat host forks (:mod:`st2.ding.stub`).
- :mod:`.serve` — boot one notifier for a target PTY task and run it until stopped or the session is
  gone.
- :mod:`.service` — the DING service: ONE host-level process per runtime scope that runs every
  seat's notifier loop, each in its own thread.
- :mod:`.service_killed` — the heartbeat's kill record.
- :mod:`.service_wire` — the DING service's wire.
- :mod:`.spawner` — short client processes spawned from small helpers that hold no descriptor table.
- :mod:`.stub` — a seat's DING task as a stub.
- :mod:`.terminal` — the seat's terminal: its own tmux server, reached only through its ``-S``
  socket.
- :mod:`.harness` — the screen grammars DING classifies a seat with
  (:class:`st2.drivers.screen.Harness`).
"""
