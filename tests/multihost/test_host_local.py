"""Nothing host-local ever crosses: with st2's own sync rules, none of b's staging, locks,
control plane, logs or non-replicated records is ever offered by b's Syncthing or written by
a's, and none is found in a's copy — while b runs a supervisor, a DING notifier, record writers
and the bus (docs/records.md §Placement and replicated paths; issue 21)."""

from __future__ import annotations

import signal
import time

import pytest

from multihost_support import host_local, poll_for, two_hosts, write_records
from st2.bus.filename import is_message_filename

pytestmark = pytest.mark.multihost

DING_SHELL = '    argv "sh"\n    env { PS1 ""; HISTFILE "/dev/null"; }\n    ding'


def test_no_staging_lock_or_runtime_file_of_b_ever_appears_on_a():
    with two_hosts(with_declarations=True) as hosts:      # the widest rules: declarations cross too
        hosts.principal("operator", host="a")
        hosts.declare("worker", DING_SHELL, host="b")
        hosts.sync.settle()
        hosts.b.up("--interval", "60s")
        hosts.a.up("--interval", "60s")
        ownership = hosts.b.scope.directory / "ding" / "b.worker.json"
        poll_for(lambda: {"b.worker", "b.worker.ding"} <= set(hosts.b.running()) and ownership.exists(),
                 lambda: f"b's seat and its notifier: {hosts.b.log()}", timeout=60)
        for index in range(3):
            result = hosts.a.st2("message", "send", "b.worker", "--as", "a.operator", "-m", f"m{index}")
            assert result.returncode == 0, result.stderr
        inbox = hosts.b.catalog / "agents" / "b" / "worker" / "resources" / "inbox"
        def arrived() -> list[str]:
            return sorted(path.name for path in inbox.iterdir() if is_message_filename(path.name)) if inbox.exists() else []

        sent = poll_for(lambda: len(arrived()) == 3 and arrived(), "the mail to reach b", timeout=60)
        assert hosts.b.st2("message", "archive", sent[0], "--as", "b.worker").returncode == 0
        assert hosts.b.st2("message", "reply", sent[1], "--as", "b.worker", "-m", "ok").returncode == 0
        write_records(hosts.b.catalog / "agents" / "b" / "worker", "b.worker", int(time.time() * 1000))
        hosts.b.supervisors[-1].send_signal(signal.SIGKILL)     # a dead supervisor's debris too
        hosts.b.supervisors[-1].wait(timeout=30)
        hosts.sync.settle()

        on_b = {str(path.relative_to(hosts.b.catalog)) for path in hosts.b.catalog.rglob("*")}
        b_local = {path for path in on_b if host_local(path)}
        # The proof can fail: b really has host-local files of every kind.
        assert ".st2.b.lock" in b_local and any(path.startswith("logs/b.worker") for path in b_local), b_local
        assert any(path.startswith(".st2/bus-staging") for path in b_local), b_local
        assert any(path.startswith("agents/b/worker/") and path.endswith(".lock") for path in b_local), b_local

        offered = {name for event in hosts.sync.b.audit_events() if event["type"] == "LocalIndexUpdated"
                   for name in event["data"]["filenames"]}
        pulled = {event["data"]["item"] for event in hosts.sync.a.audit_events() if event["type"] == "ItemFinished"}
        assert "agents/b/worker/harness-state" in offered and "agents/b/worker/harness-state" in pulled
        assert not {name for name in offered if host_local(name)}, "b offered host-local files"
        assert not {name for name in pulled if host_local(name)}, "a's syncthing wrote host-local files"
        on_a = {str(path.relative_to(hosts.a.catalog)) for path in hosts.a.catalog.rglob("*")}
        a_local = {path for path in on_a if host_local(path)}
        assert not {path for path in a_local if path.startswith("agents/b/")}, a_local
        assert ".st2.b.lock" not in on_a and not {path for path in on_a if path.startswith("logs/b.")}, a_local
        # What a's copy has of b's seat is exactly the replicated records, resources and declaration.
        seat = {path for path in on_a if path.startswith("agents/b/worker/")}
        assert {path.split("/")[3] for path in seat} == {"agent.kdl", "status", "harness-state", "harness-context", "resources"}, seat
