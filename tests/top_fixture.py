"""A fixed catalog for the fleet view: a normal seat, one blocked on a human, a parked seat (its
task parked for crash-looping), stale records, unread mail — on a pinned clock, with a usage
snapshot and history so the header's gauges and sparkline are deterministic."""

from __future__ import annotations

import json
import os
from pathlib import Path

from roster_fixture import MINUTE_MS, context_record, state_record

NOW_MS = 1_788_000_100_000
NOW = NOW_MS // 1000
HOST = "alpha"


def _seat(root: Path, identity: str, body: str = "", host: str = HOST) -> Path:
    seat = root / "agents" / host / identity
    (seat / "resources" / "inbox").mkdir(parents=True)
    (seat / "resources" / "archive").mkdir(parents=True)
    (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh" "-c" "true"\n{body}}}\n')
    return seat


def _json(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record) + "\n")


def build(root: Path) -> Path:
    """The catalog under ``root / "catalog"``; returns it."""
    catalog = root / "catalog"
    normal = _seat(catalog, "builder", '    name "Builds things"\n')
    (normal / "status").write_text(f"busy\nv1 {NOW_MS - 1000}\n")
    _json(normal / "harness-state", state_record("builder", "active", NOW_MS - 2000))
    _json(normal / "harness-context", context_record("builder", "claude", NOW_MS - 2000, usedPercent=71, compactions=2))
    (normal / "resources" / "inbox" / f"{NOW_MS - 5 * MINUTE_MS}-abcdef.md").write_text("---\nfrom: alpha.operator\nsubject: hi\n---\nhello\n")
    (normal / "resources" / "inbox" / f"{NOW_MS - 1 * MINUTE_MS}-bcdefg.md").write_text("---\nfrom: alpha.operator\n---\nagain\n")

    asking = _seat(catalog, "reviewer")
    (asking / "status").write_text(f"available\nv1 {NOW_MS - 1000}\n")
    _json(asking / "harness-state", state_record("reviewer", "active", NOW_MS - 1000, blockedOn="human", ask="permission"))
    _json(asking / "harness-context", context_record("reviewer", "claude", NOW_MS - 1000, usedPercent=12, compactions=0))

    parked = _seat(catalog, "flaky")
    (parked / "status").write_text(f"offline\nv1 {NOW_MS - 1000}\n")
    _json(parked / "harness-state", state_record("flaky", "ended", NOW_MS - 3000, exit="exit 1"))

    stale = _seat(catalog, "sleeper")
    (stale / "status").write_text(f"available\nv1 {NOW_MS - 16 * MINUTE_MS}\n")
    _json(stale / "harness-state", state_record("sleeper", "idle", NOW_MS - 20 * MINUTE_MS))
    _json(stale / "harness-context", context_record("sleeper", "codex", NOW_MS - 61 * MINUTE_MS, usedPercent=96, compactions=5))

    _seat(catalog, "remote", host="beta")
    for path in (catalog / "agents").rglob("*"):  # record ages read against the pinned clock
        if path.is_file():
            age_ms = int(path.name[:13]) if path.name[:13].isdigit() else NOW_MS - 2000
            os.utime(path, ns=(age_ms * 1_000_000,) * 2)
    return catalog


def usage_environment(root: Path, sampling: bool = True) -> dict[str, str]:
    """Knobs naming a usage snapshot (5h at 42 %, 7d at 63 %) and, with ``sampling``, a history."""
    usage = root / "usage.txt"
    usage.write_text(f"five_hour_used_pct=42\nfive_hour_resets_at={NOW + 3600}\nupdated_at={NOW - 30}\n"
                     f"seven_day_used_pct=63\nseven_day_resets_at={NOW + 86400}\n")
    environ = {"HOME": str(root), "DELEGATION_KIT_USAGE_FILE": str(usage),
               "DELEGATION_KIT_CRED_FILE": str(root / "no-credentials.json"),
               "DELEGATION_KIT_ACCOUNT_CONFIG": str(root / "no-account.json"),
               "XDG_CONFIG_HOME": str(root / "config")}
    if sampling:
        history = root / "usage-history.log"
        history.write_text("".join(f"updated_at={NOW - 3600 * 5 + index * 600} pct={index * 1.4:.1f} "
                                   f"resets_at={NOW + 3600} verdict=OK login_at=0\n" for index in range(30)))
        environ["DELEGATION_KIT_USAGE_HISTORY"] = str(history)
    return environ


def inventory_envelope(location) -> dict:
    """The ``st2.task-inventory.v1`` envelope of this catalog with flaky's task parked for
    crash-looping (the shape :func:`st2.supervisor.inventory.inventory` emits), for the
    rendering tests; the unpark proof runs the real supervisor instead."""
    def task(agent: str, state: str, parked=None) -> dict:
        running = state == "running"
        return {"agent": f"{HOST}.{agent}", "task": "agent", "runtimeId": f"{HOST}.{agent}", "kind": "pty", "lifecycle": "service",
                "retired": False, "desiredState": "running", "agentDesiredState": "running",
                "agentDesiredStateReason": None,
                "runtime": {"state": state, "pid": 4242 if running else None, "createdAt": None, "generationId": None,
                            "error": None},
                "parked": parked, "admission": None}
    return {"schema": "st2.task-inventory.v1", "catalog": str(location.root), "host": HOST, "complete": True,
            "errors": [], "tasks": [
                task("builder", "running"), task("reviewer", "running"),
                task("flaky", "exited", {"reason": "exited 5 times within 60s (restart mode fail)", "parkedAtMs": NOW_MS - 9000,
                                         "supervisorPid": 4243, "recovery": ["st2", "unpark", f"{HOST}.flaky"]}),
                task("sleeper", "running")]}
