"""Delegation guards st2 ships (seed 002 §The delegation model, §The turn-end liveness hook).

- :mod:`launch_record` — the ``pid=<n> run=<key>`` launch record a producer's launcher writes.
- :mod:`process_liveness` — whether a recorded PID is a live process (start time, zombies).
- :mod:`producer_liveness` — ``st2 check producer-liveness``, the reader over one record or a set.
- :mod:`liveness_hook` — ``st2 hook subagent-stop-liveness``, the SubagentStop hook.
- :mod:`dispatch_guard` — ``st2 hook dispatch-guard``, PreToolUse on Agent, rules D1–D6.
- :mod:`knobs` — the ``DELEGATION_KIT_*`` knobs these read, with the table validator.

Every module here is standard library only: the hooks and the reader are hot paths.
"""
