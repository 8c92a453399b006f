"""Claude Code session transcripts (``<config-home>/projects/<cwd-slug>/<session>.jsonl``,
dispatched sessions under ``<session>/subagents/agent-<id>.jsonl``): where they live, how a key
names one, and the per-record reading of the model an assistant record ran on.

One JSON object per line. An assistant record is ``{"type": "assistant", "message": {"model":
…, "usage": {…token counts…}}, "effort": …}``; the harness writes synthetic assistant records
with all-zero usage, which name no model that ran. A line that does not parse, or a record of
another shape, is skipped (a transcript being written has a torn last line).

Standard library only.
"""

from __future__ import annotations

import os

from st2.records import decoding

AGENT_PREFIX = "agent-"
KEY_LENGTH = 8


def config_home(environ) -> str:
    return environ.get("CLAUDE_CONFIG_DIR") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".claude")


def cwd_slug(cwd: str) -> str:
    """Claude's project directory name for ``cwd``: every character outside [A-Za-z0-9] is ``-``."""
    return "".join(character if character.isascii() and character.isalnum() else "-" for character in cwd)


def derived_sessions_dir(environ, cwd: str) -> str:
    return os.path.join(config_home(environ), "projects", cwd_slug(os.path.abspath(cwd)))


def key_of(path: str) -> str:
    """A transcript's key: its stem with a leading ``agent-`` stripped, first eight characters."""
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    if stem.startswith(AGENT_PREFIX):
        stem = stem[len(AGENT_PREFIX):]
    return stem[:KEY_LENGTH]


def transcripts(sessions_dir: str) -> list[str]:
    """Top-level transcripts and every ``<session>/subagents/*.jsonl`` under ``sessions_dir``."""
    found: list[str] = []
    try:
        entries = sorted(os.listdir(sessions_dir))
    except OSError:
        return found
    for name in entries:
        path = os.path.join(sessions_dir, name)
        if name.endswith(".jsonl") and os.path.isfile(path):
            found.append(path)
        subagents = os.path.join(path, "subagents")
        if os.path.isdir(subagents):
            found.extend(os.path.join(subagents, child) for child in sorted(os.listdir(subagents)) if child.endswith(".jsonl"))
    return found


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def newest(sessions_dir: str) -> str | None:
    candidates = transcripts(sessions_dir)
    return max(candidates, key=lambda path: (_mtime(path), path)) if candidates else None


def by_key(sessions_dir: str, key: str) -> list[str]:
    """Transcripts whose key (:func:`key_of`) is ``key``."""
    return [path for path in transcripts(sessions_dir) if key_of(path) == key]


def _usage_is_zero(usage) -> bool:
    if not isinstance(usage, dict):
        return True
    return not any(isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 for value in usage.values())


def model_record(line: bytes) -> tuple[str, str | None] | None:
    """``(model, effort)`` of one transcript line when it is an assistant record with non-zero
    usage and a model; None otherwise."""
    try:
        record = decoding.load_json(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "assistant":
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    model = message.get("model")
    if not isinstance(model, str) or not model or _usage_is_zero(message.get("usage")):
        return None
    effort = record.get("effort")
    return model, (effort if isinstance(effort, str) and effort else None)


def running_model(data: bytes) -> tuple[str, str | None] | None:
    """The newest assistant record with non-zero usage: the model (and effort) now running."""
    for line in reversed(data.splitlines()):
        reading = model_record(line)
        if reading is not None:
            return reading
    return None
