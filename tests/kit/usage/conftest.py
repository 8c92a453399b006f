"""A hermetic usage sandbox: the whole DELEGATION_KIT_* namespace stripped from the running
process, the kit defaults seeded as this suite's own literals, and every path (snapshot,
credentials, account config, knob file, history, config homes) inside a temp directory."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from st2.base.clock import SYSTEM_CLOCK, FakeClock

REPO = Path(__file__).resolve().parents[3]
KIT_DEFAULTS = {
    "DELEGATION_KIT_PAUSE_PCT": "80",
    "DELEGATION_KIT_PAUSE_PCT_7D": "95",
    "DELEGATION_KIT_STALE_AGE": "600",
    "DELEGATION_KIT_LOGIN_WINDOW": "600",
    "DELEGATION_KIT_LOGIN_SETTLE": "90",
    "DELEGATION_KIT_REFRESH_MIN_AGE": "60",
    "DELEGATION_KIT_FAN_WIDTH": "2",
}


class UsageSandbox:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, now: int) -> None:
        self.root = root
        self.now = now
        self.usage_file = root / "usage.txt"
        self.credentials = root / ".credentials.json"
        self.account_config = root / "claude.json"
        self.knob_file = root / "delegation-config.knobs"
        self.history = root / "history.log"
        self.account_config.write_text("{}")
        self.knob_file.write_text("")
        for name in [name for name in os.environ if name.startswith("DELEGATION_KIT_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("HOME", str(root))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        monkeypatch.setenv("DELEGATION_KIT_KNOB_FILE", str(self.knob_file))
        monkeypatch.setenv("DELEGATION_KIT_ACCOUNT_CONFIG", str(self.account_config))
        monkeypatch.setenv("DELEGATION_KIT_USAGE_FILE", str(self.usage_file))
        monkeypatch.setenv("DELEGATION_KIT_CRED_FILE", str(self.credentials))
        for name, value in KIT_DEFAULTS.items():
            monkeypatch.setenv(name, value)
        self.monkeypatch = monkeypatch

    def snapshot(self, pct="40", age=0, resets_in=3600, **optional: str) -> bytes:
        lines = [
            f"five_hour_used_pct={pct}",
            f"five_hour_resets_at={self.now + resets_in}",
            f"updated_at={self.now - age}",
        ]
        lines += [f"{key}={value}" for key, value in optional.items()]
        data = ("\n".join(lines) + "\n").encode()
        self.usage_file.write_bytes(data)
        return data

    def login(self, age: int, token: str = "sk-ant-oat01-sandbox") -> None:
        self.credentials.write_text(json.dumps({"claudeAiOauth": {"accessToken": token, "subscriptionType": "max"}}))
        os.utime(self.credentials, (self.now - age, self.now - age))

    def live(self, account: str) -> None:
        self.account_config.write_text(json.dumps({"oauthAccount": {"accountUuid": account}}))

    def knobs(self, *lines: str) -> None:
        self.knob_file.write_text("".join(line + "\n" for line in lines))

    def sampling(self) -> None:
        self.monkeypatch.setenv("DELEGATION_KIT_USAGE_HISTORY", str(self.history))

    def verdict(self, *args: str) -> tuple[str, int]:
        from st2.kit.usage.verdict import verdict

        return verdict(list(args), now=self.now, stderr=io.StringIO())

    def run(self, *args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        """The real `st2` entry point as a subprocess, stdout and stderr kept apart."""
        return subprocess.run(
            [sys.executable, "-m", "st2", *args],
            capture_output=True, text=True, env=dict(os.environ), cwd=REPO, timeout=timeout,
            input=input, stdin=None if input is not None else subprocess.DEVNULL,
        )

    def run_merged(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """The real `st2` entry point with stderr merged into stdout, as a relaying caller sees it."""
        return subprocess.run(
            [sys.executable, "-m", "st2", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ), cwd=REPO,
            timeout=timeout,
        )


@pytest.fixture
def usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UsageSandbox:
    """In-process sandbox on a FakeClock reading (the verdict takes ``now`` injected)."""
    return UsageSandbox(tmp_path, monkeypatch, FakeClock().wall_ms() // 1000)


@pytest.fixture
def usage_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UsageSandbox:
    """Sandbox for subprocess runs, whose verdict reads the real clock: stamps are written
    relative to one real reading, with margins far wider than a run takes (no sleeping)."""
    return UsageSandbox(tmp_path, monkeypatch, SYSTEM_CLOCK.wall_ms() // 1000)
