"""The cores of ``st2 up``, ``st2 down``, ``st2 tasks``, ``st2 validate`` and ``st2 doctor`` on the
click-free route (:mod:`st2.front.table`), for words already read in the shapes their click
commands accept.

Scripts and tests run these verbs by the hundred (every ``st2 up --once``, every monitoring poll
of ``st2 tasks --json``), and importing click and its CLI tree cost each about a quarter of its
CPU time. Each core calls the function its click command calls (``report`` of
:mod:`st2.supervisor.inventory`, :mod:`st2.authoring.validation` and :mod:`st2.doctor.run`,
:func:`st2.supervisor.teardown.report_down`, :func:`st2.supervisor.loop.up`) with the same
arguments and :func:`st2.front.verbs.echo`, so stdout, stderr and the exit status are the same
bytes whichever route ran (tests/front/test_fast_fleet.py compares them). The module sits at the
entry layer, beside :mod:`st2.cli`: it reaches the supervisor, authoring and Doctor, which the
front door's own package (a primitive) may not import. What the click CLI
would refuse before running anything (``st2 down`` without a catalog directory, an ``--interval``
that is no positive duration, ``--agent`` with ``--task``) returns None before anything has run,
and the click CLI says it. An ``OSError`` or an interrupt is reported as :func:`st2.cli.run`
reports it.

Standard library only at import; each verb's modules are imported when it runs.
"""

from __future__ import annotations

import os

from st2.front.verbs import echo


def location(call, *, must_exist: bool = False):
    """The :class:`st2.catalog.location.CatalogLocation` the click verb's ``catalog_options``
    would pass (the verb's ``--catalog``/``--host``, else the root's, else ``$CATALOG`` and the
    defaults), or None when ``must_exist`` and its root is not a directory."""
    from st2.catalog.location import CatalogLocation, resolve_catalog_root, resolve_host

    values, root_values = call.parsed.values, call.root
    catalog = values.get("--catalog") or root_values.get("--catalog") or os.environ.get("CATALOG") or None
    found = CatalogLocation(root=resolve_catalog_root(catalog),
                            host=resolve_host(values.get("--host") or root_values.get("--host")))
    return None if must_exist and not found.root.is_dir() else found


def reported(words: list[str], body) -> int:
    """``body()``'s exit status; an ``OSError`` or an interrupt escaping it ends the verb as the
    click CLI's :func:`st2.cli.run` ends it (one line naming what the machine refused, or
    ``Aborted!``)."""
    try:
        return body()
    except OSError as error:
        from st2.fs.errors import EXIT_OS_ERROR, os_error_line

        echo(os_error_line(words, error), err=True)
        return EXIT_OS_ERROR
    except (EOFError, KeyboardInterrupt):
        echo("", err=True)
        echo("Aborted!", err=True)
        return 1


def tasks(call) -> int:
    from st2.supervisor.inventory import report

    return reported(call.words, lambda: report(location(call), "--json" in call.parsed.flags, echo))


def validate(call) -> int:
    from st2.authoring.validation import report

    flags = call.parsed.flags

    def run() -> int:
        where = location(call)
        return report(where.root, where.host, "--strict" in flags, "--json" in flags, echo)

    return reported(call.words, run)


def doctor(call) -> int:
    from st2.base.clock import command_clock
    from st2.doctor.run import report

    def run() -> int:
        where = location(call)
        return report(where.root, where.host, command_clock().wall_ms(), echo)

    return reported(call.words, run)


def down(call) -> int | None:
    where = location(call, must_exist=True)
    if where is None:
        return None
    from st2.supervisor.teardown import report_down

    return reported(call.words, lambda: report_down(where, list(call.parsed.positionals), echo))


def up(call) -> int | None:
    from st2.supervisor.interval import DEFAULT_INTERVAL, IntervalRefused, interval_seconds

    values, flags = call.parsed.values, call.parsed.flags
    agent, task = values.get("--agent"), values.get("--task")
    try:
        interval = interval_seconds(values.get("--interval", DEFAULT_INTERVAL))
    except IntervalRefused:
        return None
    if agent and task:
        return None
    from st2.supervisor.loop import up as supervise

    return reported(call.words, lambda: supervise(location(call), once="--once" in flags, interval=interval,
                                                  agent=agent, task=task,
                                                  materialize_only="--materialize-only" in flags,
                                                  resume="--resume" in flags))
