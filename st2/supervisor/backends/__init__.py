"""The supervisor's process backends: exec tasks, tmux PTY tasks, their process groups and the
transport that reaches a PTY.

The runtime layout they record into (scope, launch records) is :mod:`st2.runtime`, below the
supervisor; process identity (PID plus start time) is :mod:`st2.process.identity`.
"""
