"""The session wrappers' verbs without click, in the one shape the supervisor launches them.

A seat's wrapper is its PTY task's own interpreter for the seat's whole life, so what it imports
is paid per seat: the click CLI tree costs a live Claude wrapper 1.8 MiB PSS (13.7 against
11.9 MiB, ten of each side by side; benchmarks/fleet_memory.py measures the fleet). :func:`run` recognizes exactly the argv the driver blocks lower to
(``st2 [--catalog C] [--host H] driver <harness>-session --identity I [--runtime-id R]
[--model M] [--operator P] [--view V] -- <harness argv…>``, each option at most once, spelled
``--name value``, only the options that verb takes, no value starting with ``-``, a non-empty
harness argv after ``--``, and a catalog that is a directory) and runs the verb's core with the
same arguments the click command would pass; anything else returns None before anything runs,
and the click CLI handles it exactly as before. The verbs print nothing of their own, so the
output is the core's either way; the exit status is the core's, an OS error escaping it is the
click CLI's one line and exit 74.

The verbs and the options each takes come from the driver table (:func:`st2.drivers.session_verbs`:
``<harness>-session`` with the common options and the driver package's ``SESSION_OPTIONS``).

Standard library and the driver table (its light packages) only at import.
"""

from __future__ import annotations

import os

from st2 import drivers

COMMON = drivers.COMMON_SESSION_OPTIONS
OPTIONS = drivers.session_verbs()
VIEWS = ("attach", "transcript")


def parse(words: list[str], options: tuple[str, ...]) -> tuple[dict[str, str], list[str]] | None:
    """``(option values, harness argv)`` of ``<options…> -- <argv…>``, or None outside the shape."""
    values: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            argv = words[index + 1:]
            return (values, argv) if argv else None
        if word not in options or word in values or index + 1 >= len(words):
            return None
        value = words[index + 1]
        if value.startswith("-"):
            return None
        values[word] = value
        index += 2
    return None


def run(words: list[str], verb: int, root_values: dict[str, str], hand_off: bool = True) -> int | None:
    """Run ``words`` (the argv after ``st2``, its verb ``driver`` at ``verb``) when it is a
    session verb in the launched shape; None otherwise. A native wrapper in a PTY is first
    handed to the scope's seat host (:mod:`st2.drivers.session_handoff`: this process then
    becomes the pane's anchor and never returns) unless ``hand_off`` is False (the forked
    wrapper itself)."""
    name = words[verb + 1] if verb + 1 < len(words) else None
    if name not in OPTIONS:
        return None
    parsed = parse(words[verb + 2:], OPTIONS[name])
    if parsed is None:
        return None
    values, argv = parsed
    if "--identity" not in values or values.get("--view", "attach") not in VIEWS:
        return None
    from st2.catalog.location import resolve_catalog_root

    root = resolve_catalog_root(values.get("--catalog") or root_values.get("--catalog")
                                or os.environ.get("CATALOG") or None)
    if not root.is_dir():
        return None
    if hand_off:
        from st2.drivers.session_handoff import hand_off as hand_to_seat_host

        hand_to_seat_host(name, root, values, words)
    try:
        return _core(name, root, values, argv)
    except OSError as error:
        import sys

        from st2.fs.errors import EXIT_OS_ERROR, os_error_line

        sys.stderr.write(os_error_line(words, error) + "\n")
        return EXIT_OS_ERROR


def _core(name: str, root, values: dict[str, str], argv: list[str]) -> int:
    harness = drivers.session_harness(name)
    extra = {option: value for option, value in values.items() if option not in COMMON}
    return drivers.run_session(harness, root, values["--identity"], values.get("--runtime-id"), argv, extra)
