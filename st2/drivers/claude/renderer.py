"""The operator's downstream status-line renderer: resolution and one run (docs/drivers.md §Status-line tee).

Resolution, two sources in strict order, first hit wins and never both:

1. ``$ST_CLAUDE_STATUSLINE_RENDERER`` — the command itself;
2. ``~/.claude/statusline-renderer.json`` — a file the operator owns (schema
   ``dotfiles.claude-statusline-renderer.v1``); only its ``command`` is read, so a key added
   later is inert here rather than a second source of truth.

An empty variable, an absent ``$HOME``, a missing, unreadable or unparseable file, and an empty
or non-string ``command`` each fall through to the next source. The command runs as a shell
command line (``/bin/sh -c``), exactly as Claude runs its own ``statusLine.command``, with the
payload on its stdin. It is spawned rather than exec'd because the tee has already consumed
stdin to record the reading.

Every failure is the same failure: a renderer that cannot be started and one that exits non-zero
(126 for a file that is not executable) both leave stdout untouched — the second may already
have written a partial line, and a blank row is better than a corrupted one. Standard library
only, and no :mod:`subprocess` (its import is a measurable share of the tee's budget):
``os.posix_spawn`` with two pipes and a ``select.poll`` loop.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Mapping

ENVIRONMENT_VARIABLE = "ST_CLAUDE_STATUSLINE_RENDERER"
FILE_DISPLAY = "~/.claude/statusline-renderer.json"
SHELL = "/bin/sh"


class Resolution(namedtuple("Resolution", ("command", "source", "misses"))):
    __slots__ = ()
    command: str | None
    source: str | None  # which source answered, for diagnostics
    misses: tuple[str, ...]  # why each earlier source fell through


class Outcome(namedtuple("Outcome", ("output", "problem"))):
    __slots__ = ()
    output: bytes | None  # exactly the renderer's stdout when it succeeded, else None
    problem: str | None


def renderer_file(environ: Mapping[str, str]) -> str | None:
    home = environ.get("HOME")
    return os.path.join(home, ".claude", "statusline-renderer.json") if home else None


def resolve(environ: Mapping[str, str]) -> Resolution:
    """Resolve the renderer command (see the module docstring). Never raises."""
    misses: list[str] = []
    command = environ.get(ENVIRONMENT_VARIABLE, "")
    if command.strip():
        return Resolution(command, f"${ENVIRONMENT_VARIABLE}", ())
    misses.append(f"${ENVIRONMENT_VARIABLE} is {'empty' if ENVIRONMENT_VARIABLE in environ else 'unset'}")
    path = renderer_file(environ)
    if path is None:
        misses.append(f"{FILE_DISPLAY} cannot be located ($HOME is unset)")
        return Resolution(None, None, tuple(misses))
    try:
        with open(path, "rb") as handle:
            document = json.loads(handle.read())
    except FileNotFoundError:
        misses.append(f"{FILE_DISPLAY} ({path}) does not exist")
        return Resolution(None, None, tuple(misses))
    except OSError as error:
        misses.append(f"{FILE_DISPLAY} ({path}) is unreadable: {error.strerror or error}")
        return Resolution(None, None, tuple(misses))
    except ValueError:
        misses.append(f"{FILE_DISPLAY} ({path}) is not JSON")
        return Resolution(None, None, tuple(misses))
    command = document.get("command") if isinstance(document, dict) else None
    if isinstance(command, str) and command.strip():
        return Resolution(command, f"{FILE_DISPLAY} ({path})", tuple(misses))
    misses.append(f"{FILE_DISPLAY} ({path}) has no non-empty string \"command\"")
    return Resolution(None, None, tuple(misses))


def run(command: str, payload: bytes, environ: Mapping[str, str]) -> Outcome:
    """Run ``command`` under ``/bin/sh -c`` with ``payload`` on stdin; the renderer's stderr is
    the tee's. Return its stdout when it exited 0, else the problem."""
    import select

    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    try:
        pid = os.posix_spawn(SHELL, [SHELL, "-c", command], dict(environ), file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin_read, 0),
            (os.POSIX_SPAWN_DUP2, stdout_write, 1),
            (os.POSIX_SPAWN_CLOSE, stdin_write),
            (os.POSIX_SPAWN_CLOSE, stdout_read),
        ])
    except OSError as error:
        for descriptor in (stdin_read, stdin_write, stdout_read, stdout_write):
            os.close(descriptor)
        return Outcome(None, f"could not be started: {error.strerror or error}")
    os.close(stdin_read)
    os.close(stdout_write)
    os.set_blocking(stdin_write, False)
    pending = memoryview(payload)
    chunks: list[bytes] = []
    poller = select.poll()
    poller.register(stdout_read, select.POLLIN)
    if pending:
        poller.register(stdin_write, select.POLLOUT)
    else:
        os.close(stdin_write)
        stdin_write = -1
    open_descriptors = {stdout_read} | ({stdin_write} if stdin_write >= 0 else set())
    while stdout_read in open_descriptors:
        for descriptor, _ in poller.poll():
            if descriptor == stdin_write:
                try:
                    pending = pending[os.write(stdin_write, pending):]
                except (BrokenPipeError, BlockingIOError) as error:
                    if isinstance(error, BlockingIOError):
                        continue
                    pending = pending[:0]  # the renderer closed its stdin; it read what it wanted
                if not pending:
                    poller.unregister(stdin_write)
                    os.close(stdin_write)
                    open_descriptors.discard(stdin_write)
            elif descriptor == stdout_read:
                chunk = os.read(stdout_read, 65536)
                if chunk:
                    chunks.append(chunk)
                else:
                    poller.unregister(stdout_read)
                    os.close(stdout_read)
                    open_descriptors.discard(stdout_read)
    if stdin_write in open_descriptors:
        os.close(stdin_write)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return Outcome(None, f"was killed by signal {os.WTERMSIG(status)}")
    code = os.WEXITSTATUS(status)
    if code == 126:
        return Outcome(None, "exited with status 126 (found but not executable)")
    if code == 127:
        return Outcome(None, "exited with status 127 (command not found)")
    if code != 0:
        return Outcome(None, f"exited with status {code}")
    return Outcome(b"".join(chunks), None)
