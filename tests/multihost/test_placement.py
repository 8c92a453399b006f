"""A seat's host is part of its path: each host's `st2 up` launches only its own host's seats,
whatever the engine carries, in both declaration modes (issue 21, docs/records.md §Placement and replicated paths)."""

from __future__ import annotations

import pytest

from multihost_support import poll_for, two_hosts

pytestmark = pytest.mark.multihost

SHELL = '    argv "sh"'


@pytest.mark.parametrize("with_declarations", [True, False], ids=["engine-carries-declarations", "declared-per-host"])
def test_a_seat_declared_under_host_b_is_launched_only_by_b(with_declarations):
    with two_hosts(with_declarations) as hosts:
        hosts.declare("worker", SHELL, host="b")
        hosts.declare("local", SHELL, host="a")
        if with_declarations:   # declared on a alone: the engine brings them to b
            hosts.sync.settle()
        for fleet in hosts.hosts:
            for seat in ("a/local", "b/worker"):
                assert (fleet.catalog / "agents" / seat / "agent.kdl").exists(), (fleet.host, seat)
        for fleet in hosts.hosts:
            fleet.up("--interval", "60s")
        poll_for(lambda: "b.worker" in hosts.b.running(), lambda: f"b to launch b.worker: {hosts.b.log()}", timeout=60)
        poll_for(lambda: "a.local" in hosts.a.running(), lambda: f"a to launch a.local: {hosts.a.log()}", timeout=60)
        # Both declarations were on both copies before either supervisor's first pass, and each
        # has launched its own seat since: neither launched (or recorded) the other host's seat.
        for fleet, own in ((hosts.a, "a.local"), (hosts.b, "b.worker")):
            assert set(fleet.running()) == {own}, (fleet.host, fleet.running(), fleet.log())
            assert [task["runtimeId"] for task in fleet.tasks()["tasks"]] == [own], fleet.tasks()
