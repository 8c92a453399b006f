"""Agent-type definitions under ``DELEGATION_KIT_AGENT_DIR``, for dispatch guard rule D5.

A definition is found by its first front-matter block's ``name:``, else its file stem, the way
the harness names a type; it tiers its type when that block states a non-empty ``model:``.
"""

from __future__ import annotations

import os


class UnreadableAgentDirectory(OSError):
    """The definition directory exists but cannot be walked: D5 cannot be decided."""


def front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` lines of the first ``---`` … ``---`` block opening the file."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return fields
        key, separator, value = line.partition(":")
        if separator and key and not key[0].isspace():
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            fields.setdefault(key.strip(), value)
    return {}  # an unterminated block is no front matter


def defined_type(text: str, stem: str) -> str:
    return front_matter(text).get("name") or stem


def states_model(text: str) -> bool:
    return bool(front_matter(text).get("model"))


def type_is_tiered(agent_dir: str, subagent_type: str) -> bool:
    """True when a definition under ``agent_dir`` declares ``subagent_type`` and states
    ``model:``. An absent directory holds no definitions; one that exists but cannot be walked
    raises :class:`UnreadableAgentDirectory`."""
    if not subagent_type or not os.path.isdir(agent_dir):
        return False
    if not os.access(agent_dir, os.R_OK | os.X_OK):
        raise UnreadableAgentDirectory(f"{agent_dir}: cannot be read")
    failures: list[OSError] = []
    for directory, _, files in os.walk(agent_dir, onerror=failures.append):
        for file_name in sorted(files):
            if not file_name.endswith(".md"):
                continue
            try:
                with open(os.path.join(directory, file_name), encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                continue
            if defined_type(text, file_name[: -len(".md")]) == subagent_type and states_model(text):
                return True
    if failures:
        raise UnreadableAgentDirectory(f"{agent_dir}: {failures[0]}")
    return False
