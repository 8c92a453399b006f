"""The supervisor's process backends: exec tasks, tmux PTY tasks, their process groups and the
transport that reaches a PTY.

The runtime layout they record into (scope, launch records) is :mod:`st2.runtime`, below the
supervisor; process identity (PID plus start time) is :mod:`st2.process.identity`.

- :mod:`.backend` — the interface both backends implement, and the task specification they launch.
- :mod:`.exec_backend` — the exec backend: a terminal-free task in its own session and process
  group.
- :mod:`.process_group` — killing a task's whole process group, and reaping our own children.
- :mod:`.tmux_backend` — the PTY backend: one tmux server per task, on its own socket under the
  runtime scope.
- :mod:`.transport` — how a task is detached from the supervisor.
"""
