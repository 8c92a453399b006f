"""``st2 driver opencode-session --identity I --runtime-id R [--model P/M] [--operator P] -- opencode serve``:
the opencode wrapper, the command inside an opencode seat's PTY task.

1. Version gate: ``<opencode> --version`` must name a :data:`st2.drivers.opencode.SUPPORTED_VERSIONS` build, else a
   ``versionGate`` driver-diagnostic and exit :data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED` without serving.
2. The relaunch claim (harness-state claim, harness-context removed) and presence, then
   ``opencode serve --hostname 127.0.0.1 --port 0`` in its own process group, dying with the wrapper
   (``PR_SET_PDEATHSIG``), with a fresh ``OPENCODE_SERVER_PASSWORD``. No request goes out before
   the server prints its "listening" line (1.18.33 leaves a request in that gap unanswered); the
   port it names and the password are kept in host-local state (:mod:`.local`) only.
3. apiGate: ``GET /doc`` must offer every route the wrapper calls (:data:`.api.REQUIRED_PATHS`);
   else an ``apiGate`` diagnostic and exit :data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED`. The first answer may take the
   instance's whole bootstrap (5–40 s on two cores), so it is retried to a deadline.
4. The window from ``GET /config/providers``; the session the resume core names
   (:class:`~st2.drivers.resume_hold.ResumeHold`: the seat's recorded session after a crash or a
   reboot, none after ``st2 down`` or with ``resume "never"``) when ``GET /session/{id}`` finds it,
   else a new one (``POST /session``), recorded for the next relaunch. A definite "not here"
   (1.18.33: ``404 NotFoundError``) is the one fallback — the ``resume`` diagnostic, the id kept as
   lost; no answer never replaces the conversation (asked again; delivery holds meanwhile). A
   resumed session republishes harness-context from its history (:meth:`republish_context`). Then
   ``GET /event`` on its own thread,
   reconnecting with backoff. Every (re)connect seeds the observed state from ``GET
   /session/status``, ``GET /permission`` and ``GET /question`` before any delta is trusted.
5. One loop (:class:`st2.drivers.native_session.NativeServerSession`'s) over the event queue
   (:mod:`.event_stream`), the inbox watch, the keyboard and the signal pipe: events feed the
   transcript, the context producer (harness-context), the observed state (harness-state) and
   providerAuth (the assistant message's typed error only); the pump (:mod:`.pump`) delivers when
   the bound session is idle and reads each delivery back (:mod:`.read_back`). The pane runs
   opencode's own TUI meanwhile (:mod:`.attached_tui`) unless ``--view transcript``.
6. SIGTERM/SIGHUP: the server's group gets SIGTERM, a grace, then the ``signal 9`` cover and
   SIGKILL; the terminal ``ended`` carries the real exit. A server that exits ends the session.

Stage diagnostics (docs/records.md §Driver diagnostic): versionGate, apiGate, sse (connect failed / disconnected; cleared
by the next connect), seed (a snapshot that failed; cleared by the next complete seed),
providerAuth (cleared by an assistant message that finishes without error), delivery (the prompt
call; cleared by the next accepted call), readBack (cleared by the next successful read-back).
"""

from __future__ import annotations

import os
import queue
import re
import secrets
import selectors
import subprocess
from pathlib import Path

from st2.drivers.opencode import HARNESS
from st2.drivers.opencode import attach_anchor, local
from st2.drivers.opencode.api import ApiError, Client, Malformed, api_problem, probe_version
from st2.drivers.opencode.attached_tui import AttachedTui
from st2.drivers.opencode.event_stream import BACKOFF_SECONDS, CALL_SECONDS, EventStream
from st2.drivers.opencode.context import ContextProducer, credential_rejected
from st2.drivers.opencode.expansion import split_model
from st2.drivers.opencode.observed import Observed
from st2.drivers.opencode.pump import Pump
from st2.drivers.opencode.read_back import REBIND_SECONDS, ReadBackDelivery
from st2.drivers.opencode.view import View
from st2.drivers.lifecycle import STOP_GRACE_SECONDS, exit_words, say
from st2.drivers.native_session import AGAIN, NativeServerSession, die_with_parent, run_native_session
from st2.drivers.seat import Seat
from st2.drivers.session_ids import is_opencode_session_id
from st2.drivers.version_gate import EXIT_UNSUPPORTED
from st2.runtime import layout

LISTEN_TIMEOUT_SECONDS = 180.0
API_TIMEOUT_SECONDS = 180.0
MAX_RESTARTS = 5
_LISTENING = re.compile(rb"server listening on http://([0-9.]+):([0-9]+)")
"""opencode's session ids (1.18.33: ``ses_`` and 26 base-62 characters)."""
FOUND, MISSING, UNREACHABLE = "found", "missing", "unreachable"
BIND_RETRY_SECONDS = 2.0


def _say(message: str) -> None:
    say("st2 opencode-session", message)


class OpencodeSession(AttachedTui, ReadBackDelivery, NativeServerSession):
    harness = HARNESS
    label = "opencode-session"
    server_name = "opencode serve"
    product = "opencode"
    pump_class = Pump

    def __init__(self, seat: Seat, runtime_id: str, argv: list[str], clock, catalog: Path, model: str | None = None,
                 operator: str | None = None, state_dir: Path | None = None, environment: dict | None = None,
                 stdin_fd: int | None = 0, stream=None, stop_grace: float = STOP_GRACE_SECONDS,
                 view: str = "attach") -> None:
        self.view = View(self, catalog, seat, operator, stream)
        super().__init__(seat, runtime_id, argv, clock, catalog, operator, state_dir, environment, stdin_fd,
                         stop_grace)
        self.desk = self.view
        self.model = split_model(model) if model else None
        self.state_path = local.state_path(self.scope_directory, runtime_id)
        self.view_mode = view
        self.attached: subprocess.Popen | attach_anchor.AnchoredTui | None = None
        self.context = ContextProducer()
        self.observed = Observed()
        self._published = None
        self.client: Client | None = None
        self.session_id: str | None = None
        self.bound = False
        self._next_bind = 0.0
        self.password = secrets.token_hex(16)
        self.events: queue.Queue = queue.Queue()
        self.stream: EventStream | None = None
        self.connected = False
        self.restarts = 0
        self.awaiting_read_back = False
        self._turn_seen = False
        self._next_read_back = 0.0
        self._sent_at = 0.0

    def accepts_session_id(self, session_id: str) -> bool:
        return is_opencode_session_id(session_id)

    # --- small helpers ---------------------------------------------------------------------
    def note(self, message: str) -> None:
        self.view.say(f"st2: {message}")

    def _save_local(self) -> None:
        try:
            local.write(self.state_path, self.staging, self.seat.agent, self.runtime_id,
                        local.LaunchState(self.client.port if self.client else None, self.password, self.session_id,
                                          self.child.pid if self.child else None))
        except OSError as error:
            self.note(f"host-local state write failed: {error}")

    # --- start -----------------------------------------------------------------------------
    def probe_version(self) -> tuple[str | None, str | None]:
        return probe_version(self.argv[0], self.environment)

    def start(self) -> None:
        self.session_id = self.begin_session()
        self.server_log = layout.opencode_serve_log(self.state_path)
        self.server_log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            self.spawn()
        except OSError as error:
            _say(f"cannot start {self.argv[0]!r}: {error.strerror or error}")
            self._step("spawn-failed")
            self.records.ended(127)
            raise
        self._step("spawned")

    def spawn(self) -> None:
        """Start ``opencode serve`` on a port it picks, with this launch's password. 1.18.33 reads
        ``--port 0`` as "4096 when free, else any" (its ``Server.listen``), so one seat per host holds
        opencode's default port; the port it printed is the only one used."""
        environment = {**self.environment, "OPENCODE_SERVER_PASSWORD": self.password}
        argv = [*self.argv, "--hostname", "127.0.0.1", "--port", "0"]
        from st2.fs.log import open_log

        log = open_log(self.server_log, truncate=True)  # owner-only: the server logs what it is sent
        try:
            self.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                          env=environment, start_new_session=True, preexec_fn=die_with_parent)
        finally:
            os.close(log)

    def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` unless a stop is requested or the server exits; False then."""
        if self.requests or self.child.poll() is not None:
            return False
        selectors_ = selectors.DefaultSelector()
        selectors_.register(self._wake_read, selectors.EVENT_READ)
        selectors_.select(seconds)
        selectors_.close()
        self._drain_wake()
        return not self.requests and self.child.poll() is None

    def wait_listening(self) -> bool:
        deadline = self.clock.monotonic() + LISTEN_TIMEOUT_SECONDS
        while self.clock.monotonic() < deadline:
            try:
                match = _LISTENING.search(self.server_log.read_bytes()[:1 << 20])
            except OSError:
                match = None
            if match:
                self.client = Client(match.group(1).decode(), int(match.group(2)), self.password, CALL_SECONDS)
                self._save_local()
                self.note(f"opencode serve listening on 127.0.0.1:{self.client.port}")
                return True
            if not self._wait(0.1):
                return False
        self.note(f"opencode serve printed no 'listening' line within {LISTEN_TIMEOUT_SECONDS:.0f} s")
        return False

    def api_gate(self) -> bool:
        deadline = self.clock.monotonic() + API_TIMEOUT_SECONDS
        while True:
            try:
                document = self.client.get("/doc", timeout=max(1.0, min(60.0, deadline - self.clock.monotonic())))
                break
            except ApiError as error:
                if self.clock.monotonic() >= deadline or not self._wait(0.5):
                    self.diagnostics.publish("apiGate", "apiUnavailable", "openApiDocument")
                    self.note(f"the OpenAPI document is unavailable: {error}")
                    return False
        problem = api_problem(document)
        if problem:
            self.diagnostics.publish("apiGate", "incompatibleApi", "openApiDocument")
            _say(f"{problem}; refusing to drive it")
            return False
        self.diagnostics.clear("apiGate")
        return True

    def pull_window(self) -> None:
        try:
            self.context.on_providers(self.client.get("/config/providers"))
        except ApiError as error:
            self.note(f"GET /config/providers failed ({error}); the window is withheld until it answers")

    def look_up(self, session_id: str) -> str:
        """Whether the server still holds ``session_id``: :data:`FOUND`, :data:`MISSING` (a
        definite answer: 1.18.33 says ``404 NotFoundError`` for an id it does not hold; an id that
        is not ``ses_…`` is never asked, 1.18.33 answers it with a 500) or :data:`UNREACHABLE` (no
        definite answer: a timeout, a refused connection, a 5xx — evidence of nothing)."""
        if not is_opencode_session_id(session_id):
            return MISSING
        try:
            found = self.client.get(f"/session/{session_id}")
        except ApiError as error:
            return MISSING if error.status == 404 else UNREACHABLE
        return FOUND if isinstance(found, dict) and found.get("id") == session_id else MISSING

    def bind(self, deadline: float | None = None) -> bool:
        """Bind the seat to a session: the one to resume when the server holds it, else a new one.
        A resume the server refuses (the session is not there) falls back to a new session once
        (:meth:`resume_refused`); one it cannot answer is asked again until ``deadline`` and then
        left pending (False: delivery holds, the loop asks again) — a transient failure never
        replaces the conversation."""
        if self.session_id:
            while True:
                verdict = self.look_up(self.session_id)
                if verdict == FOUND:
                    self.bound = True
                    self.session_observed(resumed=True)
                    self.republish_context()
                    return True
                if verdict == MISSING:
                    self.resume_refused(self.session_id)
                    self.session_id = None
                    break
                if deadline is None or self.clock.monotonic() >= deadline or not self._wait(BIND_RETRY_SECONDS):
                    self.note(f"session {self.session_id} did not answer; the resume is retried, delivery holds")
                    return False
        try:
            created = self.client.post("/session", {})
        except ApiError as error:
            self.note(f"POST /session failed: {error}")
            self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
            return False
        if not isinstance(created, dict) or not isinstance(created.get("id"), str):
            self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
            return False
        self.session_id = created["id"]
        self.bound = True
        self.session_observed(resumed=False)
        return True

    def republish_context(self) -> None:
        """A resumed session still holds its context, and the claim removed the predecessor's
        record: publish the reading its history ends on — the session's totals, then its newest
        assistant message through the producer's own rules — so a resumed seat that waits for
        work does not read null. A newest message that is a compaction summary (or unfinished)
        publishes nothing: the emptied window is not known until the next answer."""
        try:
            info = self.client.get(f"/session/{self.session_id}")
            messages = self.client.get(f"/session/{self.session_id}/message")
        except ApiError as error:
            self.note(f"the resumed session's context could not be read ({error}); it follows the next answer")
            return
        assistant = [message.get("info") for message in messages if isinstance(message, dict)
                     and isinstance(message.get("info"), dict) and message["info"].get("role") == "assistant"] \
            if isinstance(messages, list) else []
        if not assistant or not (assistant[-1].get("time") or {}).get("completed"):
            return
        for event in ({"type": "session.updated", "properties": {"info": info}},
                      {"type": "message.updated", "properties": {"info": assistant[-1]}}):
            self._context(event)

    def session_observed(self, resumed: bool) -> None:
        """The seat's session is ``self.session_id``: recorded for the next relaunch."""
        self._save_local()
        self.note(f"{'resumed' if resumed else 'started'} session {self.session_id}")
        self.resume.observed(self.session_id)

    def resume_refused(self, session_id: str) -> None:
        """The server does not hold the session to resume: the one fallback (the ``resume``
        diagnostic, the id kept as lost); a new session follows."""
        self.note(f"session {session_id} is not served")
        self.resume.refused(session_id, self.diagnostics)

    # --- events ----------------------------------------------------------------------------
    def seed(self) -> None:
        """Seed the observed state from the three snapshots (a failing one is the seed stage)."""
        snapshots = []
        for path, reason, source in (("/session/status", "statusUnavailable", "statusSnapshot"),
                                     ("/permission", "permissionUnavailable", "permissionSnapshot"),
                                     ("/question", "questionUnavailable", "questionSnapshot")):
            try:
                snapshots.append(self.client.get(path))
            except ApiError as error:
                self.note(f"seed: GET {path} failed ({error})")
                self.diagnostics.publish("seed", reason, source)
                self.records.writer.lose_sight()
                return
        problem = self.observed.seed(*snapshots)
        if problem is not None:
            source = {"malformedStatus": "statusSnapshot", "unknownStatus": "statusSnapshot",
                      "malformedPermissions": "permissionSnapshot", "malformedQuestions": "questionSnapshot",
                      "missingAskId": "permissionSnapshot"}[problem]
            self.diagnostics.publish("seed", problem, source)
            self.records.writer.lose_sight()
            return
        self.diagnostics.clear("seed")
        self.view.seeded(self.observed.pending)
        self._publish_state(force=True)

    def _publish_state(self, force: bool = False) -> None:
        projection = self.observed.project()
        if projection is None or (projection == self._published and not force):
            return
        try:
            self.records.writer.observe(projection.state, projection.blocked_on, "unknown", projection.ask)
            self._published = projection
        except OSError as error:
            self._published = None
            self.note(f"observed-state write failed: {error}")

    def on_item(self, item) -> None:
        kind = item[0]
        if kind == "connected":
            self.connected = True
            self.restarts = 0
            self.diagnostics.clear("sse")
            self.seed()
            self.inbox_dirty = True
            if self.pump.ambiguous():
                self._next_read_back = 0.0
            return
        if kind == "down":
            if self.connected or item[1] == "sseConnectFailed":
                self.diagnostics.publish("sse", item[1], "eventStream")
            self.connected = False
            self._published = None
            self.records.writer.lose_sight()
            return
        event = item[1]
        if isinstance(event, Malformed):
            self.note(f"ignored a malformed event: {event.text[:80]}")
            return
        self.view.event(event)
        kind = event.get("type")
        if kind == "message.updated":
            self._message_updated(event)
        self._context(event)
        if self.observed.on_event(event):
            self._publish_state()
            properties = event.get("properties") or {}
            if properties.get("sessionID") == self.session_id and kind in ("session.idle", "session.status"):
                self.inbox_dirty = True
                if self.awaiting_read_back and kind == "session.idle":
                    self._next_read_back = 0.0

    def _context(self, event: dict) -> None:
        """One event through the context producer; its reading or edge published."""
        reading, edge = self.context.on_event(event, self.clock.wall_ms())
        if reading is not None or edge is not None:
            try:
                self.context_writer.publish(reading, edge)
            except (OSError, ValueError) as error:
                self.note(f"harness-context write failed: {error}")
            if self.context.window_due:
                self.pull_window()

    def _message_updated(self, event: dict) -> None:
        info = (event.get("properties") or {}).get("info")
        if not isinstance(info, dict) or info.get("role") != "assistant":
            return
        if credential_rejected(info.get("error")):
            self.diagnostics.publish("providerAuth", "providerAuthRejected", "turnResult")
        elif info.get("error") is None and info.get("finish") and (info.get("time") or {}).get("completed"):
            self.diagnostics.clear("providerAuth")
        if info.get("sessionID") == self.session_id:
            self._turn_seen = True

    def finish(self) -> None:
        if self.stream is not None:
            self.stream.stop()

    def serve(self) -> int | None:
        """Bring the spawned server into service (listening, apiGate, window, session, stream);
        None when it serves, else the wrapper's exit status."""
        if not self.wait_listening():
            return self._stop() if self.child.poll() is None else self._end(self.child.wait())
        if not self.api_gate():
            if self.child.poll() is None:
                self._stop()
            else:
                self._end(self.child.wait())
            return EXIT_UNSUPPORTED
        self.pull_window()
        self.bound = False
        if not self.bind(self.clock.monotonic() + API_TIMEOUT_SECONDS):
            self.note("no session could be bound; delivery holds")
            self._next_bind = self.clock.monotonic() + REBIND_SECONDS
        self.stream = EventStream(self.client, self.events, self._wake_write)
        self.stream.start()
        return None

    def restart(self, returncode: int) -> int | None:
        """The server exited under a running session: report the stream's loss, then serve a new
        one (its connect clears the ``sse`` stage). None when it serves again."""
        self.note(f"opencode serve exited ({exit_words(returncode)}); restarting it")
        if self.stream is not None:
            self.stream.stop()
        self._take_events()
        if self.connected:
            self.on_item(("down", "sseDisconnected"))
        # An attached TUI points at the dead server's port and password: end it now and attach a
        # new one to the restarted server once it serves again.
        reattach = self._end_attached()
        self.restarts += 1
        if self.restarts > MAX_RESTARTS or not self._wait_quietly(BACKOFF_SECONDS[min(self.restarts, 5)]):
            return self._end(returncode)
        # The old server is gone, so its history is complete: a read-back settles what it left.
        self.awaiting_read_back = False
        self._next_read_back = 0.0
        try:
            self.spawn()
        except OSError as error:
            _say(f"cannot restart {self.argv[0]!r}: {error.strerror or error}")
            return self._end(returncode)
        problem = self.serve()
        if problem is None and reattach:
            self.attach()
            if self.attached is None:   # could not attach again: the transcript takes the pane back
                self.view_mode = "transcript"
                self.view.held = False
        return problem

    def _wait_quietly(self, seconds: float) -> bool:
        deadline = self.clock.monotonic() + seconds
        while self.clock.monotonic() < deadline:
            if self.requests:
                return False
            self.clock.sleep(0.05)
        return True

    def _take_events(self) -> None:
        while True:
            try:
                item = self.events.get_nowait()
            except queue.Empty:
                return
            self.on_item(item)

    def before_select(self, selector):
        if self.detached() and self.stdin_fd is not None:
            selector.register(self.stdin_fd, selectors.EVENT_READ, "keyboard")
        returncode = self.child.poll()
        if returncode is None:
            return None
        was_attached = self.attached is not None and self.attached.poll() is None
        problem = self.restart(returncode)
        if problem is not None:
            return problem
        if was_attached and self.attached is None and self.stdin_fd is not None:
            selector.register(self.stdin_fd, selectors.EVENT_READ, "keyboard")
        return AGAIN

    def after_select(self) -> None:
        self._take_events()


def run_session(catalog: Path, identity: str, runtime_id: str | None, argv: list[str], model: str | None = None,
                operator: str | None = None, clock=None, view: str = "attach") -> int:
    """The ``opencode-session`` verb's core (:func:`st2.drivers.native_session.run_native_session`;
    2 too when the model is not providerID/modelID)."""
    if model is not None and split_model(model) is None:
        _say(f"--model {model!r} is not providerID/modelID")
        return 2
    return run_native_session(OpencodeSession, catalog, identity, runtime_id, argv, clock, model=model,
                              operator=operator, view=view)
