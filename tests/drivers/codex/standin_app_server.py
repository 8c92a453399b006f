#!/usr/bin/env python3
"""A stand-in ``codex app-server`` speaking the frames codex-cli 0.171.0 sent in the lab capture
(captures/codex/0.171.0/lab/app-server.harness.jsonl), for process tests of the wrapper.

``--version`` prints ``codex-cli $STANDIN_VERSION`` (default 0.171.0). ``app-server`` keeps its
thread's history durably in ``$STANDIN_DIR/history.jsonl`` (one user message per line, appended
and fsynced when the turn takes the input — the moment a model would see it), so a restarted
stand-in resumes the same thread and ``thread/read`` returns the real history. Markers in the
input: ``FAKE_APPROVAL`` asks a command approval and waits for the answer; ``FAKE_LATE`` sleeps
0.5 s before taking the input and ``FAKE_SLOW`` after it (before reporting it); ``FAKE_HOLD`` keeps the turn live 1.5 s after taking its input; ``FAKE_401`` / ``FAKE_429`` end the turn with the typed errors
0.171.0 reports for an HTTP 401 / 429 in the lab. With ``$STANDIN_LEDGER`` naming the wrapper's
delivery ledger, each turn request appends the ledger's bytes as they were when the request
arrived (with the request's method and input) to ``$STANDIN_DIR/ledger-at-transport.jsonl``.
"""

import json
import os
import sys
import time
import uuid

STATE = os.environ.get("STANDIN_DIR", ".")
THREAD = "01a22a0d-4978-7472-b462-740ce61e24f6"
USAGE = {"totalTokens": 101300, "inputTokens": 101000, "cachedInputTokens": 1200, "cacheWriteInputTokens": 0,
         "outputTokens": 300, "reasoningOutputTokens": 0}


def out(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def note(method, params):
    out({"method": method, "params": params, "emittedAtMs": int(time.time() * 1000)})


def history():
    try:
        with open(os.path.join(STATE, "history.jsonl")) as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except FileNotFoundError:
        return []


def remember(text):
    with open(os.path.join(STATE, "history.jsonl"), "a") as handle:
        handle.write(json.dumps({"text": text}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def thread(status=None, turns=None):
    body = {"id": THREAD, "sessionId": THREAD, "status": status or {"type": "idle"}, "preview": "",
            "ephemeral": False}
    if turns is not None:
        body["turns"] = turns
    return body


def read_line():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def run_turn(request_id, text):
    turn_id = str(uuid.uuid4())
    out({"id": request_id, "result": {"turn": {"id": turn_id, "items": [], "status": "inProgress", "error": None}}})
    note("thread/status/changed", {"threadId": THREAD, "status": {"type": "active", "activeFlags": []}})
    note("turn/started", {"threadId": THREAD, "turn": {"id": turn_id, "items": [], "status": "inProgress"}})
    if "FAKE_LATE" in text:
        time.sleep(0.5)  # before the input is taken: a kill now leaves it absent from history
    item = {"type": "userMessage", "id": str(uuid.uuid4()), "clientId": None,
            "content": [{"type": "text", "text": text, "text_elements": []}]}
    remember(text)
    if "FAKE_SLOW" in text:
        time.sleep(0.5)  # taken but not yet reported: a kill now leaves it only in history
    note("item/started", {"item": item, "threadId": THREAD, "turnId": turn_id})
    note("item/completed", {"item": item, "threadId": THREAD, "turnId": turn_id})
    if "FAKE_HOLD" in text:
        time.sleep(1.5)  # the turn stays live after taking its input (a model thinking)
    error = None
    if "FAKE_401" in text:
        # What 0.171.0 yields for an HTTP 401 (lab, tests/drivers/codex/test_lab.py).
        error = {"message": "unexpected status 401 Unauthorized", "codexErrorInfo": {
            "httpConnectionFailed": {"httpStatusCode": 401}}}
    elif "FAKE_429" in text:
        error = {"message": "exceeded retry limit, last status: 429 Too Many Requests", "codexErrorInfo": {
            "responseTooManyFailedAttempts": {"httpStatusCode": 429}}}
    if "FAKE_APPROVAL" in text:
        note("thread/status/changed", {"threadId": THREAD, "status": {"type": "active",
                                                                       "activeFlags": ["waitingOnApproval"]}})
        out({"method": "item/commandExecution/requestApproval", "id": 0,
             "params": {"threadId": THREAD, "turnId": turn_id, "itemId": "call_1", "command": "touch x",
                        "reason": "stand-in asks", "cwd": "/"}})
        answer = read_line()
        with open(os.path.join(STATE, "approvals.jsonl"), "a") as handle:
            handle.write(json.dumps(answer) + "\n")
        note("serverRequest/resolved", {"threadId": THREAD, "requestId": 0})
        note("thread/status/changed", {"threadId": THREAD, "status": {"type": "active", "activeFlags": []}})
    if error is None:
        note("item/completed", {"item": {"type": "agentMessage", "id": "msg_1", "text": "Hello from the stand-in."},
                                "threadId": THREAD, "turnId": turn_id})
        note("thread/tokenUsage/updated", {"threadId": THREAD, "turnId": turn_id, "tokenUsage": {
            "total": dict(USAGE), "last": dict(USAGE), "modelContextWindow": 190000}})
        note("account/rateLimits/updated", {"rateLimits": {
            "primary": {"usedPercent": 13, "windowDurationMins": 300, "resetsAt": 1796005443},
            "secondary": {"usedPercent": 34, "windowDurationMins": 10080, "resetsAt": 1796088243}}})
    # A failed turn leaves the thread in systemError until the next turn starts (0.171.0, lab).
    note("thread/status/changed", {"threadId": THREAD, "status": {"type": "systemError" if error else "idle"}})
    note("turn/completed", {"threadId": THREAD, "turn": {"id": turn_id, "items": [],
                                                           "status": "failed" if error else "completed",
                                                           "error": error}})


def main():
    if "--version" in sys.argv:
        print(f"codex-cli {os.environ.get('STANDIN_VERSION', '0.171.0')}")
        return 0
    with open(os.path.join(STATE, "launches"), "a") as handle:
        handle.write(f"{os.getpid()}\n")
    while True:
        frame = read_line()
        method, request_id, params = frame.get("method"), frame.get("id"), frame.get("params") or {}
        if method == "initialize":
            out({"id": request_id, "result": {"userAgent": "standin/0.171.0", "platformOs": "linux"}})
        elif method == "thread/start":
            open(os.path.join(STATE, "history.jsonl"), "a").close()
            with open(os.path.join(STATE, "thread-start.json"), "w") as handle:
                json.dump(params, handle)
            out({"id": request_id, "result": {"thread": thread()}})
            note("thread/started", {"thread": thread()})
        elif method == "thread/resume":
            if params.get("threadId") != THREAD:
                out({"id": request_id, "error": {"code": -32600, "message": "no such thread"}})
                continue
            out({"id": request_id, "result": {"thread": thread()}})
        elif method == "thread/read":
            items = [{"type": "userMessage", "id": str(index), "content": [{"type": "text", "text": entry["text"]}]}
                     for index, entry in enumerate(history())]
            out({"id": request_id, "result": {"thread": thread(turns=[{"id": "t", "items": items}])}})
        elif method in ("turn/start", "turn/steer"):
            with open(os.path.join(STATE, "methods"), "a") as handle:
                handle.write(json.dumps({"method": method, "expectedTurnId": params.get("expectedTurnId")}) + "\n")
            if os.environ.get("STANDIN_TIMING"):  # the benchmark's clock: when the request arrived
                with open(os.environ["STANDIN_TIMING"], "a") as handle:
                    handle.write(f"{time.monotonic()}\n")
            text = "\n".join(part.get("text", "") for part in params.get("input", []))
            if os.environ.get("STANDIN_LEDGER"):  # what the wrapper's ledger held when the request arrived
                try:
                    with open(os.environ["STANDIN_LEDGER"]) as handle:
                        held = handle.read()
                except FileNotFoundError:
                    held = None
                with open(os.path.join(STATE, "ledger-at-transport.jsonl"), "a") as handle:
                    handle.write(json.dumps({"method": method, "text": text, "ledger": held}) + "\n")
            if os.environ.get("STANDIN_REFUSE_TURNS"):
                out({"id": request_id, "error": {"code": -32600, "message": "stand-in refuses turns"}})
                continue
            run_turn(request_id, text)
        elif request_id is not None and method is not None:
            out({"id": request_id, "error": {"code": -32601, "message": f"stand-in: no {method}"}})


if __name__ == "__main__":
    sys.exit(main())
