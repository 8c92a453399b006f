"""The core of ``st2 ding`` on the click-free route (:mod:`st2.front.table`), in the one shape
the supervisor launches it, for the stubs the seat host forks (:mod:`st2.ding.stub`).

A forked child pays for every object it touches: CPython writes each one's reference count, so
each touched object copies its whole page out of the seat host's shared, frozen heap, and
click's parser over the CLI tree touches many (what it costs a stub: docs/memory.md §The DING
service). The front door's table recognizes
exactly ``ding <runtime-id>`` followed by any of ``--socket S``, ``--poll-interval N``,
``--retry-backoff N``, ``--catalog C``, ``--host H`` (each at most once, ``--name value``, a
plain decimal number where a number is taken, no value starting with ``-``) and
``--trace-progress``; :func:`run` then runs :func:`core`, the same call the click command makes,
when ``ST2_DING_TRACE_PROGRESS`` is unset or ``1`` and the catalog is a directory. Anything else
is left to the click CLI, which runs the same :func:`core` for a well-formed command line and
prints its own usage or error for any other.

Standard library only at import.
"""

from __future__ import annotations

import os


def core(root, host: str, target: str, socket: str | None, settings) -> int:
    """The verb: a stub when forked by the seat host (:func:`as_stub`), else the notifier
    itself. Raises :class:`st2.ding.serve.TargetError` for a target that is not a seat."""
    if as_stub():
        from st2.ding.stub import run_stub

        return run_stub(root, host, target, socket=socket, settings=settings)
    from st2.ding.serve import serve

    return serve(root, host, target, socket=socket, settings=settings)


def as_stub() -> bool:
    """Forked by the seat host (and not ``ST2_DING_SERVICE=off``): this task is a stub whose
    loop the scope's DING service runs (:mod:`st2.ding.stub`). A spawned ``st2 ding`` serves
    its seat itself."""
    from st2.seathost import fork

    return fork.FORKED and os.environ.get("ST2_DING_SERVICE", "on") != "off"


def run(call) -> int | None:
    """Run ``st2 ding`` for a :class:`st2.front.table.Call` in the launched shape; None, with
    nothing run, when ``ST2_DING_TRACE_PROGRESS`` is neither unset nor ``1`` or the catalog is
    not a directory."""
    trace = os.environ.get("ST2_DING_TRACE_PROGRESS")
    if trace not in (None, "1"):
        return None
    values = call.parsed.values
    from st2.catalog.location import resolve_catalog_root, resolve_host
    from st2.ding.notifier import Settings

    root = resolve_catalog_root(values.get("--catalog") or os.environ.get("CATALOG") or None)
    if not root.is_dir():
        return None
    host = resolve_host(values.get("--host"))
    settings = Settings(poll_interval=float(values.get("--poll-interval", "1.0")),
                        retry_backoff=float(values.get("--retry-backoff", "15.0")),
                        trace_progress=trace == "1" or "--trace-progress" in call.parsed.flags)
    from st2.ding.serve import TargetError

    try:
        return core(root, host, call.parsed.positionals[0], values.get("--socket"), settings)
    except TargetError as error:
        import sys

        sys.stderr.write(f"Error: {error}\n")   # what click.ClickException.show() writes
        sys.stderr.flush()
        return 1
