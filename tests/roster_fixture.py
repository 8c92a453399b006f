"""A catalog holding every record state the roster projects: one seat per reader arm."""

from __future__ import annotations

import json
import os
from pathlib import Path

from st2.resources import state as resource_state

NOW_MS = 1_788_000_100_000
MINUTE_MS = 60_000


def _seat(root: Path, host: str, identity: str, declaration: str) -> Path:
    seat = root / "agents" / host / identity
    (seat / "resources" / "inbox").mkdir(parents=True)
    (seat / "resources" / "archive").mkdir(parents=True)
    (seat / "agent.kdl").write_text(declaration)
    return seat


def _json(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record) + "\n")


def state_record(identity: str, state: str, written_at_ms: int, **fields) -> dict:
    record = {
        "schema": "st2.harness-state.v1", "agent": identity, "harness": "claude", "state": state,
        "blockedOn": "none", "inputBuffer": "empty", "ask": "none",
        "ptySession": f"alpha.{identity}", "incarnation": "token-1", "seq": 1,
        "sinceMs": written_at_ms, "writtenAtMs": written_at_ms, "transitions": 2,
    }
    record.update(fields)
    return record


def context_record(identity: str, harness: str, observed_at_ms: int, **fields) -> dict:
    record = {
        "schema": "st2.harness-context.v1", "agent": identity, "harness": harness,
        "usedTokens": 92283, "windowTokens": 258400, "usedPercent": 33, "model": None,
        "costUsd": None, "sessionTotalTokens": 2235329,
        "rateLimits": {"fiveHour": 31, "sevenDay": 55}, "compactions": 3,
        "lastCompactionMs": 1788000097290, "lastCompactionTrigger": "unknown",
        "incarnation": "token-1", "observedAtMs": observed_at_ms, "writtenAtMs": observed_at_ms,
    }
    record.update(fields)
    return record


def _resource_state(seat: Path, agent: str, binding: str, uri: str, observed_ms: int, failure) -> None:
    facts = {"branch": "main", "dirty": False}
    record = resource_state.State(agent, binding, uri, 1, 1, resource_state.digest_facts(facts), observed_ms, facts,
                                  failure, observed_ms if failure is None else failure.at_ms)
    (seat / "resource-state").mkdir()
    (seat / "resource-state" / f"{binding}.json").write_bytes(resource_state.encode(record))


def build(root: Path) -> Path:
    """Write the fixture catalog under ``root`` and return it."""
    # fresh: every axis fresh and definite.
    fresh = _seat(root, "alpha", "a-fresh",
                  'agent "a-fresh" {\n    name "Fresh"\n    argv "sh" "-c" "true"\n'
                  '    resource "spec" uri="file:///srv/spec.md" reason="the contract"\n}\n')
    (fresh / "status").write_text(f"busy\nv1 {NOW_MS - 1000}\n")
    _json(fresh / "harness-state", state_record("a-fresh", "idle", NOW_MS - 5000))
    _json(fresh / "harness-context", context_record("a-fresh", "codex", NOW_MS - 4210))
    # its resource binding: observed once, then its last observation failed.
    _resource_state(fresh, "alpha.a-fresh", "spec", "file:///srv/spec.md", NOW_MS - 30_000,
                    resource_state.Failure("provider-failed", "/srv/spec.md is not UTF-8 text", NOW_MS - 2000))
    (fresh / "resources" / "inbox" / "1788000000000-abcdef.md").write_text("---\nfrom: x\n---\nhi\n")
    (fresh / "resources" / "inbox" / "1788000000001-bcdefg.md").write_text("---\nfrom: x\n---\nsettled\n")
    (fresh / "resources" / "archive" / "1788000000001-bcdefg.md").write_text("---\nfrom: x\n---\nsettled\n")
    for name in ("1788000000000-abcdef.md", "1788000000001-bcdefg.md"):
        for folder in ("inbox", "archive"):
            path = fresh / "resources" / folder / name
            if path.exists():
                os.utime(path, ns=((NOW_MS - 9000) * 1_000_000,) * 2)

    # stale: presence, observed state and context all old; context survives as stale, unclamped.
    stale = _seat(root, "alpha", "b-stale", 'agent "b-stale" {\n    argv "sh" "-c" "true"\n'
                  '    resource "notes" uri="git:///srv/notes"\n}\n')
    _resource_state(stale, "alpha.b-stale", "notes", "git:///srv/notes", NOW_MS - 2 * 60 * MINUTE_MS, None)
    (stale / "status").write_text(f"available\nv1 {NOW_MS - 16 * MINUTE_MS}\n")
    _json(stale / "harness-state", state_record("b-stale", "active", NOW_MS - 20 * MINUTE_MS))
    _json(stale / "harness-context", context_record(
        "b-stale", "pi", NOW_MS - 61 * MINUTE_MS, usedTokens=23425, windowTokens=4000, usedPercent=585.6,
        sessionTotalTokens=None, rateLimits={"fiveHour": None, "sevenDay": None}, compactions=1,
        lastCompactionTrigger="some-future-word"))

    # legacy: a bare presence word aged by mtime; future-skewed state and context; a failure.
    legacy = _seat(root, "alpha", "c-legacy", 'agent "c-legacy" {\n    argv "sh" "-c" "true"\n}\n')
    (legacy / "status").write_text("dnd\n")
    os.utime(legacy / "status", ns=((NOW_MS - MINUTE_MS) * 1_000_000,) * 2)
    _json(legacy / "harness-state", state_record("c-legacy", "idle", NOW_MS + 2 * MINUTE_MS))
    _json(legacy / "harness-context", context_record("c-legacy", "claude", NOW_MS + 2 * MINUTE_MS))
    _json(legacy / "driver-diagnostic", {
        "schema": "st2.driver-diagnostic.v1", "driver": "codex", "stage": "delivery",
        "reason": "deliveryRejected", "source": "promptTransport", "producerVersion": "0.55.0",
        "support": "supported", "observedAt": NOW_MS - 2500, "recovery": "clearsOnStageRecovery"})

    # garbage: every record unreadable in its own way.
    garbage = _seat(root, "alpha", "d-garbage", 'agent "d-garbage" {\n    argv "sh" "-c" "true"\n}\n')
    (garbage / "status").write_text("sleeping\n")
    (garbage / "harness-state").write_bytes(b"\xff not json")
    _json(garbage / "harness-context", context_record("d-garbage", "codex", NOW_MS, schema="com.example.harness-context.v1"))
    (garbage / "driver-diagnostic").write_text("{\"schema\": 1}\n")

    # suspended: blocked on a human while suspended; the context withholds its percent.
    suspended = _seat(root, "alpha", "e-suspended",
                      'agent "e-suspended" {\n    desired-state "suspended" reason="waiting for CI"\n'
                      '    argv "sh" "-c" "true"\n}\n')
    _json(suspended / "harness-state", state_record("e-suspended", "active", NOW_MS - 1000,
                                                    blockedOn="human", ask="permission"))
    _json(suspended / "harness-context", context_record(
        "e-suspended", "claude", NOW_MS - 1000, usedTokens=None, windowTokens=200000, usedPercent=None,
        sessionTotalTokens=None, compactions=0, lastCompactionMs=None, lastCompactionTrigger=None,
        model="claude-opus-4", costUsd=0.42))

    # retired, on another host, with a declared id and address; the session ended.
    retired = _seat(root, "beta", "f-retired",
                    'agent "f-retired" {\n    id "agent-0007"\n    address "archivist"\n'
                    '    desired-state "retired" reason="replaced"\n    argv "sh" "-c" "true"\n}\n')
    _json(retired / "harness-state", state_record("f-retired", "ended", NOW_MS - 1000, exit="exit 0"))
    return root
