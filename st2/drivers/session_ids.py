"""Which strings each harness's own session store can name: the shape a resumable-session id must
have before st2 records it (the observer) and again before a relaunch hands it to the harness
(the reader — the guard that matters, since anything that can write the record can write any id).

- Claude: the ``session_id`` its hooks report, a lower-case UUID
  (``cf42a7fc-c928-4f61-b941-d2d313bd605a``, captures/claude-code hook inputs).
- Codex: the thread id ``thread/start`` answers, a lower-case UUID
  (``01a2289d-39d9-7860-bbe4-541e55c7ab5d``, captures/lab/codex 0.171.0).
- opencode: ``ses_`` and base62 (``ses_dd761d587ffeD73MSIa931GXoj``, captures/lab/opencode 1.18.33).
- pi and omp: the session file the channel names, which must resolve (every symlink followed) to
  a ``*.jsonl`` name (a regular file, or none) directly inside the harness's own session directory for the
  wrapper's working directory: pi ``<agent dir>/sessions/--<cwd>--/`` (agent dir
  ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``), omp ``<agent dir>/sessions/-<cwd>/`` (agent dir ``$PI_CODING_AGENT_DIR``, else ``~/.omp/agent``), the
  cwd's ``/`` (and ``\\``, ``:``) written as ``-`` (pi 0.73.1: ``--home-user-lab-piproj--``;
  omp 18.2.3: ``-home-user-lab-omp_proj``, captures/lab and captures/pi/live-0.73.1). Any other
  existing file — a seat's own records, another project's conversation, ``/etc/passwd`` — is not
  that seat's conversation.

None of these shapes can begin with ``-``, so no harness reads an accepted id as an option; the
wrappers still pass it joined to its option where the harness parses that (``--resume=<id>``).
Standard library only (Claude's observer hook imports it: no typing, no pathlib).
"""

from __future__ import annotations

import os
import re

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
OPENCODE_SESSION_ID = re.compile(r"ses_[0-9A-Za-z]{1,200}")
SESSION_FILE_SUFFIX = ".jsonl"
_PATH_SEPARATORS = re.compile(r"[/\\:]")


def is_uuid(session_id: object) -> bool:
    """A Claude session id or a Codex thread id: a lower-case UUID, nothing around it."""
    return isinstance(session_id, str) and UUID.fullmatch(session_id) is not None


def is_opencode_session_id(session_id: object) -> bool:
    """An opencode session id: ``ses_`` and 1 to 200 base62 characters."""
    return isinstance(session_id, str) and OPENCODE_SESSION_ID.fullmatch(session_id) is not None


def _home(environment: dict) -> str:
    return environment.get("HOME") or os.path.expanduser("~")


def pi_sessions_directory(environment: dict, cwd: str) -> str:
    """pi's session directory for a harness run in ``cwd`` with ``environment``."""
    agent = environment.get("PI_CODING_AGENT_DIR") or os.path.join(_home(environment), ".pi", "agent")
    if agent == "~" or agent.startswith("~/"):
        agent = _home(environment) + agent[1:]
    return os.path.join(agent, "sessions", "--" + _PATH_SEPARATORS.sub("-", re.sub(r"^[/\\]", "", cwd)) + "--")


def _omp_agent_directory(environment: dict) -> str:
    """omp's agent directory: ``$PI_CODING_AGENT_DIR`` (omp 18.2.3 reads pi's variable, which an
    account's ``config-dir omp=`` sets), else ``~/.omp/agent``."""
    agent = environment.get("PI_CODING_AGENT_DIR") or os.path.join(_home(environment), ".omp", "agent")
    if agent == "~" or agent.startswith("~/"):
        agent = _home(environment) + agent[1:]
    return agent


def omp_sessions_directory(environment: dict, cwd: str) -> str:
    """omp's session directory for a harness run in ``cwd`` with ``environment``, as the captures
    show it (``-<cwd>``); :func:`omp_sessions_directories` has every name omp may use."""
    return os.path.join(_omp_agent_directory(environment), "sessions", _PATH_SEPARATORS.sub("-", cwd))


def _relative_inside(path: str, base: str) -> str | None:
    relative = os.path.relpath(path, base)
    return None if relative == ".." or relative.startswith("../") else relative


def omp_sessions_directories(environment: dict, cwd: str) -> tuple[str, ...]:
    """Every directory omp 18.2.3 may keep ``cwd``'s sessions in (its ``session-paths.ts``): by
    the real cwd's place, ``-<path below $HOME>`` (``-`` for the home itself), else
    ``-tmp-<path below $TMPDIR or /tmp>``, else the legacy ``--<cwd>--`` it still reads and
    migrates from; and the captures' ``-<cwd>``. All lie in omp's one sessions root and name this
    cwd, so no other file can pass for a session."""
    root = os.path.join(_omp_agent_directory(environment), "sessions")
    real = os.path.realpath(cwd)
    names = []
    below_home = _relative_inside(real, os.path.realpath(_home(environment)))
    below_tmp = _relative_inside(real, os.path.realpath(environment.get("TMPDIR") or "/tmp"))
    if below_home is not None:
        names.append("-" if below_home == "." else "-" + _PATH_SEPARATORS.sub("-", below_home))
    elif below_tmp is not None:
        names.append("-tmp" if below_tmp == "." else "-tmp-" + _PATH_SEPARATORS.sub("-", below_tmp))
    names.append("--" + _PATH_SEPARATORS.sub("-", real.lstrip("/")) + "--")
    names.append(_PATH_SEPARATORS.sub("-", cwd))
    return tuple(dict.fromkeys(os.path.join(root, name) for name in names))


def is_session_file_in(session_id: object, directory: str) -> bool:
    """Whether ``session_id`` is an absolute path resolving to a ``*.jsonl`` name directly inside
    ``directory`` (itself resolved) that is a regular file or nothing: a file the store no longer
    holds is the harness's refusal to report (the wrapper's loud fallback), not a foreign id."""
    if not isinstance(session_id, str) or not session_id.startswith("/") or "\0" in session_id:
        return False
    try:
        real = os.path.realpath(session_id)
        inside = os.path.dirname(real) == os.path.realpath(directory)
        return inside and real.endswith(SESSION_FILE_SUFFIX) and (os.path.isfile(real) or not os.path.lexists(real))
    except (OSError, ValueError):
        return False

