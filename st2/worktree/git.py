"""The one seam through which st2 runs ``git`` for worktrees.

Every call is ``git -C <directory> …`` with a bounded time, no prompt and the C locale (st2
parses only porcelain output, but git's one-line refusals are quoted to the operator), and
without the caller's ``GIT_*`` variables: a ``GIT_DIR`` or ``GIT_WORK_TREE`` inherited from the
shell that ran ``st2 up`` would point every call at another repository.
"""

from __future__ import annotations

import os
import subprocess
from typing import NamedTuple

TIMEOUT_SECONDS = 60.0


class Result(NamedTuple):
    status: int        # git's exit status; -1 when it could not run or ran past the bound
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    def refusal(self) -> str:
        """git's own reason, one line: its first ``fatal:``/``error:`` line, else the first line."""
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        for line in lines:
            if line.startswith(("fatal:", "error:")):
                return line
        return lines[0] if lines else f"git exited {self.status}"


def environment() -> dict[str, str]:
    clean = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    clean.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    return clean


def git(directory: str, *arguments: str, timeout: float = TIMEOUT_SECONDS) -> Result:
    """Run ``git -C directory arguments…``; never raises."""
    try:
        completed = subprocess.run(["git", "-C", directory, *arguments], capture_output=True, text=True,
                                   errors="surrogateescape", timeout=timeout, env=environment(),
                                   stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Result(-1, "", f"fatal: git {arguments[0] if arguments else ''} ran past {timeout:g} s")
    except OSError as error:
        return Result(-1, "", f"fatal: cannot run git: {error.strerror or error}")
    return Result(completed.returncode, completed.stdout, completed.stderr)
