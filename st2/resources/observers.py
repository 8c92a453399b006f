"""The three built-in observations: ``file:``, ``git:`` and ``cmd:`` (docs/resources.md
§Providers).

Each takes the ``target`` the host put in its ``Observe`` and returns the facts it saw, or
raises :class:`ObservationFailed` with a one-line reason. Facts are flat typed scalars
(:func:`st2.resources.state.check_facts`); every text is bounded so the host's payload bound is
never the first to notice.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time

from st2.base.digest import sha256
from st2.fs.read import NotRegular, TooLarge, read_bounded

CONTENT_LIMIT = 48 * 1024
"""A ``file:`` binding's content, and a ``cmd:`` binding's stdout, are at most this many bytes."""


class ObservationFailed(Exception):
    """The observation could not be made; the text is the one line the host records."""


def observe_file(target: dict) -> dict:
    """``{exists, size, contentSha256, content}`` of the file at ``target["path"]`` (a missing
    file is a fact, ``exists: false``; a FIFO, an oversized or non-UTF-8 file fails)."""
    path = target.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ObservationFailed("the target names no absolute path")
    try:
        data = read_bounded(path, CONTENT_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return {"exists": False, "size": None, "contentSha256": None, "content": None}
    except TooLarge:
        raise ObservationFailed(f"{path} is larger than the bound of {CONTENT_LIMIT} bytes") from None
    except NotRegular:
        raise ObservationFailed(f"{path} is not a regular file") from None
    except OSError as error:
        raise ObservationFailed(f"{path}: {error.strerror or error}") from None
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ObservationFailed(f"{path} is not UTF-8 text") from None
    return {"exists": True, "size": len(data), "contentSha256": sha256(data).hexdigest(), "content": content}


def observe_git(target: dict) -> dict:
    """``{branch, head, detached, dirty, upstream, ahead, behind}`` of the repository at
    ``target["path"]``, from one ``git status --porcelain=v2 --branch`` (through the one git seam)."""
    from st2.worktree.git import git

    path = target.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ObservationFailed("the target names no absolute path")
    if not os.path.isdir(path):
        raise ObservationFailed(f"{path} is not a directory")
    result = git(path, "status", "--porcelain=v2", "--branch", "--untracked-files=normal", timeout=20.0)
    if not result.ok:
        raise ObservationFailed(f"git status in {path}: {result.refusal()}")
    facts = {"branch": None, "head": None, "detached": False, "dirty": False, "upstream": None,
             "ahead": None, "behind": None}
    for line in result.stdout.splitlines():
        if line.startswith("# branch.oid "):
            oid = line[len("# branch.oid "):]
            facts["head"] = None if oid == "(initial)" else oid
        elif line.startswith("# branch.head "):
            head = line[len("# branch.head "):]
            facts["detached"] = head == "(detached)"
            facts["branch"] = None if facts["detached"] else head
        elif line.startswith("# branch.upstream "):
            facts["upstream"] = line[len("# branch.upstream "):]
        elif line.startswith("# branch.ab "):
            ahead, _, behind = line[len("# branch.ab "):].partition(" ")
            facts["ahead"], facts["behind"] = int(ahead.lstrip("+")), int(behind.lstrip("-"))
        elif line and not line.startswith("#"):
            facts["dirty"] = True
    return facts


def observe_command(target: dict) -> dict:
    """``{exitCode, stdout}`` of ``target["argv"]`` (from ``catalog.kdl``'s ``resource-command``)
    run in its own process group with no stdin, killed past ``target["timeoutSeconds"]``; stdout
    past :data:`CONTENT_LIMIT`, a non-zero exit or non-UTF-8 output fails."""
    argv = target.get("argv")
    timeout = target.get("timeoutSeconds")
    if not isinstance(argv, list) or not argv or not all(isinstance(word, str) for word in argv):
        raise ObservationFailed("the target names no command")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ObservationFailed("the target names no timeout")
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as error:
        raise ObservationFailed(f"cannot run {argv[0]}: {error.strerror or error}") from None
    try:
        stdout, stderr, why = _bounded_output(process, float(timeout))
    finally:
        _end_group(process)
    if why is not None:
        raise ObservationFailed(f"{argv[0]}: {why}")
    if process.returncode != 0:
        tail = stderr.decode("utf-8", "replace").strip().splitlines()
        raise ObservationFailed(f"{argv[0]} exited {process.returncode}" + (f": {tail[-1][:200]}" if tail else ""))
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ObservationFailed(f"{argv[0]} wrote output that is not UTF-8") from None
    return {"exitCode": 0, "stdout": text}


def _bounded_output(process: subprocess.Popen, timeout: float) -> tuple[bytes, bytes, str | None]:
    """Read stdout (at most :data:`CONTENT_LIMIT`) and a stderr tail until both close and the
    process exits, or until the deadline or the bound is passed (then say why)."""
    deadline = time.monotonic() + timeout
    stdout, stderr = bytearray(), bytearray()
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ, stdout)
    selector.register(process.stderr, selectors.EVENT_READ, stderr)
    try:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(stdout), bytes(stderr), f"ran past its timeout of {timeout:g}s; killed"
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fileobj.fileno(), 64 * 1024)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if key.data is stderr and len(stderr) > 4096:
                    del stderr[:-4096]
                if len(stdout) > CONTENT_LIMIT:
                    return bytes(stdout), bytes(stderr), f"wrote more than the bound of {CONTENT_LIMIT} bytes"
        remaining = max(0.0, deadline - time.monotonic())
        try:
            process.wait(remaining)
        except subprocess.TimeoutExpired:
            return bytes(stdout), bytes(stderr), f"ran past its timeout of {timeout:g}s; killed"
        return bytes(stdout), bytes(stderr), None
    finally:
        selector.close()


def _end_group(process: subprocess.Popen) -> None:
    """Kill what is left of the command's own process group, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for stream in (process.stdout, process.stderr):
        stream.close()
    process.wait()


OBSERVERS = {"file": observe_file, "git": observe_git, "cmd": observe_command}
