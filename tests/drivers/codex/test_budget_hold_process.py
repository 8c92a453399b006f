"""The Codex pump under a budget hold (docs/accounts.md §Budget-held delivery): the real wrapper
around the stand-in app-server, its seat launched on an account that says ``hold-on-pause`` and
whose snapshot reads PAUSE. The pump asks for no batch (no ledger entry, no turn) while the hold
stands, and once the snapshot is rewritten to a reset window every held message is delivered
once, in send order."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from codex_support import HOST, Wrapper, make_seat, poll_for, record, write_message

from st2.delivery import budget
from st2.drivers.codex.pump import correlations_in
from st2.runtime import layout
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope

pytestmark = pytest.mark.process


def usage(path: Path, used: str, resets_in: int) -> None:
    now = int(time.time())
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"five_hour_used_pct={used}\nfive_hour_resets_at={now + resets_in}\nupdated_at={now}\n")
    os.replace(temporary, path)


def on_account(catalog: Path, tmp_path: Path, account: str, hold_on_pause: bool, usage_file: Path) -> None:
    """What the supervisor leaves for the wrapper: the seat's launch record naming ``account``
    and the account's published budget record."""
    scope = RuntimeScope(Path(os.path.abspath(catalog)), HOST, tmp_path / "state" / "st2")
    scope.ensure()
    scope.tasks.mkdir(parents=True, exist_ok=True)
    launched = LaunchRecord(runtime_id=f"{HOST}.coder", kind="exec", pid=os.getpid(), start_time=1.0,
                            created_at="2027-01-15T08:00:00Z", generation_id="g", argv_digest="d",
                            launched_at_ms=int(time.time() * 1000), supervisor_pid=os.getpid(), account=account)
    (scope.tasks / f"{HOST}.coder.json").write_bytes(launched.to_json())
    path = Path(layout.account_budget(str(scope.directory), account))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(budget.record_bytes(account, hold_on_pause, str(usage_file), "80", "95", 600))


def phases(tmp_path: Path, catalog: Path) -> dict:
    """The seat's delivery-ledger entries, filename -> phase (none before the first batch)."""
    from st2.runtime.resumable_session import SessionStore

    scope = RuntimeScope(Path(os.path.abspath(catalog)), HOST, tmp_path / "state" / "st2")
    path = SessionStore.beside(scope.directory).directory / "delivery" / f"{HOST}.coder" / "delivery-ledger.json"
    try:
        body = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {entry["filename"]: entry["phase"] for entry in body["entries"]}


def delivered(wrapper: Wrapper) -> list[str]:
    """The message filenames the app-server was given, in turn order (each correlation names one)."""
    names = []
    for text in wrapper.history():
        names += [correlation.split(":")[1] for correlation in sorted(correlations_in(text),
                                                                        key=lambda item: text.index(item))]
    return names


def test_the_pump_asks_for_no_batch_while_its_account_budget_holds_and_delivers_once_after_the_reset(
        catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    usage_file = tmp_path / "usage.txt"
    usage(usage_file, "91", 3600)
    on_account(catalog, tmp_path, "main", True, usage_file)
    wrapper = Wrapper(catalog, tmp_path, env={"ST2_ACCOUNT": "main"})   # as `st2 up` launches it on the account
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        names = [write_message(seat, "first")]
        poll_for(lambda: "delivery held: the seat's account budget is PAUSEd" in wrapper.text(), "the hold to be said")
        names.append(write_message(seat, "second"))   # a wake-up during the hold: still no batch
        assert wrapper.history() == [] and phases(tmp_path, catalog) == {}   # unread and unowned
        assert sorted(os.listdir(seat / "resources" / "inbox")) == names
        usage(usage_file, "3", 18000)                 # the window reset
        poll_for(lambda: all(phases(tmp_path, catalog).get(name) == "consumed" for name in names),
                 "delivery after the reset", timeout=15)   # well inside the 30 s audit: the 2 s re-check lifts it
        assert [name[:-3] for name in names] == delivered(wrapper)   # once each, in send order
    finally:
        assert wrapper.stop() in (0, 128 + signal.SIGTERM, 143 - 128)


def test_without_hold_on_pause_a_paused_account_holds_nothing(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    usage_file = tmp_path / "usage.txt"
    usage(usage_file, "91", 3600)
    on_account(catalog, tmp_path, "main", False, usage_file)
    wrapper = Wrapper(catalog, tmp_path, env={"ST2_ACCOUNT": "main"})   # as `st2 up` launches it on the account
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        name = write_message(seat, "go")
        poll_for(lambda: phases(tmp_path, catalog).get(name) == "consumed", "delivery", timeout=30)
        assert "delivery held" not in wrapper.text()
    finally:
        wrapper.stop()
