"""The wrapper loop every PTY harness wrapper runs (Claude, pi, omp): the harness is the
wrapper's child (:class:`ChildSession`), and the ``<harness>-session`` verb's core over it
(:func:`run_child_session`).

:class:`ChildSession`'s ``anchors`` (Claude only): while the harness runs, the verb's process is
the slim anchor (:mod:`st2.drivers.session_anchor`, :mod:`st2.drivers.anchor`) and comes back
through :meth:`ChildSession.adopt` and :meth:`~st2.drivers.lifecycle.SessionRecords.adopt` (the
same token and sequence, no new claim).
"""

from __future__ import annotations

import signal

from st2.drivers.lifecycle import (STOP_GRACE_SECONDS, Phase, SessionRecords, install_stop_handlers, take_launch,
                                   returncode_status, say, stop_with_cover, transition)

POLL_SECONDS = 0.25


class ChildSession:
    """The wrapper loop every PTY harness wrapper runs (Claude, pi, omp): the harness is this
    process's child, in this PTY and this process group (it must stay the terminal's foreground
    group to read the keyboard).

    - STARTING → RUNNING: :meth:`SessionRecords.claim`, then spawn ``argv`` with
      :meth:`child_environment` and :meth:`spawn_options`; :meth:`spawned` once it runs.
    - RUNNING: poll the child; :meth:`SessionRecords.tick` while it lives; :meth:`wait` between
      polls (a plain sleep, or a channel reader's ``select``); the anchor (``anchors``) is
      entered only once :meth:`startup_step` says the driver's startup work is over.
    - RUNNING → STOPPING on SIGTERM/SIGHUP (handlers only enqueue; the loop acts): signal the
      group we lead (or the child alone) and :func:`stop_with_cover`.
    - → ENDED on the reap: :meth:`drain` (a channel's last frames), then the terminal ``ended``.

    Subclasses set :attr:`harness` and :attr:`label` and override the hooks they need."""

    harness = ""
    label = "session"
    resumes = False
    """Whether this driver resumes its harness's session on a relaunch (:meth:`resume_argv`)."""
    anchors = False
    """Whether the verb execs into the slim anchor while the harness runs
    (:mod:`st2.drivers.session_anchor`); only for a driver whose loop has nothing to read."""
    guide_option = "--append-system-prompt"
    """The harness's own option that appends text to its system prompt (Claude 2.1.197, pi 0.73.1
    and omp 18.2.3 spell it alike): the bus guide (:mod:`st2.bus.guide`) goes there, after the
    declared argv (so an executable such as ``env`` or ``sh -c`` in front keeps its own options),
    on every launch and resume. None: the harness offers no such slot."""

    def __init__(self, seat, runtime_id: str, argv: list[str], clock, environment: dict[str, str] | None = None,
                 stop_grace: float = STOP_GRACE_SECONDS) -> None:
        take_launch(self, seat, runtime_id, argv, clock, environment, stop_grace)
        if self.guide_option and self.argv:
            from st2.bus.guide import guide_text

            self.argv = [*self.argv, self.guide_option, guide_text()]
        self.phase = Phase.STARTING
        self.child = None
        self.resume = None   # st2.drivers.resume_hold.ResumeHold, when this driver resumes
        self.anchor = None   # st2.drivers.session_anchor.Anchor, set by the verb when it anchors
        self.records = SessionRecords(seat.directory, seat.agent, self.harness, runtime_id, clock,
                                      prefix=f"st2 {self.label}")

    # ------------------------------------------------------------------ the subclass's hooks
    def child_environment(self) -> dict[str, str]:
        return dict(self.environment)

    def spawn_options(self) -> dict:
        """Extra :class:`subprocess.Popen` keyword arguments (e.g. ``pass_fds``)."""
        return {}

    def spawned(self) -> None:
        """The child runs (e.g. close its end of a channel)."""

    def spawn_failed(self) -> None:
        """The child could not be started (e.g. close a channel)."""

    def wait(self, seconds: float) -> None:
        """Wait up to ``seconds`` between polls of the child."""
        self.clock.sleep(seconds)

    def drain(self) -> None:
        """Take what the child left behind, before the terminal record of a reap."""

    def startup_step(self) -> bool:
        """One bounded step of the driver's startup work while the harness runs (Claude's startup
        pane watch); True while that work goes on: the wrapper then stays resident, polling, and
        enters the anchor only after it."""
        return False

    # ------------------------------------------------------------------ the loop
    def say(self, message: str) -> None:
        say(f"st2 {self.label}", message)

    def _enqueue(self, number: int, frame) -> None:  # signal handlers only record; the loop acts
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        install_stop_handlers(self._enqueue)

    def _step(self, event: str) -> None:
        self.phase = transition(self.phase, event)

    @property
    def writer(self):
        return self.records.writer

    # ------------------------------------------------------------------ resuming
    def resume_argv(self, session_id: str) -> list[str]:
        """The harness argv that resumes ``session_id`` with the harness's own mechanism (only
        asked when :attr:`resumes`)."""
        raise NotImplementedError

    def resume_unavailable(self, session_id: str) -> bool:
        """Whether the harness's store provably no longer holds ``session_id`` (checked before the
        launch, for a harness that would otherwise silently start fresh under the same id)."""
        return False

    def accepts_session_id(self, session_id: str) -> bool:
        """Whether ``session_id`` can be an id of this harness's own session store
        (:mod:`st2.drivers.session_ids`): checked before it is recorded and again before a
        relaunch passes a recorded one to the harness. Every resuming driver overrides it."""
        return False

    @property
    def binding(self):
        """This incarnation's :class:`st2.runtime.resume.Binding`, or None."""
        return self.resume.binding if self.resume is not None else None

    def observe_session(self, session_id: str) -> None:
        """The driver saw the harness's session identity (a channel frame): publish it."""
        if self.resume is not None:
            self.resume.observed(session_id)

    def _resume_hold(self):
        from st2.drivers.resume_hold import ResumeHold

        return ResumeHold(self.seat, self.runtime_id, self.harness, self.clock, self.say,
                          accepts=self.accepts_session_id)

    def _begin_resume(self) -> list[str]:
        """Decide this incarnation's start (:class:`~st2.drivers.resume_hold.ResumeHold`); the argv
        to spawn."""
        if not self.resumes:
            return self.argv
        self.resume = self._resume_hold()
        resume_id = self.resume.begin(self.records.token)
        if resume_id is None:
            return self.argv
        if self.resume_unavailable(resume_id):
            self.resume.refused(resume_id, self.diagnostics)
            return self.argv
        self.say(f"resuming harness session {resume_id}")
        return self.resume_argv(resume_id)

    def _refused_at_reap(self) -> bool:
        """At a reap: whether the resume this incarnation attempted was never observed (the
        harness ended refusing or not finding it) — then fall back, once."""
        if self.resume is None or not self.resume.still_resuming():
            return False
        self.resume.refused(self.resume.binding.resume_id, self.diagnostics)
        return True

    product = None
    """The harness's name in the version gate's refusal (default: the harness word)."""
    catalog = None
    """The catalog the seat resolved in: its ``catalog.kdl`` may ``admit-unmeasured`` a build."""
    context_withheld = False
    """Set by the gate for a build launched through ``admit-unmeasured``: no context is published."""
    diagnostics = None
    """The driver-diagnostic publisher a driver keeps for its whole run (a
    :class:`~st2.records.driver_diagnostic.Publisher`), or None: a lost resume is then published
    through a publisher of its own."""

    def probe_version(self) -> tuple[str | None, str | None]:
        """``(version, None)`` from the harness's ``--version``, or ``(None, why not)``; asked
        only when the driver's package declares a ``VERSION_GATE``."""
        raise NotImplementedError

    def gate(self) -> bool:
        """The launch gate (:func:`st2.drivers.version_gate.gate_session`) when the driver's package
        declares one: False after the refusal is published and said."""
        from st2.drivers.version_gate import gate_session

        return gate_session(self)[1]

    def start(self) -> None:
        self.records.claim()
        self.spawn(self._begin_resume())

    def adopt(self, pid: int, token: str, seq: int, start: str | None, resume_id: str | None,
              returncode: int | None) -> None:
        """Take over the running session a predecessor image of this process started (the slim
        anchor's way back): its claim, its resume binding as it stood, its harness child."""
        from st2.drivers.session_anchor import Adopted

        self.records.adopt(token, seq)
        if start is not None:
            self.resume = self._resume_hold()
            self.resume.adopt(token, start, resume_id)
        self.child = Adopted(pid, returncode)
        self._step("spawned")

    def prepare_spawn(self) -> None:
        """Just before each spawn (e.g. open a channel)."""

    def spawn(self, argv: list[str]) -> None:
        import subprocess

        self.prepare_spawn()
        try:
            self.child = subprocess.Popen(argv, env=self.child_environment(), **self.spawn_options())
        except OSError as error:
            self.say(f"cannot start {argv[0]!r}: {error.strerror or error}")
            self.spawn_failed()
            self._step("spawn-failed")
            self.records.ended(127)
            raise
        self.spawned()
        if self.phase is Phase.STARTING:
            self._step("spawned")

    def run(self) -> int:
        """Run until the harness is reaped; return the wrapper's exit status (the version gate's
        :data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED` when it refuses the harness)."""
        if self.phase is Phase.STARTING:
            if not self.gate():
                from st2.drivers.version_gate import EXIT_UNSUPPORTED

                return EXIT_UNSUPPORTED
            self.start()
        while True:
            returncode = self.child.poll()
            if returncode is not None:
                self._drain_safely()
                if self._refused_at_reap():  # the one fresh fallback, in this same incarnation
                    self.spawn(self.argv)
                    continue
                self._step("reaped")
                self.records.ended(returncode)
                return returncode_status(returncode)
            if self.requests:
                self.requests.clear()
                return self._stop()
            self.records.tick()
            if self.startup_step():
                self.wait(POLL_SECONDS)
                continue
            if self.anchor is not None:
                self.anchor.enter(self)   # returns only when the loop must act now, or cannot anchor
                continue
            self.wait(POLL_SECONDS)

    def _drain_safely(self) -> None:
        try:
            self.drain()
        except Exception as error:  # the terminal record must still be written
            self.say(f"draining the harness's output failed: {error}")

    def _stop(self) -> int:
        import os

        self._step("stop-requested")

        def terminate() -> None:
            if os.getpgrp() == os.getpid():
                # We lead the PTY's group: the harness and its tools hear it; ours is only enqueued.
                os.killpg(os.getpgrp(), signal.SIGTERM)
            else:  # never signal a group we do not lead
                self.child.terminate()

        returncode, escalated = stop_with_cover(self.child, self.records, self.clock, self.stop_grace,
                                                terminate, self.child.kill)
        self._step("grace-expired" if escalated else "reaped")
        self._drain_safely()
        return returncode_status(returncode)


def run_child_session(session_class, catalog, identity: str, runtime_id: str | None, argv: list[str],
                      clock=None) -> int:
    """A ``<harness>-session`` verb's core. Return the exit status (the harness's, or 2 when the
    seat does not resolve, 127 when the harness cannot be started)."""
    from st2.base.clock import Clock
    from st2.drivers import seat as seat_module

    try:
        seat = seat_module.resolve(catalog, identity)
    except seat_module.SeatNotFound as error:
        say(f"st2 {session_class.label}", str(error))
        return 2
    continuation, anchored = None, session_class.anchors
    if anchored:
        from st2.drivers import session_anchor

        try:
            continuation = session_anchor.take_continuation()  # before the child environment is copied
        except session_anchor.MalformedContinuation as error:
            say(f"st2 {session_class.label}", f"{error}; starting as a new session and staying resident")
            anchored = False
    session = session_class(seat, runtime_id or seat.agent, argv, clock or Clock())
    session.catalog = catalog
    session.install_signal_handlers()
    if session_class.anchors:
        session_anchor.resume_signals()
    if anchored:
        refresh = session_anchor.refresh_seconds()
        if refresh is not None:
            session.records.refresh_seconds = refresh
        session.anchor = session_anchor.Anchor.usable(session.say, session_anchor.keeper_client(catalog, session))
        if continuation is not None:
            session_anchor.adopt(session, continuation)
    try:
        return session.run()
    except OSError:
        return 127
