"""``st2 ding`` without click, in the one shape the supervisor launches it, for the stubs the
seat host forks (:mod:`st2.ding.stub`).

A forked child pays for every object it touches: CPython writes each one's reference count, so
each touched object copies its whole page out of the seat host's shared, frozen heap. Running
click's parser over the CLI tree dirtied ~1 MiB of a stub's pages (measured per step with
``/proc/self/smaps_rollup``), a fifth of what the stub costs. :func:`run` recognizes exactly
``ding <runtime-id>`` followed by any of ``--socket S``, ``--poll-interval N``,
``--retry-backoff N``, ``--catalog C``, ``--host H`` (each at most once, ``--name value``, a
plain decimal number where a number is taken, no value starting with ``-``) and
``--trace-progress``, with ``ST2_DING_TRACE_PROGRESS`` unset or ``1``, and a catalog that is a
directory; it then runs :func:`core`, the same call the click command makes. Anything else
returns None before anything runs, and the click CLI handles it exactly as before.

Standard library only at import.
"""

from __future__ import annotations

import os

VALUE_OPTIONS = ("--socket", "--poll-interval", "--retry-backoff", "--catalog", "--host")
NUMBERS = ("--poll-interval", "--retry-backoff")


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
    its seat itself, as it always did."""
    from st2.seathost import fork

    return fork.FORKED and os.environ.get("ST2_DING_SERVICE", "on") != "off"


def _number(text: str) -> float | None:
    head, dot, tail = text.partition(".")
    if not head.isdigit() or (dot and not tail.isdigit()) or not head.isascii() or not tail.isascii():
        return None
    return float(text)


def run(words: list[str]) -> int | None:
    """Run ``words`` (the argv after ``st2``) when it is ``ding`` in the launched shape; None
    otherwise (nothing has run)."""
    if len(words) < 2 or words[0] != "ding" or words[1].startswith("-"):
        return None
    trace = os.environ.get("ST2_DING_TRACE_PROGRESS")
    if trace not in (None, "1"):
        return None
    values: dict[str, str] = {}
    flags: set[str] = set()
    index = 2
    while index < len(words):
        word = words[index]
        if word == "--trace-progress" and word not in flags:
            flags.add(word)
            index += 1
            continue
        if word not in VALUE_OPTIONS or word in values or index + 1 >= len(words):
            return None
        value = words[index + 1]
        if value.startswith("-") or (word in NUMBERS and _number(value) is None):
            return None
        values[word] = value
        index += 2
    from st2.catalog.location import resolve_catalog_root, resolve_host
    from st2.ding.notifier import Settings

    root = resolve_catalog_root(values.get("--catalog") or os.environ.get("CATALOG") or None)
    if not root.is_dir():
        return None
    host = resolve_host(values.get("--host"))
    settings = Settings(poll_interval=_number(values.get("--poll-interval", "1.0")),
                        retry_backoff=_number(values.get("--retry-backoff", "15.0")),
                        trace_progress=trace == "1" or "--trace-progress" in flags)
    from st2.ding.serve import TargetError

    try:
        return core(root, host, words[1], values.get("--socket"), settings)
    except TargetError as error:
        import sys

        sys.stderr.write(f"Error: {error}\n")   # what click.ClickException.show() writes
        sys.stderr.flush()
        return 1

