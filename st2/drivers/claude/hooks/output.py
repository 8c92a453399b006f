"""The hook protocol's two halves st2's Claude hooks share: the one hook main (payload on stdin,
the outcome's stdout, stderr and exit status out) and the JSON envelopes the PreToolUse guards
write. Every interpolated value is serialized, never quoted by hand; key order is literal."""

from __future__ import annotations

import json
import os
import sys


def run_hook(decide) -> int:
    """The hot-path main of a stdin-payload hook: read the payload (None when stdin cannot be
    read), ``decide(payload_text, environ, cwd)`` -> an outcome with ``stdout``, ``stderr`` and
    ``code``, write its streams and return its exit status."""
    try:
        payload_text = sys.stdin.read()
    except (OSError, ValueError):
        payload_text = None
    outcome = decide(payload_text, os.environ, os.getcwd())
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
    return outcome.code


def advise(message: str) -> str:
    """The PreToolUse advisory: exit 0 with ``additionalContext`` the model reads."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": message}},
        ensure_ascii=False,
        separators=(",", ":"),
    ) + "\n"
