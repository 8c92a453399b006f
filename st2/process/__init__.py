"""Reading live processes: one ``/proc/<pid>/stat`` parser for every part that checks a PID.

- :mod:`.existence` — whether a PID or process group exists, by signal 0.
- :mod:`.marked` — the live processes whose environment carries one exact entry.
- :mod:`.identity` — process identity: a PID together with its process start time.
- :mod:`.proc_stat` — ``/proc/<pid>/stat``: a process's state and start time, the evidence that
  tells a recorded process from whatever reuses its PID today.
"""
