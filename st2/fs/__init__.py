"""The filesystem seam every writer and reader goes through: atomic publication, bounded reads,
locks, append-only logs, watches, and the one line an OS error prints.

- :mod:`.atomic` — atomic publication of a whole file, Maildir-style.
- :mod:`.errors` — one line for an OS error no verb handled (disk full, inodes exhausted, read-only,
  quota, a path the machine refused).
- :mod:`.lock` — per-record cross-process locks.
- :mod:`.log` — st2's logs, the owner's alone.
- :mod:`.paths` — path arithmetic that keeps its caller's kind of path, so hot paths never import
  pathlib.
- :mod:`.pipe` — emptying a non-blocking descriptor (a wake-up pipe, a signal wake-up fd).
- :mod:`.probe` — whether a directory can take a write now: create, write one block, fsync and
  unlink a probe.
- :mod:`.read` — the one bounded read of a catalog or host-local file.
- :mod:`.watch` — mutation-only inotify watches: the one primitive behind every st2 wake-up.
"""
