"""What every harness session wrapper does the same way (seed 004 §D; seed 003 "Observed harness
state discipline", "Agent-declared presence"), shared by the Claude, Codex and opencode wrappers.

- The lifecycle machine (:class:`Phase`, :func:`transition`): STARTING → RUNNING → (STOPPING) →
  ENDED, each edge named.
- :class:`SessionRecords`: the relaunch claim (the written harness-state claim under a fresh
  token, which also removes ``harness-context``), the five-minute presence refresh and the
  observed-state heartbeat, both only while the provider lives, and the terminal ``ended``
  record carrying the real exit.
- :class:`ChildSession`'s ``anchors`` (Claude only): while the harness runs, the verb's process
  is the slim anchor (:mod:`st2.drivers.session_anchor`, :mod:`st2.drivers.anchor`) and comes
  back through :meth:`ChildSession.adopt` and :meth:`SessionRecords.adopt` (the same token and
  sequence, no new claim).
- :func:`stop_with_cover`: the stop path — signal the provider, give it a grace, and past the
  grace write ``ended``/``signal 9`` *before* the SIGKILL (nothing can be written after a kill of
  a whole group), then rewrite from the reap if the real status differs.
"""

from __future__ import annotations

import signal

from st2.drivers.lifecycle import (HEARTBEAT_CHECK_SECONDS, STOP_GRACE_SECONDS, EDGES, Phase, SessionRecords,  # noqa: F401
                                   replay_writers, returncode_status, say, stop_with_cover,
                                   transition)

POLL_SECONDS = 0.25
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class ChildSession:
    """The wrapper loop every PTY harness wrapper runs (Claude, pi, omp): the harness is this
    process's child, in this PTY and this process group (it must stay the terminal's foreground
    group to read the keyboard).

    - STARTING → RUNNING: :meth:`SessionRecords.claim`, then spawn ``argv`` with
      :meth:`child_environment` and :meth:`spawn_options`; :meth:`spawned` once it runs.
    - RUNNING: poll the child; :meth:`SessionRecords.tick` while it lives; :meth:`wait` between
      polls (a plain sleep, or a channel reader's ``select``).
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

    def __init__(self, seat, runtime_id: str, argv: list[str], clock, environment: dict[str, str] | None = None,
                 stop_grace: float = STOP_GRACE_SECONDS) -> None:
        import os
        from collections import deque

        if not argv:
            raise ValueError(f"no {self.harness} argv after --")
        self.seat = seat
        self.runtime_id = runtime_id
        self.argv = list(argv)
        self.clock = clock
        self.environment = dict(os.environ if environment is None else environment)
        self.stop_grace = stop_grace
        self.phase = Phase.STARTING
        self.requests: deque[int] = deque()
        self.child = None
        self.binding = None  # st2.runtime.resume.Binding, when this driver resumes
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

    # ------------------------------------------------------------------ the loop
    def say(self, message: str) -> None:
        say(f"st2 {self.label}", message)

    def _enqueue(self, number: int, frame) -> None:  # signal handlers only record; the loop acts
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, self._enqueue)
        # ^C reaches the whole foreground group; it is the harness's key, never the wrapper's
        # end. A Python handler (not SIG_IGN, which exec would pass on) keeps us running.
        signal.signal(signal.SIGINT, lambda number, frame: None)

    def _step(self, event: str) -> None:
        self.phase = transition(self.phase, event)

    @property
    def writer(self):
        return self.records.writer

    # ------------------------------------------------------------------ resuming (issue 24)
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

    def observe_session(self, session_id: str) -> None:
        """The driver saw the harness's session identity (a channel frame): publish it."""
        if self.binding is not None:
            try:
                self.binding.observed(session_id)
            except Exception as error:  # the record is best effort; the session goes on
                self.say(f"recording the harness session failed: {error}")

    def _begin_resume(self) -> list[str]:
        """Decide this incarnation's start (:func:`st2.runtime.resume.begin`); the argv to spawn."""
        if not self.resumes:
            return self.argv
        from st2.runtime import resume
        from st2.runtime.resumable_session import SessionStore

        try:
            self.binding = resume.begin(SessionStore.of_seat(self.seat.directory), self.runtime_id, self.seat.agent,
                                        self.harness, self.records.token, resume_policy(self.seat.directory),
                                        self.clock, self.seat.directory, self.accepts_session_id)
        except Exception as error:  # no record store: start fresh, and say so
            self.say(f"cannot read or write the resumable-session record ({error}); starting a fresh session")
            return self.argv
        say_discarded(self.say, self.harness, self.binding)
        if self.binding.resume_id is None:
            return self.argv
        if self.resume_unavailable(self.binding.resume_id):
            self._fall_back()
            return self.argv
        self.say(f"resuming harness session {self.binding.resume_id}")
        return self.resume_argv(self.binding.resume_id)

    def _fall_back(self) -> None:
        lost = self.binding.resume_id
        self.binding.refused()
        self.say(f"the harness could not resume session {lost}; starting a fresh session (st2 never retries it)")

    def _refused_at_reap(self) -> bool:
        """At a reap: whether the resume this incarnation attempted was never observed (the
        harness ended refusing or not finding it) — then fall back, once."""
        from st2.runtime.resume import Start

        if self.binding is None or self.binding.refresh() is not Start.RESUMING:
            return False
        self._fall_back()
        return True

    product = None
    """The harness's name in the version gate's refusal (default: the harness word)."""

    def probe_version(self) -> tuple[str | None, str | None]:
        """``(version, None)`` from the harness's ``--version``, or ``(None, why not)``; asked
        only when the driver's package declares a ``VERSION_GATE``."""
        raise NotImplementedError

    def gate(self) -> bool:
        """The launch gate (:mod:`st2.drivers.version_gate`) when the driver's package declares
        one: False after the refusal is published and said."""
        from st2.drivers import package

        driver = package(self.harness)
        if getattr(driver, "VERSION_GATE", None) is None:
            return True
        from st2.drivers.version_gate import gate_package

        version, problem = self.probe_version()
        _, ok = gate_package(driver, self.seat.directory, self.clock, version, problem, self.product or self.harness,
                             f"st2 {self.label}")
        return ok

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
            from st2.runtime import resume
            from st2.runtime.resumable_session import SessionRecord, SessionStore

            record = SessionRecord(self.runtime_id, self.seat.agent, self.harness, token, start,
                                   resumed_from=resume_id)
            self.binding = resume.Binding(SessionStore.of_seat(self.seat.directory), record, self.seat.directory,
                                          self.clock, self.accepts_session_id)
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


def resume_policy(seat_directory) -> str:
    """The seat's declared ``resume`` knob (``last`` unless declared; ``last`` too when the
    declaration cannot be read — the supervisor launched it, so it validated)."""
    from st2.declarations.agent import load_agent
    from st2.declarations.model import DEFAULT_RESUME

    try:
        declaration, _ = load_agent(seat_directory / "agent.kdl")
    except Exception:
        return DEFAULT_RESUME
    return declaration.resume if declaration is not None else DEFAULT_RESUME


def run_child_session(session_class, catalog, identity: str, runtime_id: str | None, argv: list[str],
                      clock=None) -> int:
    """A ``<harness>-session`` verb's core. Return the exit status (the harness's, or 2 when the
    seat does not resolve, 127 when the harness cannot be started)."""
    from st2.clock import Clock
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


def die_with_parent() -> None:
    """In a native server child (``preexec_fn``): SIGKILL when the wrapper dies, so no orphan
    keeps the harness's session (or answers a predecessor's request after its wrapper is gone)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def exit_words(returncode: int) -> str:
    return f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"


class GroupServerSession:
    """The lifecycle half every native wrapper whose harness is a server in its own process group
    shares (Codex app-server, opencode serve): signal handlers that only enqueue, the named
    lifecycle edges, and the stop path over the server's group. Subclasses provide ``child``,
    ``records``, ``clock``, ``stop_grace``, ``requests``, ``lifecycle``, :meth:`note` and
    :attr:`server_name`."""

    server_name = "server"

    def _enqueue(self, number: int, frame) -> None:  # signal handlers only record
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, self._enqueue)
        signal.signal(signal.SIGINT, lambda number, frame: None)

    def _step(self, event: str) -> None:
        self.lifecycle = transition(self.lifecycle, event)

    def register_inputs(self, selector, watch) -> None:
        """Register the seat's inbox watch (``"watch"``) and the keyboard (``"keyboard"``, when
        ``stdin_fd`` is open) with the loop's selector."""
        import selectors

        if watch.active:
            selector.register(watch.fileno(), selectors.EVENT_READ, "watch")
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


def keyboard_lines(pending: bytes, data: bytes, limit: int = 64 * 1024) -> tuple[list[str], bytes]:
    """The complete lines typed so far (decoded, stripped) and what is left pending; a pending
    partial line beyond ``limit`` bytes is dropped."""
    pending += data
    lines = []
    while b"\n" in pending:
        raw, pending = pending.split(b"\n", 1)
        lines.append(raw.decode("utf-8", "replace").strip())
    return lines, (b"" if len(pending) > limit else pending)


def say_discarded(say, harness: str, binding) -> None:
    """Say (the id escaped) that the recorded session id was not resumed for its shape."""
    if binding.discarded is not None:
        from st2.catalog.names import shown

        say(f"the recorded session id {shown(binding.discarded)} is not a {harness} session id; "
            "starting a fresh session")


def resolve_seat(catalog, identity: str, prefix: str):
    """The seat a wrapper verb serves, or None after saying why on the PTY (the verb exits 2)."""
    from st2.drivers import seat as seat_module

    try:
        return seat_module.resolve(catalog, identity)
    except seat_module.SeatNotFound as error:
        say(prefix, str(error))
        return None


class ResumeHold:
    """A native wrapper's side of the resume core (:mod:`st2.runtime.resume`, issue 24) for the
    Codex and opencode wrappers: :meth:`begin` right after the relaunch claim returns the harness
    session to resume (or None: fresh), :meth:`observed` records the session the harness reports,
    :meth:`refused` is the one fallback. The policy is the seat's declared ``resume`` knob
    (:func:`resume_policy`). A store that cannot be written is said on the PTY and the
    session starts fresh (never a silent resume of a guessed session); ``start`` is then None."""

    def __init__(self, catalog, seat, runtime_id: str, harness: str, clock, say, state_dir=None,
                 accepts=None) -> None:
        import os
        from pathlib import Path

        from st2.runtime.resumable_session import SessionStore

        self.store = SessionStore.of(Path(os.path.abspath(catalog)), seat.agent.split(".", 1)[0], state_dir)
        self.seat = seat
        self.runtime_id = runtime_id
        self.harness = harness
        self.clock = clock
        self.say = say
        self.accepts = accepts  # the harness's id shape (st2.drivers.session_ids)
        self.binding = None

    @property
    def start(self) -> str | None:
        """``fresh`` / ``resuming`` / ``resumed`` / ``fallback``, or None without a record."""
        return self.binding.start.value if self.binding is not None else None

    def begin(self, incarnation: str) -> str | None:
        from st2.runtime import resume

        try:
            self.binding = resume.begin(self.store, self.runtime_id, self.seat.agent, self.harness, incarnation,
                                        resume_policy(self.seat.directory), self.clock, self.seat.directory,
                                        self.accepts)
        except OSError as error:
            self.say(f"the resumable-session record cannot be written ({error}); starting a fresh session")
            return None
        say_discarded(self.say, self.harness, self.binding)
        return self.binding.resume_id

    def observed(self, session_id: str) -> None:
        if self.binding is None:
            return
        try:
            self.binding.observed(session_id)
        except OSError as error:
            self.say(f"recording session {session_id} failed ({error}); a relaunch may start fresh")

    def refused(self, session_id: str, diagnostics) -> None:
        """The harness refused to resume ``session_id``: record the loss once (the ``resume``
        diagnostic) and say so; the caller starts a fresh session. A session that vanishes under
        an incarnation that did not resume it is only said."""
        from st2.runtime.resume import Start

        self.say(f"the harness refused to resume session {session_id}; it is kept as lost and a fresh "
                 "session starts (once)")
        if self.binding is None or self.binding.start is not Start.RESUMING:
            return
        try:
            self.binding.refused(diagnostics)
        except OSError as error:
            self.say(f"recording the lost session failed ({error})")
