"""The wrapper every driver whose harness is a server in its own process group runs (Codex
app-server, opencode serve): :class:`NativeServerSession` and the verb's core over it,
:func:`run_native_session`.
"""

from __future__ import annotations

import os
import signal

from st2.delivery.budget import ACCOUNT_VARIABLE
from st2.drivers.lifecycle import (STOP_GRACE_SECONDS, Phase, SessionRecords, exit_words, install_stop_handlers,
                                   resolve_seat, returncode_status, say, stop_with_cover, take_launch, transition)

TICK_SECONDS = 1.0
"""The loop's longest wait: the records' tick and delivery run at least this often."""
AUDIT_SECONDS = 30.0
BUDGET_RECHECK_SECONDS = 2.0  # how often a budget-held seat looks again (its lift writes nothing it watches)


def die_with_parent() -> None:
    """In a native server child (``preexec_fn``): SIGKILL when the wrapper dies, so no orphan
    keeps the harness's session (or answers a predecessor's request after its wrapper is gone)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class NativeServerSession:
    """One native wrapper: the harness is a server in its own process group, driven over its
    protocol. A driver's subclass sets :attr:`harness`, :attr:`label`, :attr:`server_name`,
    :attr:`product` (its name in the version gate's refusal), :attr:`pump_class` and
    :meth:`accepts_session_id`, and provides :meth:`probe_version`, :meth:`start` and the loop's
    hooks (:meth:`register_sources`, :meth:`before_select`, :meth:`on_ready`, :meth:`after_select`,
    :meth:`after_tick`) with the protocol in them.

    - :meth:`run`: the version gate (:mod:`st2.drivers.version_gate`), the signal wake-up pipe,
      :meth:`start` (the relaunch claim through :meth:`begin_session`, then the server),
      :meth:`serve`, then :meth:`loop`.
    - :meth:`loop`: one ``select`` over the wake-up pipe (signals, and whatever the driver's
      threads report), the seat's inbox watch, the keyboard (:attr:`desk`) and the driver's own
      sources; a stop request runs :meth:`_stop`; while the server lives, the records' tick and
      :meth:`deliver`, which the inbox audit (:meth:`audit`) makes look at the inbox at least every
      :data:`AUDIT_SECONDS`.
    - SIGTERM/SIGHUP only enqueue; the stop path signals the server's group, a grace, then the
      ``signal 9`` cover and SIGKILL (:func:`st2.drivers.lifecycle.stop_with_cover`)."""

    harness = ""
    label = "session"
    server_name = "server"
    product = ""
    pump_class = None

    def __init__(self, seat, runtime_id: str, argv: list[str], clock, catalog, operator: str | None = None,
                 state_dir=None, environment: dict | None = None, stdin_fd: int | None = 0,
                 stop_grace: float = STOP_GRACE_SECONDS) -> None:
        import os
        from pathlib import Path

        from st2.delivery.ledger import PROFILES, carry_from_scope, ledger_location
        from st2.delivery.legacy_state import carry_legacy_record
        from st2.drivers.resume_hold import ResumeHold
        from st2.runtime.scope import RuntimeScope

        take_launch(self, seat, runtime_id, argv, clock, environment, stop_grace)
        self.catalog = Path(catalog)
        self.operator = operator
        self.stdin_fd = stdin_fd
        self.lifecycle = Phase.STARTING
        self.records = SessionRecords(seat.directory, seat.agent, self.harness, runtime_id, clock,
                                      prefix=f"st2 {self.label}")
        scope = RuntimeScope(Path(os.path.abspath(catalog)), seat.agent.split(".", 1)[0], state_dir)
        self.staging = scope.staging
        self.scope_directory = scope.directory
        carry_from_scope(scope.directory, runtime_id)  # the one-time migrations, before the pump loads
        _, held = carry_legacy_record(scope.directory, self.catalog, PROFILES[self.harness], seat.agent, runtime_id,
                                      log=self.note)
        self.pump = self.pump_class(seat.directory, *ledger_location(scope.directory, runtime_id), seat.agent,
                                    runtime_id, log=self.note, scope=scope.directory,
                                    account=os.environ.get(ACCOUNT_VARIABLE) or None)
        if held is not None:
            self.pump.quarantine_with(held)
        self.resume = ResumeHold(seat, runtime_id, self.harness, clock, self.note, state_dir,
                                 accepts=self.accepts_session_id)
        self.diagnostics = None     # st2.records.driver_diagnostic.Publisher, once the gate ran
        self.context_writer = None  # st2.records.harness_context.Writer, once claimed
        self.context_withheld = False  # the gate admitted an unmeasured build: the writer publishes nothing
        self.child = None
        self.desk = None            # the keyboard's st2.drivers.human_desk.HumanDesk
        self.answers = None         # the desk's answer channel (st2.drivers.answer_channel), while the loop runs
        self.watch = None
        self.inbox_dirty = True
        self._next_audit = 0.0
        self._hold_said = False
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        os.set_blocking(self._wake_read, False)

    # ------------------------------------------------------------------ the driver's part
    def accepts_session_id(self, session_id: str) -> bool:
        """Whether ``session_id`` has the shape of the harness's own session ids."""
        return False

    def note(self, message: str) -> None:
        """One ``st2:`` line on the PTY's human view."""
        raise NotImplementedError

    def probe_version(self) -> tuple[str | None, str | None]:
        """``(version, None)`` from the harness's ``--version``, or ``(None, why not)``."""
        raise NotImplementedError

    def start(self) -> None:
        """STARTING → RUNNING: :meth:`begin_session`, then spawn the server."""
        raise NotImplementedError

    def serve(self) -> int | None:
        """Bring the spawned server into service; None when it serves, else the exit status."""
        return None

    def deliver(self) -> None:
        """Deliver the next batch when the inbox may have changed and the harness takes input."""

    def register_sources(self, selector) -> None:
        """Register the driver's own sources with the loop's selector."""

    def before_select(self, selector):
        """Each turn of the loop, after the stop check: an exit status to end with, :data:`AGAIN`
        to start the turn over, or None."""
        return None

    def on_ready(self, data, selector) -> None:
        """One of the driver's own sources (registered with ``data``) is ready."""

    def after_select(self) -> None:
        """Each turn, after the ready sources were read."""

    def after_tick(self):
        """Each turn's end: while the server lives, the records' tick and delivery. An exit
        status ends the loop."""
        if self.child.poll() is None:
            self.records.tick()
            self.deliver()
        return None

    def finish(self) -> None:
        """Whatever :meth:`run` leaves behind, however it ends."""

    # ------------------------------------------------------------------ the wrapper
    def gate(self) -> bool:
        """The launch gate (:func:`st2.drivers.version_gate.gate_session`); its publisher is the
        session's diagnostics from here on."""
        from st2.drivers.version_gate import gate_session

        self.diagnostics, ok = gate_session(self)
        return ok

    def begin_session(self) -> str | None:
        """The relaunch claim and the context writer under its token; return the harness session
        the resume core names (None: a fresh one)."""
        from st2.records import harness_context

        self.records.claim()
        self.context_writer = harness_context.Writer(self.seat.directory, self.seat.agent, self.harness,
                                                     self.records.token, self.clock, withheld=self.context_withheld)
        return self.resume.begin(self.records.token)

    def audit(self) -> None:
        """At least every :data:`AUDIT_SECONDS` the inbox counts as changed (a wake-up the watch
        missed is looked at then)."""
        now = self.clock.monotonic()
        if now >= self._next_audit:
            self.inbox_dirty = True
            self._next_audit = now + AUDIT_SECONDS

    def delivery_held(self) -> bool:
        """The seat's delivery hold (a fresh dnd, :mod:`st2.delivery.hold`) is up: the inbox change
        is consumed without asking the pump for a batch, so the mail stays unread and unowned.
        Lifting the hold rewrites ``status``, which the seat watch wakes on; a dnd that ages out
        is seen by the next audit. A budget hold (the seat's account is PAUSEd, hold-on-pause)
        lifts with no write the watch sees (the window resets, the snapshot is rewritten): it is
        looked at again every :data:`BUDGET_RECHECK_SECONDS`. Said once per hold."""
        hold = self.pump.hold(self.clock.wall_ms())
        if hold is None:
            self._hold_said = False
            return False
        self.inbox_dirty = False
        if hold == "budget":
            self._next_audit = min(self._next_audit, self.clock.monotonic() + BUDGET_RECHECK_SECONDS)
        if not self._hold_said:
            self.note("delivery held: the seat's account budget is PAUSEd (hold-on-pause); the mail waits unread"
                      if hold == "budget" else f"delivery held: fresh {hold} declared; the mail waits unread")
            self._hold_said = True
        return True

    def run(self) -> int:
        """Run until the server ends or a stop; return the wrapper's exit status."""
        import signal as signals

        from st2.drivers.version_gate import EXIT_UNSUPPORTED

        if not self.gate():
            return EXIT_UNSUPPORTED
        previous_wakeup = signals.set_wakeup_fd(self._wake_write)
        try:
            if self.lifecycle is Phase.STARTING:
                self.start()
            problem = self.serve()
            if problem is not None:
                return problem
            return self.loop()
        finally:
            if self.answers is not None:
                self.answers.close()
            self.finish()
            signals.set_wakeup_fd(previous_wakeup)

    def loop(self) -> int:
        import selectors

        from st2.seathost.watch_client import open_seat_watch

        self.watch = open_seat_watch(self.seat.directory, self.scope_directory, self.note)
        selector = selectors.DefaultSelector()
        selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        self.register_sources(selector)
        self.register_inputs(selector, self.watch)
        self.loop_started(selector)
        while True:
            if self.requests:
                self.requests.clear()
                return self._stop()
            status = self.before_select(selector)
            if status is AGAIN:
                continue
            if status is not None:
                return status
            for key, _ in selector.select(TICK_SECONDS):
                if key.data == "wake":
                    self._drain_wake()
                elif key.data == "watch":
                    if self.watch.drain():
                        self.inbox_dirty = True
                elif key.data == "keyboard":
                    self.read_keyboard(selector, self.desk.on_keyboard)
                elif key.data == "answers":
                    self.answers.serve_one()
                else:
                    self.on_ready(key.data, selector)
            self.after_select()
            self.watch.keepalive()
            status = self.after_tick()
            if status is not None:
                return status

    def loop_started(self, selector) -> None:
        """The loop's sources are registered; it is about to turn."""

    def _drain_wake(self) -> None:
        import os

        try:
            while os.read(self._wake_read, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def _enqueue(self, number: int, frame) -> None:  # signal handlers only record
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        install_stop_handlers(self._enqueue)

    def _step(self, event: str) -> None:
        self.lifecycle = transition(self.lifecycle, event)

    def register_inputs(self, selector, watch) -> None:
        """Register the seat's inbox watch (``"watch"``), the keyboard (``"keyboard"``, when
        ``stdin_fd`` is open) and the desk's answer channel (``"answers"``) with the loop's selector."""
        import selectors

        from st2.drivers.answer_channel import AnswerChannel

        if watch.active:
            selector.register(watch.fileno(), selectors.EVENT_READ, "watch")
        if self.desk is not None:
            channel = AnswerChannel(self.scope_directory, self.runtime_id, self.desk, lambda: self.records.token)
            problem = channel.open()
            if problem is None:
                self.answers = channel
                selector.register(channel.fileno(), selectors.EVENT_READ, "answers")
            else:
                self.note(problem)
        if self.stdin_fd is not None:
            try:
                selector.register(self.stdin_fd, selectors.EVENT_READ, "keyboard")
            except (ValueError, OSError):
                self.stdin_fd = None

    def read_keyboard(self, selector, on_keyboard) -> None:
        """Hand what was typed to ``on_keyboard``; at end of input stop reading the keyboard."""
        import os

        data = os.read(self.stdin_fd, 4096)
        if data:
            on_keyboard(data)
        else:
            selector.unregister(self.stdin_fd)
            self.stdin_fd = None

    def _terminate_group(self) -> None:
        import os

        try:
            os.killpg(self.child.pid, signal.SIGTERM)
        except OSError:
            pass

    def _end(self, returncode: int) -> int:
        self._step("reaped")
        self.records.ended(returncode)
        self.note(f"{self.server_name} ended ({exit_words(returncode)})")
        return returncode_status(returncode)

    def _stop(self) -> int:
        import os

        self._step("stop-requested")

        def kill() -> None:
            os.killpg(self.child.pid, signal.SIGKILL)

        returncode, escalated = stop_with_cover(self.child, self.records, self.clock, self.stop_grace,
                                                self._terminate_group, kill)
        self._step("grace-expired" if escalated else "reaped")
        return returncode_status(returncode)


AGAIN = object()
""":meth:`NativeServerSession.before_select`'s "start the loop's turn over"."""


def run_native_session(session_class, catalog, identity: str, runtime_id: str | None, argv: list[str], clock=None,
                       **options) -> int:
    """A native wrapper verb's core: the exit status (the server's; 2 when the seat does not
    resolve; :data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED` for a refused harness; 127 when
    it cannot be started). ``options`` go to ``session_class``."""
    import sys

    from st2.base.clock import Clock

    prefix = f"st2 {session_class.label}"
    seat = resolve_seat(catalog, identity, prefix)
    if seat is None:
        return 2
    session = session_class(seat, runtime_id or seat.agent, argv, clock or Clock(), catalog,
                            stdin_fd=0 if sys.stdin is not None and not sys.stdin.closed else None, **options)
    session.install_signal_handlers()
    try:
        return session.run()
    except OSError as error:
        say(prefix, f"{error}")
        return 127
