"""The hook JSON envelopes st2's PreToolUse guards write. Every interpolated value is
serialized, never quoted by hand; key order is literal."""

from __future__ import annotations

import json


def advise(message: str) -> str:
    """The PreToolUse advisory: exit 0 with ``additionalContext`` the model reads."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": message}},
        ensure_ascii=False,
        separators=(",", ":"),
    ) + "\n"
