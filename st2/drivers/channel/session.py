"""The channel wrapper, the command inside a pi or omp seat's PTY task (docs/drivers.md
§pi; docs/drivers.md §Wrapper terminal write; docs/records.md §Status).

The lifecycle machine, the relaunch claim, the five-minute presence heartbeat, the observed-state
re-stamp, the terminal ``ended`` and the stop path's escalation cover are the harness-neutral
:mod:`st2.drivers.lifecycle` and :mod:`st2.drivers.child_session`, exactly as the Claude wrapper uses them. What the
channel adds:

- The wrapper injects st2's extension into the harness argv (``pi -e <hooks>/pi-channel.ts …``,
  ``<hooks>`` being ``$ST_HOOKS`` or the installed package's hooks) and opens the channel: a pipe
  whose write end the child inherits as ``$ST2_CHANNEL_FD`` and finds non-blocking, so a full pipe
  drops a frame instead of stalling the harness. Nothing of the channel lives in the catalog; the
  pipe holds at most its kernel buffer.
- While the harness lives, the loop's wait is a ``select`` on the read end: frames go through
  :class:`st2.drivers.channel.frames.Consumer` into ``harness-context`` (this session's incarnation)
  and ``harness-state`` (this session's claimed writer). Malformed frames are dropped with one
  line each in a bounded diagnostics file under host-local state
  (``$XDG_STATE_HOME/st2/channel/<runtime-id>.log``), never on the PTY.
- When the harness is reaped, the frames still in the pipe are applied before ``ended`` (on the
  stop path the cover is written first; state frames after it are refused by the writer).
- A turn frame's typed result publishes or clears the seat's ``providerAuth`` driver diagnostic
  through the one publisher this run keeps (:attr:`ChannelSession.diagnostics`): the launch gate's
  for omp, which adopted a predecessor's failure; a publisher adopting it the same way for pi,
  which has no gate. A lost resume is published through it too.
- Resuming (docs/records.md §Resumable session): the extension's session frames name the conversation's file, recorded
  (:mod:`st2.runtime.resume`) once it exists; a relaunch passes it back (pi ``--session <file>``,
  omp ``--resume=<file>``), after checking the file is still there — both harnesses open a
  missing path as a new empty session, which would be a silent fresh start under the old name.

:class:`ChannelSession` is harness-neutral over the extension wire; pi's wrapper
(:mod:`st2.drivers.pi.session`) and omp's (:mod:`st2.drivers.omp.session`) are it with their
names, extension and resume mechanism (and omp's launch gate).
"""

from __future__ import annotations

import fcntl
import os
import select
from pathlib import Path

from st2.drivers.channel.frames import Consumer, DiagnosticLog
from st2.drivers.child_session import ChildSession, run_child_session
from st2.records import harness_context

CHANNEL_FD_ENV = "ST2_CHANNEL_FD"
READ_CHUNK = 65536


def hooks_directory(environment: dict[str, str]) -> Path:
    """Where the harness-side assets are: ``$ST_HOOKS`` (the supervisor sets it on every task),
    else the installed package's."""
    explicit = environment.get("ST_HOOKS")
    if explicit:
        return Path(explicit)
    from st2.drivers.hook_assets import hooks_directory as packaged

    return Path(packaged())


def inject_extension(argv: list[str], extension: Path) -> list[str]:
    """The harness argv with ``-e <extension>`` right after the executable."""
    return [argv[0], "-e", str(extension), *argv[1:]]


def diagnostics_path(runtime_id: str) -> Path:
    from st2.catalog.layout import runtime_state_dir
    from st2.runtime import layout

    return layout.channel_log(runtime_state_dir(), runtime_id)


class ChannelSession(ChildSession):
    """One run of a harness under the wrapper (the loop is :class:`ChildSession`'s), its st2
    extension talking back over an inherited pipe. A driver sets :attr:`harness`, :attr:`label`
    and :attr:`extension` (the file under the hooks directory) and how its harness resumes."""

    extension = ""

    def __init__(self, seat, runtime_id: str, argv: list[str], clock, environment: dict[str, str] | None = None,
                 **options) -> None:
        super().__init__(seat, runtime_id, argv, clock, environment, **options)
        self.argv = inject_extension(self.argv, hooks_directory(self.environment) / self.extension)
        self.read_end: int | None = None
        self.write_end: int | None = None
        self.closed = False
        self.consumer: Consumer | None = None

    resumes = True

    def resume_argv(self, session_id: str) -> list[str]:
        """The harness argv that resumes the session file ``session_id``."""
        raise NotImplementedError

    def sessions_directories(self) -> tuple[str, ...]:
        """The harness's own session directories for this wrapper's working directory (the
        harness's: it inherits it)."""
        raise NotImplementedError

    def accepts_session_id(self, session_id: str) -> bool:
        """A session file directly inside one of :meth:`sessions_directories`, every symlink
        resolved (:func:`st2.drivers.session_ids.is_session_file_in`): never any other file."""
        from st2.drivers.session_ids import is_session_file_in

        return any(is_session_file_in(session_id, directory) for directory in self.sessions_directories())

    def resume_unavailable(self, session_id: str) -> bool:
        """pi (and omp) open a missing session path as a new, empty session under the same name,
        so a file the store no longer holds is refused here, before the launch."""
        return not os.path.isfile(session_id)

    def observe_session(self, session_id: str) -> bool:
        """Record the named session file once it exists inside the harness's session directory (a
        new session's file is written with its first reply; a name with nothing behind it is not a
        conversation to resume)."""
        if not os.path.isfile(session_id) or not self.accepts_session_id(session_id):
            return False
        super().observe_session(session_id)
        return True

    def gate(self) -> bool:
        """The launch gate, keeping its publisher as this run's :attr:`diagnostics` (for a driver
        without a gate, one that adopts a predecessor's failure as the gate's does)."""
        from st2.drivers.version_gate import adopt_predecessor_failure, gate_session

        publisher, ok = gate_session(self)
        if publisher is None:
            from st2.records import driver_diagnostic

            publisher = driver_diagnostic.Publisher(self.seat.directory, self.harness, self.clock)
            adopt_predecessor_failure(publisher, self.seat.directory, self.harness, self.clock)
        self.diagnostics = publisher
        return ok

    def prepare_spawn(self) -> None:
        self.read_end, self.write_end = os.pipe()
        for descriptor in (self.read_end, self.write_end):
            fcntl.fcntl(descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.closed = False

    def child_environment(self) -> dict[str, str]:
        return dict(self.environment) | {CHANNEL_FD_ENV: str(self.write_end)}

    def spawn_options(self) -> dict:
        return {"pass_fds": (self.write_end,)}

    def spawned(self) -> None:
        # Only the harness holds the write end now: when it is gone, the pipe reads end-of-file.
        self._close_write_end()
        context = harness_context.Writer(self.seat.directory, self.seat.agent, self.harness, self.records.token,
                                          self.clock, withheld=self.context_withheld)
        self.consumer = Consumer(context, self.writer, DiagnosticLog(diagnostics_path(self.runtime_id), self.clock),
                                 session=self.observe_session, diagnostics=self.diagnostics)

    def spawn_failed(self) -> None:
        self._close_channel()

    def _close_write_end(self) -> None:
        if self.write_end is not None:
            os.close(self.write_end)
            self.write_end = None

    def _close_channel(self) -> None:
        self._close_write_end()
        if self.read_end is not None:
            os.close(self.read_end)
            self.read_end = None
        self.closed = True

    def wait(self, seconds: float) -> None:
        """Wait up to ``seconds`` for frames, and apply what arrived."""
        if self.closed or self.read_end is None:
            self.clock.sleep(seconds)
            return
        try:
            ready = select.select([self.read_end], [], [], seconds)[0]
        except InterruptedError:
            return
        if ready:
            self._read()

    def _read(self) -> None:
        while not self.closed:
            try:
                chunk = os.read(self.read_end, READ_CHUNK)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not chunk:
                self.closed = True
                self.consumer.finish()
                return
            self.consumer.feed(chunk)

    def drain(self) -> None:
        """Apply whatever the harness left in the pipe, then close it."""
        try:
            if self.consumer is not None and self.read_end is not None:
                self._read()
                self.consumer.finish()
        finally:
            self._close_channel()


def run_session(catalog: Path, identity: str, runtime_id: str | None, argv: list[str], clock,
                session_class) -> int:
    """The ``<harness>-session`` verb's core (:func:`st2.drivers.child_session.run_child_session`)."""
    return run_child_session(session_class, catalog, identity, runtime_id, argv, clock)
