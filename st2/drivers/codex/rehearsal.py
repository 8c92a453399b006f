"""A rehearsal of the Codex wrapper's code for the seat host to run once before it freezes its
heap and forks session wrappers (:mod:`st2.seathost.session_fork`).

Python 3.11 specializes bytecode in place the first times it runs, and a forked child that is
the first to run a code object copies its pages (the DING notifier's rehearsal,
:mod:`st2.ding.rehearsal`, for the same reason). So the host runs one whole wrapper session —
:meth:`CodexSession.run`: the version gate, the relaunch claim, the spawn, the loop, the frame
handling, one delivery and its evidence, the keyboard's ``/help``, the end when the server
exits — over a scratch seat in a temporary directory, against :data:`PARTNER`: a few lines of
Python that answer the version probe and the app-server calls the wrapper makes with the frame
shapes Codex 0.171.0 sends, then end. Nothing leaves the directory, which is removed.

:func:`rehearse` never raises: a rehearsal only warms pages (the opencode wrapper shares much of
the code), and a host whose rehearsal failed serves without it (what it saves per forked
wrapper: docs/memory.md §Native wrappers forked onto their pane's terminal).
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

PARTNER = r'''
import json, sys
if "--version" in sys.argv:
    print("codex-cli 0.171.0")
    raise SystemExit(0)
THREAD = "00000000-0000-7000-8000-000000000000"
def out(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()
def note(method, params):
    out({"method": method, "params": params})
thread = {"id": THREAD, "status": {"type": "idle"}, "turns": []}
for line in sys.stdin:
    frame = json.loads(line)
    method, request_id, params = frame.get("method"), frame.get("id"), frame.get("params") or {}
    if method == "initialize":
        out({"id": request_id, "result": {"userAgent": "rehearsal/0.171.0", "platformOs": "linux"}})
    elif method == "thread/start":
        out({"id": request_id, "result": {"thread": thread}})
        note("thread/started", {"thread": thread})
    elif method == "thread/read":
        out({"id": request_id, "result": {"thread": thread}})
    elif method in ("turn/start", "turn/steer"):
        turn = {"id": "turn-1", "items": [], "status": "inProgress", "error": None}
        out({"id": request_id, "result": {"turn": turn}})
        note("thread/status/changed", {"threadId": THREAD, "status": {"type": "active", "activeFlags": []}})
        note("turn/started", {"threadId": THREAD, "turn": turn})
        text = "".join(part.get("text", "") for part in params.get("input", []))
        user = {"type": "userMessage", "id": "u1", "content": [{"type": "text", "text": text}]}
        note("item/started", {"item": user, "threadId": THREAD, "turnId": "turn-1"})
        note("item/completed", {"item": user, "threadId": THREAD, "turnId": "turn-1"})
        note("item/agentMessage/delta", {"threadId": THREAD, "turnId": "turn-1", "itemId": "m1", "delta": "ok"})
        note("item/completed", {"item": {"type": "agentMessage", "id": "m1", "text": "ok"},
                                "threadId": THREAD, "turnId": "turn-1"})
        usage = {"totalTokens": 1200, "inputTokens": 1000, "cachedInputTokens": 100, "outputTokens": 200,
                 "reasoningOutputTokens": 0}
        note("thread/tokenUsage/updated", {"threadId": THREAD, "turnId": "turn-1", "tokenUsage": {
            "total": usage, "last": usage, "modelContextWindow": 190000}})
        note("thread/status/changed", {"threadId": THREAD, "status": {"type": "idle"}})
        note("turn/completed", {"threadId": THREAD, "turn": dict(turn, status="completed")})
        break
    elif request_id is not None:
        out({"id": request_id, "error": {"code": -32601, "message": "rehearsal"}})
'''
BOUND_SECONDS = 10
MESSAGE = "---\nfrom: h.rehearsal\nsubject: rehearsal\n---\nrehearsal\n"


def rehearse() -> None:
    """Run one Codex wrapper session over a scratch seat; leave nothing behind. Never raises."""
    from st2.base.clock import SYSTEM_CLOCK
    from st2.drivers.codex.session import CodexSession
    from st2.drivers.seat import Seat

    directory = Path(tempfile.mkdtemp(prefix="st2-codex-rehearsal-"))
    handlers = {number: signal.getsignal(number)
                for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGALRM)}
    try:
        catalog = directory / "catalog"
        seat_directory = catalog / "agents" / "h" / "rehearsal"
        (seat_directory / "resources" / "inbox").mkdir(parents=True)
        (seat_directory / "agent.kdl").write_text('agent "rehearsal" {\n    codex\n}\n')
        (seat_directory / "resources" / "inbox" / "1700000000000-aaaaaa.md").write_text(MESSAGE)
        partner = directory / "codex"
        partner.write_text(f"#!{sys.executable}\n{PARTNER}")
        partner.chmod(0o755)
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(directory)}
        session = CodexSession(Seat(seat_directory, "h.rehearsal"), "h.rehearsal", [str(partner), "app-server"],
                               SYSTEM_CLOCK, catalog, state_dir=directory / "state", environment=environment,
                               stdin_fd=None, stream=io.StringIO())
        session.install_signal_handlers()
        signal.signal(signal.SIGALRM, session._enqueue)   # a bound: a stuck rehearsal stops itself
        signal.alarm(BOUND_SECONDS)
        session.desk.on_keyboard(b"/help\n")
        session.run()
        inotify = getattr(getattr(session.watch, "watch", None), "inotify", None)
        if inotify is not None:
            inotify.close()
        for stream in (session.child.stdin, session.child.stdout):
            stream.close()
    except Exception:  # a rehearsal only warms pages; the host serves without it
        pass
    finally:
        signal.alarm(0)
        for number, handler in handlers.items():
            signal.signal(number, handler)
        shutil.rmtree(directory, ignore_errors=True)
