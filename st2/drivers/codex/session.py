"""``st2 driver codex-session --identity I --runtime-id R [--operator P] -- codex app-server …``:
the Codex wrapper, the command inside a Codex seat's PTY task.

1. Version gate: ``<codex> --version`` must name a :data:`st2.drivers.codex.SUPPORTED_VERSIONS` build; otherwise a
   ``versionGate`` driver-diagnostic (naming the found version; the PTY line names both) and exit
   :data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED` without starting the app-server.
2. The relaunch claim (harness-state claim, harness-context removed), presence, then
   ``codex app-server`` over stdio in its own process group (dies with the wrapper:
   ``PR_SET_PDEATHSIG``), ``initialize`` → ``initialized`` → ``thread/resume`` of the thread the
   resume core names (:class:`~st2.drivers.resume_hold.ResumeHold`: the seat's recorded
   thread after a crash or a reboot, none after ``st2 down`` or with ``resume "never"``), else
   ``thread/start``; the thread id either answer carries is recorded for the next relaunch. A
   refused resume (0.171.0: ``-32600 no rollout found for thread id …``) is the one fallback —
   the ``resume`` diagnostic, the id kept as lost — and a fresh ``thread/start``; a resumed
   thread's replayed ``thread/tokenUsage/updated`` (0.171.0 sends it right after the answer)
   republishes harness-context, which the claim removed. Ambiguous deliveries are settled from
   each bound thread's history (``thread/read``), a predecessor's thread included.
3. One loop over the app-server's stdout, the seat's inbox/status watch, the keyboard and the
   signal pipe: every notification feeds the transcript, the control state (persisted, projected
   onto harness-state), the context producer and the pump's evidence; every server request gets
   its answer (:mod:`.server_requests`); the pump delivers when the thread is idle (turn/start)
   or has exactly one live turn (turn/steer).
4. SIGTERM/SIGHUP: the app-server's process group gets SIGTERM, a grace, then the ``signal 9``
   cover and SIGKILL (:func:`st2.drivers.lifecycle.stop_with_cover`); the terminal ``ended``
   carries the real exit. An app-server that exits on its own ends the session the same way.
"""

from __future__ import annotations

import os
import selectors
import subprocess
from pathlib import Path

from st2.drivers.codex import HARNESS
from st2.drivers.codex import control as control_module
from st2.drivers.codex import server_requests
from st2.drivers.codex.context import ContextProducer
from st2.drivers.codex.diagnostics import credential_rejected, probe_version
from st2.drivers.codex.human import HumanDesk
from st2.drivers.codex.control import ControlState, ControlStore, Event, Phase
from st2.drivers.codex.pump import Pump
from st2.drivers.codex.rpc import Connection, FrameLog, FrameTooLarge, Malformed
from st2.drivers.codex.transcript import Transcript
from st2.drivers.seat import Seat
from st2.drivers.lifecycle import STOP_GRACE_SECONDS, say
from st2.drivers.native_session import NativeServerSession, die_with_parent, run_native_session
from st2.runtime import layout

REJECTION_BACKOFF_SECONDS = 15.0
"""After Codex refuses a turn request (a negative receipt: the retry is authorized), wait this
long before the retry, so a persistently refusing app-server cannot spin the pump."""
FRAME_LOG_ENV = "ST2_CODEX_FRAME_LOG"
"""A path: every frame each way is appended there as ``{"dir": "in"|"out", "msg": …}`` — the
capture ``st2 driver codex replay`` reads (how the lab makes its fixtures)."""


def _say(message: str) -> None:
    say("st2 codex-session", message)


class CodexSession(NativeServerSession):
    harness = HARNESS
    label = "codex-session"
    server_name = "codex app-server"
    product = "codex-cli"
    pump_class = Pump

    def __init__(self, seat: Seat, runtime_id: str, codex_argv: list[str], clock, catalog: Path,
                 operator: str | None = None, state_dir: Path | None = None,
                 environment: dict | None = None, stdin_fd: int | None = 0, stream=None,
                 stop_grace: float = STOP_GRACE_SECONDS, frame_log=None) -> None:
        self.transcript = Transcript(stream)
        super().__init__(seat, runtime_id, codex_argv, clock, catalog, operator, state_dir, environment, stdin_fd,
                         stop_grace)
        self.codex_argv = self.argv
        self.frame_log = frame_log
        self.scope_staging = self.staging
        self.control_path = control_module.store_paths(self.scope_directory, runtime_id)
        self.control = ControlState()
        self._published: ControlState | None = None
        self.context = ContextProducer()
        self.control_store: ControlStore | None = None
        self.connection: Connection | None = None
        self.purposes: dict[int, str] = {}
        self.desk = HumanDesk(self, catalog, seat, operator)
        self.binding_to_resume: str | None = None
        self.resuming = False
        self._retry_at = 0.0
        self._server_closed = False

    def accepts_session_id(self, session_id: str) -> bool:
        """A Codex thread id is a UUID."""
        from st2.drivers.session_ids import is_uuid

        return is_uuid(session_id)

    # --- small helpers ---------------------------------------------------------------------
    def note(self, message: str) -> None:
        self.transcript.say(f"st2: {message}")

    # --- start -----------------------------------------------------------------------------
    def probe_version(self) -> tuple[str | None, str | None]:
        return probe_version(self.codex_argv[0], self.environment)

    def start(self) -> None:
        self.binding_to_resume = self.begin_session()
        self.control_store = ControlStore(self.control_path, self.scope_staging, self.seat.agent, self.runtime_id,
                                          self.records.token)
        stderr_path = layout.codex_app_server_stderr(self.control_path)
        stderr_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            with open(stderr_path, "ab") as stderr:
                self.child = subprocess.Popen(self.codex_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=stderr, env=self.environment, start_new_session=True,
                                              preexec_fn=die_with_parent)
        except OSError as error:
            _say(f"cannot start {self.codex_argv[0]!r}: {error.strerror or error}")
            self._step("spawn-failed")
            self.records.ended(127)
            raise
        self._step("spawned")
        self.connection = Connection(self.child.stdin.fileno(), self.child.stdout.fileno(), log=self.frame_log)
        self.purposes[self.connection.request("initialize", {
            "clientInfo": {"name": "st2", "title": "st2", "version": "0.1"},
            "capabilities": {"experimentalApi": True}})] = "initialize"

    # --- protocol --------------------------------------------------------------------------
    def _publish_state(self) -> None:
        """Project a changed control state onto harness-state and persist it. An unchanged state
        (most frames: output deltas) costs nothing here; the refresh cadence is the heartbeat's."""
        if self.control == self._published:
            return
        self._published = self.control
        projection = control_module.project(self.control)
        writer = self.records.writer
        try:
            if projection is control_module.UNKNOWN:
                writer.lose_sight()
            elif projection is not None:
                writer.observe(projection.state, projection.blocked_on, "unknown", projection.ask, projection.reason)
            self.control_store.save(self.control, self.clock.wall_ms())
        except OSError as error:  # a record write failing never stops the session; the next change retries
            self._published = None
            self.note(f"observed-state write failed: {error}")

    def _control(self, event: Event, value=None, ask: str | None = None) -> None:
        self.control = control_module.transition(self.control, event, value, ask)

    def on_frame(self, frame) -> None:
        if isinstance(frame, dict) and (("id" in frame and "method" not in frame)
                                        or frame.get("method") in ("turn/completed", "thread/status/changed")):
            self.inbox_dirty = True  # a reply or a turn boundary may let the next batch go
        if self.frame_log is not None:
            self.frame_log("in", frame)
        if isinstance(frame, Malformed):
            self.note(f"ignored a malformed app-server line: {frame.text[:80]}")
            return
        method, request_id = frame.get("method"), frame.get("id")
        if (method is not None and not isinstance(method, str)) or (
                request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, (int, str)))):
            self.note("ignored an app-server frame whose method or id is not JSON-RPC")  # nothing to answer it by
            return
        if "method" in frame and "id" in frame:
            self.on_server_request(frame)
        elif "method" in frame:
            self.on_notification(frame)
        elif "id" in frame:
            self.on_reply(frame)
        self._publish_state()

    def on_reply(self, frame: dict) -> None:
        request_id = frame.get("id")
        purpose = self.purposes.pop(request_id, None)
        ok = "error" not in frame
        result = frame.get("result") if isinstance(frame.get("result"), dict) else {}
        if purpose == "initialize":
            if not ok:
                self.note(f"initialize failed: {frame.get('error')}")
                return
            self.connection.notify("initialized")
            self._bind()
        elif purpose in ("thread/start", "thread/resume"):
            thread = result.get("thread") if ok else None
            if not isinstance(thread, dict) or not isinstance(thread.get("id"), str):
                if purpose == "thread/resume":
                    # An answer, not a silence: 0.171.0 says -32600 "no rollout found for thread id
                    # …" for a thread whose rollout is gone. A dead app-server answers nothing and
                    # ends this wrapper instead, so its successor asks again.
                    refused, self.binding_to_resume = self.binding_to_resume, None
                    self.resume_refused(refused, frame.get("error"))
                    self._bind()
                else:
                    self.note(f"thread/start failed: {frame.get('error')}")
                    self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
                return
            self._control(Event.BOUND, thread["id"])
            if isinstance(thread.get("status"), dict):
                self._control(Event.STATUS, thread["status"])
            self.thread_observed(thread["id"], resumed=purpose == "thread/resume")
            if self.pump.unsettled:
                # A predecessor's thread (a fresh start after st2 down, a fallback) is read too:
                # 0.171.0 reads a stored thread it has not loaded.
                for binding in sorted(self.pump.bindings() | {thread["id"]}):
                    self.purposes[self.connection.request("thread/read", {"threadId": binding,
                                                                          "includeTurns": True})] = "thread/read"
        elif purpose == "thread/read":
            thread = result.get("thread") if ok else None
            turns = thread.get("turns") if isinstance(thread, dict) else None
            self.pump.settle(turns if isinstance(turns, list) else None,
                             thread.get("id") if isinstance(thread, dict) else None)
        elif purpose in ("turn/start", "turn/steer"):
            self.pump.on_reply(request_id, ok)
            if ok:
                self.diagnostics.clear("delivery")
            else:
                self.note(f"{purpose} refused: {frame.get('error')}; retrying in {REJECTION_BACKOFF_SECONDS:g} s")
                self.diagnostics.publish("delivery", "deliveryRejected", "promptTransport")
                self._retry_at = self.clock.monotonic() + REJECTION_BACKOFF_SECONDS

    def thread_observed(self, thread_id: str, resumed: bool) -> None:
        """Codex answered ``thread/start`` or ``thread/resume`` with ``thread_id``: the seat's
        thread, recorded for the next relaunch."""
        self.note(f"{'resumed' if resumed else 'started'} thread {thread_id}")
        self.resume.observed(thread_id)

    def resume_refused(self, thread_id: str, error) -> None:
        """Codex refused to resume ``thread_id`` (``error`` is its JSON-RPC error): the one
        fallback (the ``resume`` diagnostic, the id kept as lost); a fresh thread follows."""
        self.note(f"thread/resume of {thread_id} failed ({error})")
        self.resume.refused(thread_id, self.diagnostics)

    def _bind(self) -> None:
        if self.binding_to_resume:
            self.resuming = True
            # excludeTurns: the answer carries the thread without its history (0.171.0 deprecates
            # the full hydration, which grows with the thread); a settlement reads it with thread/read.
            self.purposes[self.connection.request("thread/resume", {"threadId": self.binding_to_resume,
                                                                    "excludeTurns": True})] = "thread/resume"
        else:
            self.resuming = False
            # The bus guide is the thread's developer instructions (Codex's own slot for them), so
            # the seat knows the mail and presence contract before its first turn.
            from st2.bus.guide import guide_text

            self.purposes[self.connection.request("thread/start", {"cwd": os.getcwd(),
                                                                   "developerInstructions": guide_text()})] = "thread/start"

    def on_notification(self, frame: dict) -> None:
        method, params = frame.get("method"), frame.get("params")
        params = params if isinstance(params, dict) else {}
        self.transcript.frame(frame)
        if method == "thread/status/changed":
            self._control(Event.STATUS, params.get("status"))
        elif method == "turn/started":
            turn = params.get("turn") or {}
            self._control(Event.TURN_STARTED, turn.get("id") if isinstance(turn, dict) else None)
        elif method == "turn/completed":
            turn = params.get("turn") if isinstance(params.get("turn"), dict) else {}
            self._control(Event.TURN_COMPLETED, turn.get("id"))
            self._turn_result(turn)
        elif method in ("item/started", "item/completed"):
            item = params.get("item") if isinstance(params.get("item"), dict) else {}
            kind = item.get("type")
            if kind == "contextCompaction":
                self._control(Event.COMPACTION_STARTED if method == "item/started" else Event.COMPACTION_COMPLETED)
            elif kind == "enteredReviewMode":
                self._control(Event.REVIEW_STARTED)
            elif kind == "exitedReviewMode":
                self._control(Event.REVIEW_ENDED)
            elif kind == "userMessage":
                self.pump.on_user_message(item)
        elif method == "serverRequest/resolved":
            self._control(Event.REQUEST_RESOLVED, params.get("requestId"))
            self.desk.pending.pop(str(params.get("requestId")), None)
        reading, edge = self.context.on_frame(frame, self.clock.wall_ms())
        if reading is not None or edge is not None:
            try:
                self.context_writer.publish(reading, edge)
            except (OSError, ValueError) as error:
                self.note(f"harness-context write failed: {error}")

    def _turn_result(self, turn: dict) -> None:
        """providerAuth only from the turn's typed error; cleared only by an ordinary end."""
        error = turn.get("error") if isinstance(turn.get("error"), dict) else None
        if error is not None and credential_rejected(error.get("codexErrorInfo")):
            self.diagnostics.publish("providerAuth", "providerAuthRejected", "turnResult")
        elif error is None and turn.get("status") == "completed":
            self.diagnostics.clear("providerAuth")

    def on_server_request(self, frame: dict) -> None:
        request_id, method, params = frame.get("id"), frame.get("method"), frame.get("params")
        ask = server_requests.HUMAN_ASKS.get(method)
        if ask is not None:
            self.desk.pending[str(request_id)] = (request_id, method, params)
            self._control(Event.REQUEST_OPENED, request_id, ask)
            self.transcript.asked(request_id, method, server_requests.describe(method, params))
            return
        kind, answer = server_requests.immediate_answer(method, params)
        if kind == "result":
            self.connection.respond(request_id, answer)
        else:
            self.connection.respond_error(request_id, *answer)
        self.note(f"answered {method} for st2 (declined)")

    # --- delivery --------------------------------------------------------------------------
    def deliver(self) -> None:
        """Deliver the next batch when the inbox may have changed (a watch wake-up, a turn
        boundary, a transport answer, or the 30 s audit) and the thread accepts input."""
        self.audit()
        now = self.clock.monotonic()
        if not self.inbox_dirty or self.connection is None or self.control.thread_id is None or now < self._retry_at:
            return
        current, _ = control_module.phase(self.control)
        start = control_module.startable(self.control)
        if not (start or current is Phase.ACTIVE) or self.pump.in_flight or self.pump.still_unsettled():
            return
        if self.delivery_held():
            return
        self.inbox_dirty = False
        batch = self.pump.next_batch(self.control.thread_id)
        if batch is None:
            return
        items = [{"type": "text", "text": batch.text, "text_elements": []}]
        try:
            if start:
                request_id = self.connection.request("turn/start", {"threadId": self.control.thread_id,
                                                                    "input": items})
                self.purposes[request_id] = "turn/start"
            else:
                request_id = self.connection.request("turn/steer", {"threadId": self.control.thread_id,
                                                                    "expectedTurnId": self.control.turns[0],
                                                                    "input": items})
                self.purposes[request_id] = "turn/steer"
        except OSError as error:
            self.note(f"the app-server's stdin is gone ({error}); the attempt holds until the restart settles it")
            self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
            return
        self.pump.sent(request_id, batch)
        self.note(f"delivered {len(batch.filenames)} message(s)")

    # --- the loop --------------------------------------------------------------------------
    def register_sources(self, selector) -> None:
        selector.register(self.connection.read_fd, selectors.EVENT_READ, "server")

    def before_select(self, selector):
        returncode = self.child.poll()
        if returncode is not None and self._server_closed:
            return self._end(returncode)
        return None

    def on_ready(self, data, selector) -> None:
        self._read_server(selector)

    def after_tick(self):
        if self.child.poll() is None and not self._server_closed:
            self.records.tick()
            self.deliver()
        elif self._server_closed:
            return self._end(self.child.wait())
        return None

    def finish(self) -> None:
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _read_server(self, selector) -> None:
        try:
            frames = self.connection.read_available()
        except FrameTooLarge as error:
            self.note(f"protocol failure: {error}; stopping the app-server")
            self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
            self._terminate_group()
            frames = None
        if frames is None:
            selector.unregister(self.connection.read_fd)
            self._server_closed = True
            return
        for frame in frames:
            self.on_frame(frame)

def run_session(catalog: Path, identity: str, runtime_id: str | None, codex_argv: list[str],
                operator: str | None = None, clock=None) -> int:
    """The ``codex-session`` verb's core (:func:`st2.drivers.native_session.run_native_session`),
    every frame logged to :data:`FRAME_LOG_ENV`'s path when it is set."""
    capture = os.environ.get(FRAME_LOG_ENV)
    return run_native_session(CodexSession, catalog, identity, runtime_id, codex_argv, clock, operator=operator,
                              frame_log=FrameLog(Path(capture)) if capture else None)
