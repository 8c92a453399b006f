"""The core of the session wrappers' verbs on the click-free route (:mod:`st2.front.table`),
in the one shape the supervisor launches them.

A seat's wrapper is its PTY task's own interpreter for the seat's whole life, so what it imports
is paid per seat, and this route never imports the click CLI tree (what that saves per seat:
docs/memory.md §Per-seat memory and inotify at fleet scale). The front
door's table recognizes exactly the argv the driver blocks lower to (``st2 [--catalog C] [--host
H] driver <harness>-session --identity I [--runtime-id R] [--model M] [--operator P] [--view V]
-- <harness argv…>``, each option at most once, spelled ``--name value``, only the options that
verb takes, no value starting with ``-``, a non-empty harness argv after ``--``) and :func:`run`
runs the verb's core with the same arguments the click command would pass when the catalog is a
directory; anything else is left to the click CLI, which handles it as it handles any argv. The verbs
print nothing of their own, so the output is the core's either way; the exit status is the
core's, an OS error escaping it is the click CLI's one line and exit 74.

The verbs and the options each takes come from the driver table (:func:`st2.drivers.session_verbs`:
``<harness>-session`` with the common options and the driver package's ``SESSION_OPTIONS``).

Standard library and the driver table (its light packages) only at import.
"""

from __future__ import annotations

import os

from st2 import drivers

COMMON = drivers.COMMON_SESSION_OPTIONS


def routes() -> dict:
    """The front door's rows (:class:`st2.front.table.Route`) of every driver's wrapper verb
    (:func:`st2.drivers.session_verbs`): the launched shape, with the options the driver's package
    declares and their choices (:data:`st2.drivers.SESSION_OPTION_CHOICES`), run by :func:`run`."""
    from st2.front.table import CONSOLE, FORKED_SESSION, Route, session

    return {("driver", verb): Route(session(*options[len(COMMON):],
                                            choices={option: drivers.SESSION_OPTION_CHOICES[option] for option in options
                                                     if option in drivers.SESSION_OPTION_CHOICES} or None),
                                    "st2.drivers.session_route:run", (CONSOLE, FORKED_SESSION))
            for verb, options in drivers.session_verbs().items()}


def run(call) -> int | None:
    """Run the session verb ``call.verb`` (a :class:`st2.front.table.Call` in the launched
    shape); None, with nothing run, when its catalog is not a directory. A native wrapper in a
    PTY is first handed to the scope's seat host (:mod:`st2.drivers.session_handoff`: this
    process then becomes the pane's anchor and never returns) unless the seat host forked this
    process (``call.forked``: the wrapper itself)."""
    name, words, values = call.verb[1], call.words, call.parsed.values
    from st2.catalog.location import resolve_catalog_root

    root = resolve_catalog_root(values.get("--catalog") or call.root.get("--catalog")
                                or os.environ.get("CATALOG") or None)
    if not root.is_dir():
        return None
    if not call.forked:
        from st2.drivers.session_handoff import hand_off as hand_to_seat_host

        hand_to_seat_host(name, root, values, words)
    try:
        return _core(name, root, values, call.parsed.tail)
    except OSError as error:
        import sys

        from st2.fs.errors import EXIT_OS_ERROR, os_error_line

        sys.stderr.write(os_error_line(words, error) + "\n")
        return EXIT_OS_ERROR


def _core(name: str, root, values: dict[str, str], argv: list[str]) -> int:
    harness = drivers.session_harness(name)
    extra = {option: value for option, value in values.items() if option not in COMMON}
    return drivers.run_session(harness, root, values["--identity"], values.get("--runtime-id"), argv, extra)
