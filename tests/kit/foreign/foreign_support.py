"""A throwaway source repository, stand-in adapter scripts and a sandbox knob file for the
foreign run's tests. The subject runs in process with an environment mapping built here (no
DELEGATION_KIT_* from the running process), or as the real CLI under the same mapping."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

from st2.kit.foreign import executor


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


class Foreign:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "config", "user.email", "t@example.invalid")
        git(self.repo, "config", "user.name", "t")
        (self.repo / "app.py").write_text("print(1)\n")
        (self.repo / ".gitignore").write_text(".tmp/\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", "base")
        self.head = git(self.repo, "rev-parse", "HEAD").strip()
        self.knobs = root / "delegation-config.knobs"
        self.lines: list[str] = []
        self.knobs.write_text("")
        self.environ = {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "config"), "PATH": os.environ["PATH"],
                        "DELEGATION_KIT_KNOB_FILE": str(self.knobs)}
        self.prompt = root / "audit-7.md"
        self.prompt.write_text("Read app.py and report.\n")
        self.marks = root / "marks"
        self.marks.mkdir()

    def script(self, name: str, body: str) -> str:
        """A stand-in adapter: a bash script whose body is ``body``."""
        path = self.root / f"{name}.sh"
        path.write_text("#!/bin/bash\n" + body + "\n")
        path.chmod(0o755)
        return str(path)

    def knob(self, *lines: str) -> None:
        self.lines.extend(lines)
        self.knobs.write_text("".join(line + "\n" for line in self.lines))

    def adapter(self, name: str, *words: str) -> None:
        self.knob(*(f"DELEGATION_KIT_FOREIGN_ADAPTERS[] = {name}={word}" for word in words))

    def snapshot(self, path: Path, pct: float, resets_in: int = 3600, age: int = 0, long: tuple | None = None) -> None:
        now = int(time.time())
        lines = [f"five_hour_used_pct={pct}", f"five_hour_resets_at={now + resets_in}", f"updated_at={now - age}"]
        if long:
            lines += [f"seven_day_used_pct={long[0]}", f"seven_day_resets_at={now + long[1]}"]
        path.write_text("".join(line + "\n" for line in lines))

    def run_dir(self, key: str = "audit-7") -> Path:
        return self.repo / ".tmp" / "foreign" / key

    def call(self, verb: str, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        status = getattr(executor, verb)(list(argv), environ=self.environ, cwd=str(self.repo), out=out, err=err)
        return status, out.getvalue(), err.getvalue()

    def cli(self, *argv: str) -> tuple[int, str, str]:
        result = subprocess.run([sys.executable, "-m", "st2", "foreign", *argv], cwd=self.repo, capture_output=True,
                                text=True, env=self.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[3])}, timeout=120)
        return result.returncode, result.stdout, result.stderr
