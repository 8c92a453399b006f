"""The supervisor: lower seat declarations to tasks and keep exactly those running (docs/architecture.md §Flow: the supervisor pass).

- :mod:`.budgets` — the supervisor's budget step: every declared account's budget record, published
  each pass.
- :mod:`.catalog_view` — the supervisor's read of the catalog: discover this host's seats and lower
  each one.
- :mod:`.exit_watch` — prompt exit detection for every running task, children or not.
- :mod:`.holds` — holds written by ``st2 down <identity>``: a running supervisor does not relaunch a
  held task.
- :mod:`.interval` — ``st2 up --interval``: the supervisor's fallback timer between passes, its bound
  and its reading.
- :mod:`.inventory` — ``st2 tasks --json``: the ``st2.task-inventory.v1`` envelope.
- :mod:`.loop` — the supervisor loop: ``st2 up``.
- :mod:`.lowering` — lowering: one seat declaration becomes the tasks the supervisor keeps running.
- :mod:`.materialize` — materialization: apply a seat's ``render`` block to its workspace.
- :mod:`.moves` — moving a running seat to the account its plan names: at an idle boundary, its
  conversation carried or recorded lost (docs/accounts.md).
- :mod:`.notice` — crash-loop notices: a task parked by a fail-mode restart policy is reported once,
  over the bus, to the agent its seat names as ``supervisor``.
- :mod:`.park` — park markers and unpark requests, scoped by catalog and host (the runtime scope).
- :mod:`.reconcile` — one serialized reconcile pass: compare the lowered catalog with launch records
  and live processes, then adopt, launch, restart, park or stop.
- :mod:`.relaunch_admission` — the pass's side of relaunch admission: which launches ask their
  account (st2.accounts.admission) and where an operator's explicit start goes.
- :mod:`.resources` — the bindings of this host's running seats handed to the resource host thread.
- :mod:`.restart_policy` — the task lifecycle machine the supervisor keeps per task, and its one
  transition function.
- :mod:`.resume_request` — ``st2 up --resume``: the seats ``st2 down`` stopped resume their recorded
  harness sessions.
- :mod:`.supervisor_record` — which supervisor process runs a catalog on a host: ``supervisor.json``
  in the runtime scope, naming its PID and process start time.
- :mod:`.teardown` — ``st2 down``: the only command that kills tasks.
- :mod:`.unpark` — recovering one parked task (``st2 unpark``).
- :mod:`.watch` — mutation-only filesystem wake-ups for the supervisor.
- :mod:`.worktrees` — the supervisor's worktree step: a seat's worktree made or reused before its
  render and launch, and its reading kept for the roster.
- :mod:`.backends` — the supervisor's process backends: exec tasks, tmux PTY tasks, their process
  groups and the transport that reaches a PTY.
"""
