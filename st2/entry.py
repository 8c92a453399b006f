"""The `st2` console entry point.

Hot paths (the status-line tee, harness hooks, `usage verdict`) run hundreds of times an hour
per seat, so they are recognized from ``sys.argv`` and dispatched before anything imports
click or pydantic; ``st2 message send``, ``st2 agents``, the fleet verbs (``up``, ``down``,
``tasks``, ``validate``, ``doctor``) and the session wrappers in their common well-formed shapes
run without click too (byte-identical output). All of them are rows
of the click-free front door's one table (:mod:`st2.front.table`; ``HOT_PATHS`` is its hot
paths). Every other command line goes through the click CLI in :mod:`st2.cli`.

:func:`console` is the process entry (the console script and ``python -m st2``). After a verb of
those two click-free routes returns, it flushes stdout and stderr and ends the process with
``os._exit``, skipping the interpreter's finalization (tearing down every module the verb loaded;
what that costs a firing: docs/memory.md §Third pass: no pathlib, no finalization). It does so only
when the exit would do nothing else: no ``atexit`` handler registered (logging, for one, registers
its shutdown) and no other thread running; a flush that fails (a closed pipe) takes the ordinary
exit too, which reports it. The exit status is the same either way.
"""

from __future__ import annotations

import sys

from st2.front.table import HOT_PATHS, route

__all__ = ["HOT_PATHS", "console", "main"]  # st2.entry.HOT_PATHS is the table docs/architecture.md §Hot paths names


def _route(words: list[str]) -> tuple[int, bool]:
    """Run ``words``; return the exit status and whether a click-free route ran them."""
    status = route(words)
    if status is not None:
        return status, True
    from st2.cli import run

    return run(words), False


def main(argv: list[str] | None = None) -> int:
    """Run one st2 command (``argv``, default ``sys.argv[1:]``) and return its exit status."""
    return _route(list(sys.argv[1:] if argv is None else argv))[0]


def _exit_now(status: int) -> None:
    """End the process with ``status`` without finalization when nothing would run at exit
    (see the module docstring); return when it would, for the ordinary exit."""
    import atexit

    callbacks = getattr(atexit, "_ncallbacks", None)
    if callbacks is None or callbacks():
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:
        return
    import os

    os._exit(status)


def console() -> None:
    """The process entry: run ``sys.argv[1:]`` and exit with its status."""
    status, fast = _route(sys.argv[1:])
    if fast and isinstance(status, int):
        _exit_now(status)
    raise SystemExit(status)


if __name__ == "__main__":
    console()
