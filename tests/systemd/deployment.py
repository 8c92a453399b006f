"""st2 deployed into a private user manager the way an operator deploys it: a catalog, then
`st2 service install` (the real CLI) into the manager's unit directory. The only test-specific
additions are drop-ins: service output to files (there is no journald) and, where a test says
so, shorter timings or a mutated setting."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil

from private_manager import PrivateManager
from support import poll_for
from support import run_st2

ST2 = str(Path(sys.executable).parent / "st2")
HOST = "h"
SERVICES = ("st2.service", "st2-usage-poll.service", "st2-ding@.service")


class Deployment:
    def __init__(self, manager: PrivateManager) -> None:
        self.manager = manager
        self.catalog = manager.base / "catalog"
        (self.catalog / "agents" / HOST).mkdir(parents=True)
        (self.catalog / "catalog.kdl").write_text('catalog {\n    archive-after "7d"\n}\n')

    def declare(self, identity: str, body: str) -> None:
        directory = self.catalog / "agents" / HOST / identity
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')

    def environment(self, **extra: str) -> dict[str, str]:
        return self.manager.environment(CATALOG=str(self.catalog), **extra)

    def install(self, *options: str) -> None:
        result = run_st2("service", "install", "--catalog", str(self.catalog), "--host", HOST, "--st2", ST2,
                         "--unit-dir", str(self.manager.unit_directory), *options, env=self.environment())
        assert result.returncode == 0, result.stderr
        for unit in SERVICES:
            log = self.manager.logs / unit.replace("@", "-at-").replace(".service", ".log")
            self.manager.drop_in(unit, "output", f"[Service]\nStandardOutput=append:{log}\nStandardError=inherit\n")
        self.reload()

    def reload(self) -> None:
        self.manager.systemctl("daemon-reload")

    def log(self, unit: str) -> str:
        path = self.manager.logs / unit.replace("@", "-at-").replace(".service", ".log")
        return path.read_text() if path.exists() else ""

    def tasks(self) -> dict:
        result = run_st2("tasks", "--json", "--catalog", str(self.catalog), "--host", HOST, env=self.environment())
        return json.loads(result.stdout) if result.stdout.startswith("{") else {}

    def running_tasks(self, runtime_ids: list[str], timeout: float = 60) -> dict[str, psutil.Process]:
        """Wait until every runtime id runs; return its process (pid + start time pinned)."""

        def running():
            rows = {row["runtimeId"]: row["runtime"] for row in self.tasks().get("tasks", [])}
            if all(rows.get(name, {}).get("state") == "running" for name in runtime_ids):
                return {name: psutil.Process(rows[name]["pid"]) for name in runtime_ids}
            return None

        found = poll_for(running, timeout=timeout, step=0.3)
        assert found, f"tasks {runtime_ids} never all ran: {self.tasks()}\n{self.log('st2.service')}"
        return found


def alive(process: psutil.Process) -> bool:
    """The same process (pid and start time) still exists and is not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
