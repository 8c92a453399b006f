"""Operator hooks over fleet events: the ``notify`` blocks of ``catalog.kdl``
(:class:`st2.declarations.catalog.NotifyHook`).

For each journaled event whose kind a hook names, the hook's argv runs with the event's JSON
line (:meth:`st2.events.event.FleetEvent.line`, newline-terminated) on stdin and
``ST2_EVENT_KIND``, ``ST2_EVENT_SEAT``, ``ST2_EVENT_FROM``, ``ST2_EVENT_TO``, ``ST2_EVENT_SEQ`` in
its environment, as its own process group (:class:`st2.events.hook_process.HookProcess`), which
st2 kills when the hook ends, past its ``timeout``, or when the supervisor stops or dies — so no
background child a hook leaves outlives it. A hook naming ``apprise`` URLs runs
:mod:`st2.events.apprise_send` the same way (its URLs, which may hold tokens, in its environment,
never on its command line): same timeout, same process group, same log lines. Never inline in the
engine or the reconcile pass: :meth:`HookRunner.submit` only enqueues (a bounded queue) and one
worker thread runs the hooks (:class:`st2.events.dispatch.Dispatcher`).

At most one run per hook, seat and kind per ``rate-limit``. Runs held back — suppressed by the
rate limit, or dropped because :data:`QUEUE_BOUND` runs already wait — are counted, and each
hook, seat and kind's count is one summary line when its window ends (the rate limit's, or at
least :data:`SUMMARY_SECONDS` for drops), so a flapping seat adds a bounded number of lines,
whatever its rate. Every failure — cannot start, non-zero exit (with the last of its stderr,
control characters escaped), killed on timeout — is one line. Each line goes to
``<runtime scope>/events/notify.log`` (owner-only, rotated to ``notify.log.1`` past
:data:`LOG_BYTES`: :func:`st2.fs.log.append_line`) and to the supervisor's output; nothing a
hook does can block or fail the supervisor.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Callable

from st2.catalog.location import CatalogLocation
from st2.catalog.names import shown
from st2.declarations.catalog import NotifyHook, load_catalog_declaration
from st2.events import journal
from st2.events.dispatch import QUEUE_BOUND, SUMMARY_SECONDS, Dispatcher, Tally  # noqa: F401 (the log's words)
from st2.events.event import FleetEvent
from st2.events.hook_process import HookProcess
from st2.fs.log import append_line

STDERR_SHOWN = 200  # characters of a failed hook's stderr tail that its log line keeps
LOG_BYTES = 1024 * 1024  # notify.log's bound before it becomes notify.log.1
APPRISE_MODULE = "st2.events.apprise_send"


def stamp() -> str:
    """Now as a log line's RFC 3339 UTC prefix (``2026-12-01T11:47:34.123Z``)."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _value(value) -> str:
    return "" if value is None else str(value)


def stderr_words(tail: bytes, total: int) -> str:
    """A failed hook's stderr as one safe line: the last :data:`STDERR_SHOWN` characters of its
    kept tail, lines joined by `` | ``, every control character escaped
    (:func:`st2.catalog.names.shown`), with how much was not shown."""
    text = " | ".join(shown(line) for line in tail.decode("utf-8", "replace").strip().splitlines())
    if len(text) > STDERR_SHOWN or total > len(tail):
        text = f"…{text[-STDERR_SHOWN:]} [{total} bytes of stderr; the last {min(len(text), STDERR_SHOWN)} characters shown]"
    return text


def apprise_command(hook: NotifyHook, item: FleetEvent) -> tuple[list[str], dict[str, str]]:
    """The argv and the environment additions that send ``item`` to ``hook``'s apprise URLs:
    this interpreter running :mod:`st2.events.apprise_send` with this process's import path (a
    wrapped install's path is not the bare interpreter's)."""
    from st2.events import apprise_send

    seat = item.seat or "fleet"
    environment = {apprise_send.URLS: "\n".join(hook.apprise), apprise_send.TITLE: f"st2: {item.kind} {seat}",
                   apprise_send.BODY: item.human(), apprise_send.TIMEOUT: f"{hook.timeout_seconds:g}",
                   "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    return [sys.executable, "-m", APPRISE_MODULE], environment


def hook_label(hook: NotifyHook) -> str:
    """How a log line names what a hook runs: its program, or ``apprise`` and the URLs' schemes
    (never a URL: it may hold a token)."""
    if hook.apprise:
        schemes = dict.fromkeys(url.split(":", 1)[0].lower() for url in hook.apprise)
        return f"apprise {', '.join(shown(scheme) for scheme in schemes)}"
    return shown(hook.argv[0])


class HookRunner(Dispatcher):
    thread_name = "st2-notify"

    def __init__(self, location: CatalogLocation, scope, *, say: Callable[[str], None] = lambda line: None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        super().__init__(monotonic=monotonic)
        self.location = location
        self.log_path = str(journal.directory_of(scope) / journal.NOTIFY_LOG)
        self.say = say
        self.hooks: tuple[NotifyHook, ...] = ()
        self._process: HookProcess | None = None
        self._process_lock = threading.Lock()
        self._refused = False
        self.reload()

    def reload(self) -> None:
        """Re-read the hooks from ``catalog.kdl``; a malformed file keeps none and says so once
        (``st2 validate`` names every problem with its line and column)."""
        declaration, diagnostics = load_catalog_declaration(self.location.root)
        errors = [diagnostic for diagnostic in diagnostics if diagnostic.severity == "error"]
        if errors:
            if not self._refused:
                self.report(f"catalog.kdl does not validate ({str(errors[0]).splitlines()[0]}); no notify hook runs "
                            "until it does")
            self._refused = True
            self.hooks = ()
            return
        self._refused = False
        if declaration.notify != self.hooks:
            self.forget()
        self.hooks = declaration.notify

    def report(self, line: str) -> None:
        append_line(self.log_path, f"{stamp()} {line}\n", rotate_at=LOG_BYTES)
        self.say(f"notify: {line}")

    def submit(self, events: list[FleetEvent]) -> None:
        """Enqueue the runs ``events`` call for; never blocks."""
        self.flush()
        for item in events:
            for index, hook in enumerate(self.hooks):
                if item.kind in hook.kinds:
                    self.offer(index, hook, item)

    def run(self, hook: NotifyHook, item: FleetEvent) -> int | None:
        """Run one hook for one event; its exit status, None when it was killed or gave none.
        Its process group is killed as soon as it ends, whatever it left running."""
        label = f"{hook.where} ({hook_label(hook)}) for {item.kind} {item.seat or 'fleet'} #{item.seq}"
        environment = dict(os.environ, ST2_EVENT_KIND=item.kind, ST2_EVENT_SEAT=_value(item.seat),
                           ST2_EVENT_FROM=_value(item.from_value), ST2_EVENT_TO=_value(item.to_value),
                           ST2_EVENT_SEQ=_value(item.seq))
        argv = hook.argv
        if hook.apprise:
            argv, added = apprise_command(hook, item)
            environment.update(added)
        process = HookProcess(argv, environment)
        try:
            process.start((item.line() + "\n").encode("utf-8"))
        except OSError as error:
            self.report(f"{label}: cannot run: {error}")
            return None
        with self._process_lock:
            self._process = process
        try:
            status = process.wait(hook.timeout_seconds)
        finally:
            with self._process_lock:
                self._process = None
            process.finish()
        if status is None:
            self.report(f"{label}: timed out after {hook.timeout_seconds:g}s; killed its process group")
        elif status != 0:
            words = stderr_words(process.stderr_tail, process.stderr_bytes)
            self.report(f"{label}: failed (exit {status})" + (f": {words}" if words else ""))
        return status

    def interrupt(self) -> None:
        """A hook still running is killed with its group: the supervisor's stop never waits out
        a hook's timeout."""
        with self._process_lock:
            process = self._process
        if process is not None:
            process.kill()
