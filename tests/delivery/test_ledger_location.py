"""Where a native seat's delivery ledger lives (st2.delivery.ledger.ledger_location): in the
session store beside the runtime scope, so a reboot — which makes the scope meaningless — keeps
it; a ledger an earlier build left in the scope is carried there once, byte for byte, by the
explicit migration a session runs at its start (st2.delivery.ledger.carry_from_scope), never by
the getter."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from st2.delivery import ledger as L
from st2.runtime.resumable_session import SessionStore

RUNTIME_ID = "h.coder"


def scope_of(tmp_path: Path) -> Path:
    scope = tmp_path / "state" / "st2" / "scopes" / "0123abcd" / "h"
    scope.mkdir(parents=True)
    return scope


def old_ledger(scope: Path, data: bytes) -> Path:
    path = scope / "delivery" / RUNTIME_ID / "delivery-ledger.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_the_ledger_lives_in_the_session_store_beside_the_scope(tmp_path: Path) -> None:
    scope = scope_of(tmp_path)
    path, staging = L.ledger_location(scope, RUNTIME_ID)
    store = tmp_path / "state" / "st2" / "sessions" / "0123abcd" / "h"
    assert path == store / "delivery" / RUNTIME_ID / "delivery-ledger.json"
    assert staging == SessionStore.beside(scope).staging == store / "staging"
    # A save there survives the scope's removal (what a reboot does to it).
    ledger = L.Ledger.load(path, staging, L.CODEX, RUNTIME_ID, RUNTIME_ID)
    ledger.begin(["1700000000000-abc123.md"], "thr_1")
    import shutil

    shutil.rmtree(tmp_path / "state" / "st2" / "scopes")
    again = L.Ledger.load(*L.ledger_location(scope_of(tmp_path), RUNTIME_ID), L.CODEX, RUNTIME_ID, RUNTIME_ID)
    assert again.get("1700000000000-abc123.md").phase is L.Phase.ATTEMPTED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(staging) == []


def test_a_ledger_left_in_the_scope_is_carried_once_byte_for_byte(tmp_path: Path) -> None:
    scope = scope_of(tmp_path)
    data = L.encode(L.CODEX, RUNTIME_ID, RUNTIME_ID, [])
    old = old_ledger(scope, data)
    L.carry_from_scope(scope, RUNTIME_ID)
    path, staging = L.ledger_location(scope, RUNTIME_ID)
    assert path.read_bytes() == data and not old.exists()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and os.listdir(staging) == []
    # One in the store already wins; the scope's is stale and removed.
    stale = old_ledger(scope, b"{stale")
    L.carry_from_scope(scope, RUNTIME_ID)
    assert path.read_bytes() == data and not stale.exists()


def test_a_malformed_carried_ledger_is_quarantined_where_it_now_lives(tmp_path: Path) -> None:
    scope = scope_of(tmp_path)
    old_ledger(scope, b"{garbage")
    L.carry_from_scope(scope, RUNTIME_ID)
    path, staging = L.ledger_location(scope, RUNTIME_ID)
    assert path.read_bytes() == b"{garbage"
    with pytest.raises(L.Quarantined):
        L.Ledger.load(path, staging, L.CODEX, RUNTIME_ID, RUNTIME_ID)
    assert path.read_bytes() == b"{garbage"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_anything_but_a_regular_file_in_the_scope_is_left_alone(tmp_path: Path, kind: str) -> None:
    scope = scope_of(tmp_path)
    old = scope / "delivery" / RUNTIME_ID / "delivery-ledger.json"
    old.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_bytes(L.encode(L.CODEX, RUNTIME_ID, RUNTIME_ID, []))
    if kind == "symlink":
        old.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(old)
    else:
        old.mkdir()
    L.carry_from_scope(scope, RUNTIME_ID)
    path, _ = L.ledger_location(scope, RUNTIME_ID)
    assert not path.exists() and os.path.lexists(old)


def test_the_getter_moves_nothing(tmp_path: Path) -> None:
    scope = scope_of(tmp_path)
    old = old_ledger(scope, L.encode(L.CODEX, RUNTIME_ID, RUNTIME_ID, []))
    before = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    path, staging = L.ledger_location(scope, RUNTIME_ID)
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")) == before
    assert old.exists() and not path.exists() and not staging.exists()
