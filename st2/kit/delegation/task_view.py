"""What the SubagentStop payload says beside the reader: the harness's task view and the
helper-firing classification (docs/kit.md §Turn-end liveness hook).

Task view: a ``background_tasks`` element with ``type`` shell and ``status`` running refuses
the turn end when the emitting session launched it — its ``id`` occurs as a whole token in the
transcript ``agent_transcript_path`` names. An element whose id is absent, not a string or
empty counts as the session's own; an absent or unreadable transcript counts every running
shell element (scoping narrows only off a key the hook holds, never fails open). Anything else
in the view — a subagent element, another status, an absent key, a non-array view, a
non-object element — contributes nothing. The transcript is read only when a running shell
element exists, and at most once.

Helper firing: the harness fires SubagentStop for a progress-summary helper while a session
runs. A firing is a helper's only when all three marks hold, each read positively: the
``agent_type`` key is present and empty; ``agent_transcript_path`` names a non-empty path the
filesystem reports as not found; ``agent_id`` is non-empty and the ``background_tasks`` array
holds no subagent element carrying it. An absent key, an empty id or a missing view fails its
mark, so an unreadable payload is never a helper.

Nothing here is logged: the hook logs none of these values, not even a count.
"""

from __future__ import annotations

import os
import re

from st2.fs.read import TRANSCRIPT_LIMIT, read_bounded

_TOKEN_CHARACTER = "A-Za-z0-9_-"


def contains_whole_token(text: str, token: str) -> bool:
    """True when ``token`` occurs in ``text`` bounded on both sides by a character outside
    ``[A-Za-z0-9_-]`` or by the text's start or end."""
    pattern = f"(?<![{_TOKEN_CHARACTER}]){re.escape(token)}(?![{_TOKEN_CHARACTER}])"
    return re.search(pattern, text) is not None


def _read_transcript(payload: dict[str, object]) -> str | None:
    path = payload.get("agent_transcript_path")
    if not isinstance(path, str) or not path:
        return None
    try:
        return read_bounded(path, TRANSCRIPT_LIMIT).decode("utf-8", "replace")
    except OSError:
        return None


def holds_own_running_shell_task(payload: dict[str, object] | None) -> bool:
    """The task-view arm's condition (see module docstring)."""
    if payload is None:
        return False
    view = payload.get("background_tasks")
    if not isinstance(view, list):
        return False
    running = [
        element
        for element in view
        if isinstance(element, dict) and element.get("type") == "shell" and element.get("status") == "running"
    ]
    if not running:
        return False
    transcript = _read_transcript(payload)
    for element in running:
        task_id = element.get("id")
        if not isinstance(task_id, str) or not task_id:
            return True
        if transcript is None or contains_whole_token(transcript, task_id):
            return True
    return False


def helper_marks(payload: dict[str, object] | None) -> tuple[bool, bool, bool]:
    """The three helper marks, each read positively: (empty type, missing transcript, new id)."""
    if payload is None:
        return False, False, False
    empty_type = payload.get("agent_type", None) == "" and isinstance(payload.get("agent_type"), str)
    missing_transcript = False
    path = payload.get("agent_transcript_path")
    if isinstance(path, str) and path:
        try:
            os.stat(path)
        except FileNotFoundError:
            missing_transcript = True
        except OSError:
            missing_transcript = False
    new_id = False
    agent_id = payload.get("agent_id")
    view = payload.get("background_tasks")
    if isinstance(agent_id, str) and agent_id and isinstance(view, list):
        new_id = not any(
            isinstance(element, dict) and element.get("type") == "subagent" and element.get("id") == agent_id
            for element in view
        )
    return empty_type, missing_transcript, new_id


def is_helper_firing(payload: dict[str, object] | None) -> bool:
    """Only the full conjunction of the three marks classes a firing as a helper's."""
    return all(helper_marks(payload))
