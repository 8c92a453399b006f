"""The ``.claude/settings.local.json`` content st2 renders for a ``claude { … }`` seat.

Rendered with one ``json-upsert … arrays="union"`` operation, so the merge owns only st2's own
entries: every hook group st2 adds is a constant object (commands name ``$ST_HOOKS``, which Claude's
shell expands from the seat's environment at run time, never at render time), the union adds it
once and leaves every group the operator wrote beside it, and re-rendering changes nothing.
``statusLine`` is the one key st2 replaces: the slot is single-valued, and st2's tee chains to the
operator's renderer (see :mod:`.statusline`). A statusLine a human writes into this file is
therefore not preserved — their renderer belongs in ``~/.claude/statusline-renderer.json``.
Limit, stated: a hook group an older st2 rendered with a different command stays until removed.

Registered:

- ``claude-observe.sh <Event>`` for every event in :data:`.events.OBSERVED_EVENTS` (state and
  compaction accounting);
- the delegation hooks of ``hooks/claude-settings.delegation.json`` (``subagent-stop-liveness`` on
  SubagentStop, ``dispatch-guard`` on PreToolUse matcher Agent) plus ``budget-guard`` on the same
  matcher, each through ``claude-hook.sh`` so their exit status and output pass through;
- ``claude-permission.sh`` on PermissionRequest, with a :data:`PERMISSION_TIMEOUT` timeout: it
  waits beside the dialog for an answer from `st2 web` (:mod:`.permission`);
- ``statusLine`` → the tee, with ``padding: 0`` and ``refreshInterval: 5`` (the 5-second refresh
  is what keeps the reading live between turns, well inside the 300-second write heartbeat).
"""

from __future__ import annotations

import json
from typing import Any

from st2.drivers.claude.events import OBSERVED_EVENTS, PERMISSION_REQUEST, PRE_TOOL_USE, SUBAGENT_STOP

TARGET = ".claude/settings.local.json"
ARRAYS = "union"
SCHEMA_URL = "https://json.schemastore.org/claude-code-settings.json"

STATUSLINE_COMMAND = '"$ST_HOOKS/claude-statusline.sh"'
STATUSLINE = {"type": "command", "command": STATUSLINE_COMMAND, "padding": 0, "refreshInterval": 5}

PERMISSION_COMMAND = '"$ST_HOOKS/claude-permission.sh"'
PERMISSION_TIMEOUT = 1800  # seconds; the hook's own bound is just under it

DISPATCH_MATCHER = "Agent"
# event -> (matcher or None, st2 hook names in order)
DELEGATION_HOOKS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    SUBAGENT_STOP: (None, ("subagent-stop-liveness",)),
    PRE_TOOL_USE: (DISPATCH_MATCHER, ("budget-guard", "dispatch-guard")),
}


def observe_command(event: str) -> str:
    return f'"$ST_HOOKS/claude-observe.sh" {event}'


def hook_command(name: str) -> str:
    return f'"$ST_HOOKS/claude-hook.sh" {name}'


def _command(command: str) -> dict[str, str]:
    return {"type": "command", "command": command}


def settings() -> dict[str, Any]:
    """The settings object st2 upserts (a fresh object on each call)."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event in OBSERVED_EVENTS:
        hooks[event] = [{"hooks": [_command(observe_command(event))]}]
        if event in DELEGATION_HOOKS:
            matcher, names = DELEGATION_HOOKS[event]
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [_command(hook_command(name)) for name in names]
            hooks[event].append(group)
        if event == PERMISSION_REQUEST:
            hooks[event].append({"hooks": [{"type": "command", "command": PERMISSION_COMMAND,
                                            "timeout": PERMISSION_TIMEOUT}]})
    return {"$schema": SCHEMA_URL, "hooks": hooks, "statusLine": dict(STATUSLINE)}


def settings_json() -> str:
    """The settings as the render operation's JSON text (stable, so re-rendering is a no-op)."""
    return json.dumps(settings(), indent=2) + "\n"
