"""Helpers for the fleet event tests: records written the way their producers publish them
(atomic rename into the seat directory), the journal read back, and an `st2 events --follow`
reader the test owns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from support import REPO, poll_for

HOST = "h"
MINUTE_MS = 60_000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def isolate_usage(fleet) -> None:
    """Point every usage knob into the fleet's temp directory (no real ~/.claude is judged)."""
    base = fleet.base
    (base / "knobs").write_text("")
    (base / "claude.json").write_text("{}")
    for name in [name for name in fleet.env if name.startswith("DELEGATION_KIT_")]:
        fleet.env.pop(name)
    fleet.env.pop("CLAUDE_CONFIG_DIR", None)
    fleet.env.update(HOME=str(base), XDG_CONFIG_HOME=str(base / "config"),
                     DELEGATION_KIT_KNOB_FILE=str(base / "knobs"),
                     DELEGATION_KIT_ACCOUNT_CONFIG=str(base / "claude.json"),
                     DELEGATION_KIT_USAGE_FILE=str(base / "usage" / "usage.txt"),
                     DELEGATION_KIT_CRED_FILE=str(base / "usage" / ".credentials.json"),
                     DELEGATION_KIT_PAUSE_PCT="80", DELEGATION_KIT_STALE_AGE="600")
    (base / "usage").mkdir()


def publish(path: Path, text: str) -> None:
    temporary = path.parent.parent / f".{path.parent.name}.{path.name}.tmp"
    temporary.write_text(text)
    os.replace(temporary, path)


def usage(fleet, pct: str) -> None:
    now = int(time.time())
    publish(fleet.base / "usage" / "usage.txt",
            f"five_hour_used_pct={pct}\nfive_hour_resets_at={now + 3600}\nupdated_at={now}\n")


def state(seat: Path, blocked_on: str = "none", written_at_ms: int | None = None, state_word: str = "active",
          ask: str | None = None, since_ms: int | None = None) -> int:
    written = now_ms() if written_at_ms is None else written_at_ms
    identity = seat.name
    record = {"schema": "st2.harness-state.v1", "agent": identity, "harness": "claude", "state": state_word,
              "blockedOn": blocked_on, "inputBuffer": "empty",
              "ask": ask or ("permission" if blocked_on == "human" else "none"),
              "ptySession": f"{seat.parent.name}.{identity}", "incarnation": "token-1", "seq": 1,
              "sinceMs": since_ms if since_ms is not None else written, "writtenAtMs": written, "transitions": 1}
    publish(seat / "harness-state", json.dumps(record) + "\n")
    return written


def context(seat: Path, percent: float, compactions: int = 0, observed_at_ms: int | None = None) -> int:
    observed = now_ms() if observed_at_ms is None else observed_at_ms
    record = {"schema": "st2.harness-context.v1", "agent": seat.name, "harness": "codex",
              "usedTokens": int(2584 * percent), "windowTokens": 258400, "usedPercent": percent, "model": None,
              "costUsd": None, "sessionTotalTokens": None, "rateLimits": {"fiveHour": None, "sevenDay": None},
              "compactions": compactions, "lastCompactionMs": observed - 10 if compactions else None,
              "lastCompactionTrigger": "auto" if compactions else None, "incarnation": "token-1",
              "observedAtMs": observed, "writtenAtMs": observed}
    publish(seat / "harness-context", json.dumps(record) + "\n")
    return observed


def diagnostic(seat: Path) -> None:
    record = {"schema": "st2.driver-diagnostic.v1", "driver": "codex", "stage": "delivery",
              "reason": "deliveryRejected", "source": "promptTransport", "producerVersion": "0.55.0", "support": "supported",
              "observedAt": now_ms(), "recovery": "clearsOnStageRecovery"}
    publish(seat / "driver-diagnostic", json.dumps(record) + "\n")


def journal_directory(fleet) -> Path:
    return fleet.scope.directory / "events"


def journal_lines(fleet) -> list[dict]:
    """Every complete journal line, both segments, oldest first."""
    lines = []
    for name in ("journal.1", "journal"):
        path = journal_directory(fleet) / name
        if path.exists():
            data = path.read_bytes()
            complete = data[: data.rfind(b"\n") + 1] if b"\n" in data else b""
            lines += [json.loads(line) for line in complete.splitlines() if line.strip()]
    return lines


def kinds(fleet) -> list[tuple]:
    return [(line["kind"], line["seat"], line["from"], line["to"]) for line in journal_lines(fleet)]


def wait_for_events(fleet, count: int, timeout: float = 20) -> list[dict]:
    return poll_for(lambda: len(journal_lines(fleet)) >= count and journal_lines(fleet),
                    lambda: f"{count} journaled events; have {kinds(fleet)}; log:\n{fleet.log()}", timeout=timeout)


def wait_for_engine(fleet, timeout: float = 30) -> None:
    """The engine has taken its baseline once it published its state."""
    poll_for(lambda: (journal_directory(fleet) / "state.json").exists(),
             lambda: f"the event engine's state; log:\n{fleet.log()}", timeout=timeout)


def suspended_seat(fleet, identity: str) -> Path:
    return fleet.seat(identity, '    desired-state "suspended" reason="observed only"\n    argv "sleep" "600"')


class EventsReader:
    """An ``st2 events --follow --json`` process; :meth:`lines` is what it printed so far."""

    def __init__(self, fleet, *arguments: str) -> None:
        self.output = fleet.base / f"follow-{time.monotonic_ns()}.out"
        handle = open(self.output, "w")
        self.process = subprocess.Popen([sys.executable, "-m", "st2", "--host", HOST, "events", "--follow", "--json",
                                         *arguments], stdout=handle, stderr=subprocess.STDOUT, env=fleet.env,
                                        cwd=REPO, start_new_session=True)
        handle.close()

    def lines(self) -> list[str]:
        return [line for line in self.output.read_text().splitlines() if line.startswith("{")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def supervised_seat(fleet, identity: str = "a", *up_arguments: str) -> Path:
    """A suspended seat idle and unblocked, the usage verdict OK, and `st2 up` running with its
    event engine past its baseline: the common start of an event test."""
    seat = suspended_seat(fleet, identity)
    state(seat, "none")
    usage(fleet, "10")
    fleet.up(*up_arguments)
    wait_for_engine(fleet)
    return seat
