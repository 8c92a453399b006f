"""Carrying a seat's conversation when it moves to another account (another config location).

An account names each harness's own config location through that harness's variable
(:data:`CONFIG_ENV`). A seat moved to another account is relaunched with the other location, and
its recorded harness session (docs/records.md §Resumable session) is resumed there — if that
location can name it. :data:`CARRY` says, per harness, what the lab measured
(tests/drivers/<harness>/test_account_move_lab.py, the pinned builds of tests/lab/harnesses.toml):

- ``"native"``: the harness resumes the conversation from the new location by itself;
- ``"copy"``: it does once st2 has copied the conversation's own session files from the old
  location into the new one (:func:`carry` does, before the relaunch);
- ``None``: carrying was not proved; the relaunched seat starts a fresh conversation.

``carry(harness, session_id, cwd, old_environment, new_environment)`` returns None when the
conversation is carried (copied, already there, or nothing to do), else one line saying why it
cannot be. ``session_id`` is the seat's recorded id and must have its harness's shape
(:mod:`st2.drivers.session_ids`), so no id can name a path outside the store; ``cwd`` is the seat's
working directory (the harness's store is keyed by it); the environments are the harness's before
and after the move (a location missing from one is the harness's default under its ``HOME``).

A copy never replaces anything: a target already holding the same bytes is success, a different
file there is a refusal. Each file is written under a temporary name in its target directory,
fsynced, and put in place by a link that fails if the name appeared meanwhile (a rename that never
replaces; on a file system without hard links, a rename after a last check), then the directory is
fsynced; directories it creates are 0700, files 0600. Standard library only.
"""

from __future__ import annotations

import errno
import os
import re
import secrets

from st2.drivers.session_ids import is_uuid

HARNESSES = ("claude", "codex", "opencode", "pi", "omp")

CONFIG_ENV: dict[str, str | None] = {
    "claude": "CLAUDE_CONFIG_DIR",  # .claude.json, credentials, projects/<cwd>/<session>.jsonl
    "codex": "CODEX_HOME",          # config.toml, auth.json, sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl
    # opencode 1.18.33 keeps credentials (auth.json) and every session (opencode.db, SQLite) under
    # $XDG_DATA_HOME/opencode; OPENCODE_CONFIG_DIR moves its config only, OPENCODE_DB the database only.
    "opencode": "XDG_DATA_HOME",
    "pi": "PI_CODING_AGENT_DIR",    # models.json, auth.json, sessions/--<cwd>--/<file>.jsonl
    # omp 18.2.3 reads PI_CODING_AGENT_DIR for its agent directory (models.yml, agent.db with its
    # credentials, sessions/); st2's omp session guard looks under ~/.omp/agent only.
    "omp": "PI_CODING_AGENT_DIR",
}

CARRY: dict[str, str | None] = {
    # 2.1.197: --resume=<id> under a location without the transcript ends at once (st2 falls back);
    # with projects/<encoded cwd>/<id>.jsonl copied first it resumes that session.
    "claude": "copy",
    # 0.171.0: thread/resume is refused without the rollout; the rollout alone suffices (its SQLite
    # state and history stores are rebuilt from it).
    "codex": "copy",
    # 1.18.33: GET /session/<id> is a 404 under another data home. Its store is one SQLite database
    # (opencode.db with its -wal: the database alone lacks the session) holding every session, so no
    # file is this conversation's; `opencode export <id>` / `opencode import <file>` carried it in a
    # measurement, but that is not a copy of files.
    "opencode": None,
    # 0.73.1: the recorded id is the session file's absolute path under the old location, which the
    # wrapper refuses under the new one (a fresh start), copied file or not; a copy also needs the
    # record's id rewritten to the new path (measured: it then resumes), which carry() cannot do.
    "pi": None,
    # 18.2.3: under PI_CODING_AGENT_DIR its sessions are outside the directories st2's guard reads
    # (st2.drivers.session_ids.omp_sessions_directories), so nothing is recorded to resume.
    "omp": None,
}

DEFAULT_LOCATION = {
    "claude": (".claude",),
    "codex": (".codex",),
    "opencode": (".local", "share"),
    "pi": (".pi", "agent"),
    "omp": (".omp", "agent"),
}

CLAUDE_PROJECT_NAME_MAX = 200  # Claude Code 2.1.197: a longer encoded cwd is cut and suffixed with a hash
CHUNK = 1 << 20
NO_HARD_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV)


class Refused(Exception):
    """A conversation that cannot be carried; the message is the one-line reason."""


def location(harness: str, environment: dict) -> str:
    """The harness's config location under ``environment`` (its variable, else its default)."""
    variable = CONFIG_ENV[harness]
    value = environment.get(variable) if variable else None
    home = environment.get("HOME") or os.path.expanduser("~")
    if value == "~" or (value or "").startswith("~/"):
        value = home + value[1:]
    return os.path.abspath(value or os.path.join(home, *DEFAULT_LOCATION[harness]))


def _claude_files(session_id: str, cwd: str, old: str, new: str) -> list[tuple[str, str]]:
    """``projects/<encoded cwd>/<session id>.jsonl``: the transcript ``--resume`` reads."""
    projects = os.path.join(old, "projects")
    names = []
    for path in dict.fromkeys((cwd, os.path.realpath(cwd))):
        encoded = re.sub(r"[^a-zA-Z0-9]", "-", path)
        if len(encoded) <= CLAUDE_PROJECT_NAME_MAX:
            names.append(encoded)
        else:  # the hash suffix is Claude's own: take the directory it made for this cwd as named
            prefix = encoded[:CLAUDE_PROJECT_NAME_MAX] + "-"
            try:
                names += [name for name in os.listdir(projects) if name.startswith(prefix)
                          and re.fullmatch(r"[0-9a-z]+", name[len(prefix):])]
            except OSError:
                pass
    found = [name for name in dict.fromkeys(names)
             if os.path.isfile(os.path.join(projects, name, session_id + ".jsonl"))]
    if len(found) != 1:
        raise Refused(f"claude: no transcript of session {session_id} for {cwd} under {projects}"
                      if not found else f"claude: session {session_id} has several transcripts under {projects}")
    relative = os.path.join("projects", found[0], session_id + ".jsonl")
    return [(os.path.join(old, relative), os.path.join(new, relative))]


_ROLLOUT_DAY = re.compile(r"\d{4}")


def _codex_files(session_id: str, cwd: str, old: str, new: str) -> list[tuple[str, str]]:
    """``sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl``: the rollout ``thread/resume`` reads."""
    sessions = os.path.join(old, "sessions")
    suffix = f"-{session_id}.jsonl"
    found = []
    for root, directories, files in os.walk(sessions):
        depth = os.path.relpath(root, sessions).count(os.sep) + (root != sessions)
        directories[:] = [name for name in directories if depth < 3 and name.isdigit()]
        found += [os.path.join(root, name) for name in files
                  if depth == 3 and name.startswith("rollout-") and name.endswith(suffix)]
    if len(found) != 1:
        raise Refused(f"codex: no rollout of thread {session_id} under {sessions}" if not found
                      else f"codex: thread {session_id} has several rollouts under {sessions}")
    relative = os.path.relpath(found[0], old)
    return [(found[0], os.path.join(new, relative))]


FILES = {"claude": _claude_files, "codex": _codex_files}
"""Per harness marked ``"copy"``: ``(session_id, cwd, old location, new location) -> [(source, target)]``."""

SHAPES = {"claude": is_uuid, "codex": is_uuid}


def carry(harness: str, session_id: str, cwd: str, old_environment: dict, new_environment: dict) -> str | None:
    """Carry ``harness``'s conversation ``session_id`` (run in ``cwd``) from the config location
    of ``old_environment`` to that of ``new_environment``: None when it is carried, else why not."""
    if harness not in CARRY:
        return f"{harness}: not a harness st2 knows how to move between accounts"
    how = CARRY[harness]
    if how is None:
        return (f"{harness}: carrying a conversation to another config location was not proved in the lab; "
                "the seat starts a fresh session")
    if how == "native":
        return None
    if not SHAPES[harness](session_id):
        return f"{harness}: {session_id!r} is not a {harness} session id; nothing copied"
    old, new = location(harness, old_environment), location(harness, new_environment)
    if os.path.realpath(old) == os.path.realpath(new):
        return None
    try:
        pairs = FILES[harness](session_id, cwd, old, new)
        for source, target in pairs:  # every target checked before any is written
            _check_target(source, target)
        for source, target in pairs:
            copy_file(source, target)
    except Refused as refusal:
        return str(refusal)
    except OSError as error:
        return f"{harness}: copying session {session_id} to {new} failed: {error.strerror or error}"
    return None


def _same_bytes(first: str, second: str) -> bool:
    with open(first, "rb") as one, open(second, "rb") as two:
        while True:
            left, right = one.read(CHUNK), two.read(CHUNK)
            if left != right:
                return False
            if not left:
                return True


def _check_target(source: str, target: str) -> None:
    if not os.path.isfile(source):
        raise Refused(f"the session file {source} is missing; nothing copied")
    if os.path.lexists(target) and not (os.path.isfile(target) and not os.path.islink(target)
                                        and _same_bytes(source, target)):
        raise Refused(f"{target} already exists and differs from {source}; nothing copied")


def _make_directories(directory: str) -> None:
    """Create ``directory`` and its missing parents, each 0700 (whatever the umask)."""
    missing = []
    while not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue
        os.chmod(path, 0o700)


def _fsync_directory(directory: str) -> None:
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def copy_file(source: str, target: str) -> None:
    """Copy ``source`` to ``target`` atomically, never replacing a different file (a target with
    the same bytes is left as is); raise :class:`Refused` or OSError."""
    _check_target(source, target)
    if os.path.lexists(target):
        return
    directory = os.path.dirname(target)
    _make_directories(directory)
    temporary = os.path.join(directory, f".{os.path.basename(target)}.{os.getpid()}.{secrets.token_hex(4)}.carry")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with open(source, "rb") as reading, os.fdopen(descriptor, "wb") as writing:
            descriptor = None
            while chunk := reading.read(CHUNK):
                writing.write(chunk)
            writing.flush()
            os.fsync(writing.fileno())
        stat = os.stat(source)
        os.utime(temporary, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        try:
            os.link(temporary, target)  # fails if the name appeared meanwhile: never a replacement
        except FileExistsError:
            if not (os.path.isfile(target) and _same_bytes(source, target)):
                raise Refused(f"{target} appeared meanwhile and differs from {source}; nothing copied") from None
        except OSError as error:
            if error.errno not in NO_HARD_LINKS:
                raise
            _check_target(source, target)  # a file system without hard links: checked, then renamed
            if not os.path.lexists(target):
                os.rename(temporary, target)
        _fsync_directory(directory)
    finally:
        if descriptor is not None:
            os.close(descriptor)
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
