"""A Claude permission dialog answered from outside the pane: ``st2 driver claude-permission``,
the seat's ``PermissionRequest`` hook, and the two host-local files it shares with `st2 web`.

Claude Code 2.1.197 runs a ``PermissionRequest`` hook beside its dialog and honours the decision
the hook prints (``hookSpecificOutput.decision.behavior`` ``allow`` or ``deny``) when the dialog
is still open; a human who answers at the pane first wins, and Claude ignores what the hook
prints later but does not end it (measured in the lab: tests/drivers/claude/test_permission_lab.py).
So the hook:

1. publishes the ask, ``<scope>/asks/<runtime-id>.json`` (0600, atomic): schema
   :data:`ASK_SCHEMA`, the wrapper's ``incarnation``, the ask's ``digest`` (over the tool, its
   input and this hook process's pid and start ticks, so two identical asks never share one),
   ``tool``, ``text``, ``pid``, ``start``, ``askedAtMs``;
2. waits, at most :data:`WAIT_SECONDS`, for ``<scope>/asks/<runtime-id>.answer.json``
   (schema :data:`ANSWER_SCHEMA`, ``digest``, ``behavior``) naming its digest, and prints the
   decision; an answer naming another digest is removed unread;
3. ends silently, printing nothing, as soon as the seat's ``harness-state`` shows the seat no
   longer blocked on a human after it was (the human answered at the pane), when Claude is gone,
   or at the bound; it removes its ask file however it ends.

`st2 web` (:func:`answer`) refuses an answer whose incarnation or digest is not the published
ask's, or whose hook process is gone, and otherwise writes the answer file and waits for the hook
to take it. Each failure of the hook is one line on stderr, which Claude keeps out of the
conversation; it always exits 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from st2.drivers.human_desk import clean
from st2.fs.atomic import ensure_directory, publish
from st2.fs.read import RECORD_LIMIT, read_optional
from st2.runtime import layout

ASK_SCHEMA = "st2.claude-permission-ask.v1"
ANSWER_SCHEMA = "st2.claude-permission-answer.v1"
WAIT_SECONDS = 1790.0          # under the hook's registered timeout (settings.PERMISSION_TIMEOUT)
STEP_SECONDS = 0.1
TAKEN_SECONDS = 3.0            # how long `st2 web` waits for the hook to take an answer
BEHAVIORS = {"approve": "allow", "decline": "deny"}


def ask_path(scope: Path, runtime_id: str) -> Path:
    return layout.asks(scope) / f"{runtime_id}.json"


def answer_path(scope: Path, runtime_id: str) -> Path:
    return layout.asks(scope) / f"{runtime_id}.answer.json"


def _read_json(path: Path) -> dict | None:
    try:
        data = read_optional(path, RECORD_LIMIT, follow_symlinks=False)
        value = json.loads(data) if data else None
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _publish(scope: Path, path: Path, value: dict) -> None:
    ensure_directory(path.parent, 0o700)
    staging = layout.staging(scope)
    ensure_directory(staging, 0o700)
    publish(path, (json.dumps(value, sort_keys=True) + "\n").encode(), staging, mode=0o600, durable=False)


def _start_ticks(pid: int) -> int | None:
    from st2.process import proc_stat

    try:
        stat = proc_stat.read(pid)
    except OSError:
        return None
    return stat.start_ticks if stat is not None and stat.running else None


def read_ask(scope: Path, runtime_id: str) -> dict | None:
    """The seat's published ask while its hook still runs; None otherwise (absent, malformed,
    another schema, or its hook process gone)."""
    ask = _read_json(ask_path(scope, runtime_id))
    if ask is None or ask.get("schema") != ASK_SCHEMA or not isinstance(ask.get("digest"), str):
        return None
    pid, start = ask.get("pid"), ask.get("start")
    if not isinstance(pid, int) or not isinstance(start, int) or _start_ticks(pid) != start:
        return None
    return ask


def answer(scope: Path, runtime_id: str, incarnation: str, digest: str, verb: str) -> dict:
    """Hand the page's answer to the waiting hook: ``{"ok", "outcome"}``."""
    behavior = BEHAVIORS.get(verb)
    if behavior is None:
        return {"ok": False, "outcome": "refused: a permission is approved or declined"}
    ask = read_ask(scope, runtime_id)
    if ask is None or ask["digest"] != digest:
        return {"ok": False, "outcome": "refused: that ask is no longer pending (answered, or replaced by another)"}
    if ask.get("incarnation") != incarnation:
        return {"ok": False, "outcome": "refused: the seat's harness was restarted since that ask was shown"}
    _publish(scope, answer_path(scope, runtime_id), {"schema": ANSWER_SCHEMA, "digest": digest, "behavior": behavior})
    deadline = time.monotonic() + TAKEN_SECONDS
    while time.monotonic() < deadline:
        if read_ask(scope, runtime_id) is None:
            return {"ok": True, "outcome": {"allow": "approved", "deny": "declined"}[behavior]}
        time.sleep(STEP_SECONDS)
    return {"ok": False, "outcome": "not taken: the seat's hook did not take the answer in time"}


def describe(tool: str, tool_input) -> str:
    """One line for a human: the tool and its command, file or description."""
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "url", "description"):
            if isinstance(tool_input.get(key), str):
                return f"{tool}: {tool_input[key]}"
    return tool


class Waiter:
    """One ``PermissionRequest`` hook run for ``runtime_id`` in ``scope``; ``state_path`` is the
    seat's harness-state record."""

    def __init__(self, scope: Path, runtime_id: str, state_path: Path, incarnation: str | None, payload: dict) -> None:
        self.scope, self.runtime_id, self.state_path = scope, runtime_id, state_path
        tool = str(payload.get("tool_name") or "?")
        tool_input = payload.get("tool_input")
        pid = os.getpid()
        start = _start_ticks(pid) or 0
        identity = json.dumps([tool, tool_input, pid, start], sort_keys=True, default=str)
        self.digest = hashlib.sha256(identity.encode()).hexdigest()[:32]
        self.ask = {"schema": ASK_SCHEMA, "incarnation": incarnation or "", "digest": self.digest, "tool": tool,
                    "text": clean(describe(tool, tool_input)), "pid": pid, "start": start,
                    "askedAtMs": int(time.time() * 1000)}
        self.parent = os.getppid()

    def blocked(self) -> bool | None:
        record = _read_json(self.state_path)
        return None if record is None else record.get("blockedOn") == "human"

    def run(self, wait: float = WAIT_SECONDS) -> str | None:
        """The behavior the page chose, or None (the human answered at the pane, Claude went
        away, or the bound passed)."""
        _publish(self.scope, ask_path(self.scope, self.runtime_id), self.ask)
        try:
            seen_blocked = False
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and os.getppid() == self.parent:
                answered = _read_json(answer_path(self.scope, self.runtime_id))
                if answered is not None:
                    if answered.get("digest") == self.digest and answered.get("behavior") in ("allow", "deny"):
                        _remove(answer_path(self.scope, self.runtime_id))
                        return answered["behavior"]
                blocked = self.blocked()
                if blocked:
                    seen_blocked = True
                elif seen_blocked and blocked is False:
                    return None
                time.sleep(STEP_SECONDS)
            return None
        finally:
            current = _read_json(ask_path(self.scope, self.runtime_id))
            if current is not None and current.get("digest") == self.digest:
                _remove(ask_path(self.scope, self.runtime_id))


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def decision(behavior: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                              "decision": {"behavior": behavior}}})


def main(catalog: str | None, identity: str | None, environ=os.environ) -> int:
    """The hook: read the payload, publish, wait, print the decision if the page gave one."""
    from st2.catalog.layout import HARNESS_STATE, SeatPaths
    from st2.catalog.location import resolve_catalog_root
    from st2.drivers.claude import RUNTIME_ID_ENV, SESSION_ENV
    from st2.runtime.scope import RuntimeScope

    raw = sys.stdin.buffer.read()
    try:
        payload = json.loads(raw) if raw.strip() else {}
        agent = identity or environ.get("ST_AGENT") or ""
        host, _, bare = agent.partition(".")
        if not (host and bare) or not isinstance(payload, dict):
            sys.stderr.write("st2 claude-permission: no seat identity (ST_AGENT) or no payload; the dialog stays\n")
            return 0
        root = resolve_catalog_root(catalog or environ.get("ST_ROOT") or environ.get("CATALOG"))
        scope = RuntimeScope(root, host).directory
        runtime_id = environ.get(RUNTIME_ID_ENV) or agent
        state_path = Path(SeatPaths(root, host, bare).directory) / HARNESS_STATE
        behavior = Waiter(scope, runtime_id, state_path, environ.get(SESSION_ENV), payload).run()
    except Exception as error:  # never break the harness: the dialog stays for the human
        sys.stderr.write(f"st2 claude-permission: {error}\n")
        return 0
    if behavior is not None:
        sys.stdout.write(decision(behavior) + "\n")
    return 0
