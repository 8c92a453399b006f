"""A conflict copy made by real concurrent edits under real Syncthing: the two hosts edit a
seat's ``status`` record and its ``agent.kdl`` (declarations carried by the engine) while
disconnected; when they reconnect Syncthing keeps the loser as ``*.sync-conflict-*``, which st2's
rules never carry. Readers ignore it (the roster reads the seat once, from the winner), Doctor
names it and validate refuses the conflict copy of a declaration (issue 21 item 2)."""

from __future__ import annotations

import os

import pytest

from multihost_support import poll_for, roster, two_hosts

pytestmark = pytest.mark.multihost

SEAT = 'agent "worker" {{\n    argv "sh"\n    description "{description}"\n}}\n'


def publish(path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.edit")
    temporary.write_text(text)
    os.replace(temporary, path)


def conflict_copies(catalog) -> list[str]:
    return sorted(str(path.relative_to(catalog)) for path in catalog.rglob("*.sync-conflict-*"))


def test_a_conflict_copy_from_concurrent_edits_is_ignored_by_readers_and_named_by_doctor():
    with two_hosts(with_declarations=True) as hosts:
        seat = ("agents", "b", "worker")
        hosts.a.seat("worker", '    argv "sh"\n    description "first"', host="b")
        publish(hosts.a.catalog.joinpath(*seat, "status"), "available\n")
        hosts.sync.settle()
        assert hosts.b.catalog.joinpath(*seat, "status").read_text() == "available\n"

        hosts.sync.a.rest("POST", f"/rest/system/pause?device={hosts.sync.b.device_id}")
        poll_for(lambda: not hosts.sync.connected(), "the two instances to disconnect", timeout=30)
        for fleet, word in ((hosts.b, "busy"), (hosts.a, "dnd")):          # a edits last: a's wins
            publish(fleet.catalog.joinpath(*seat, "status"), f"{word}\n")
            publish(fleet.catalog.joinpath(*seat, "agent.kdl"), SEAT.format(description=f"edited on {fleet.host}"))
        for instance in (hosts.sync.a, hosts.sync.b):
            instance.scan()
        hosts.sync.a.rest("POST", f"/rest/system/resume?device={hosts.sync.b.device_id}")

        def both_conflicted():
            copies = conflict_copies(hosts.a.catalog) + conflict_copies(hosts.b.catalog)
            return (any("/status.sync-conflict-" in path for path in copies)
                    and any("/agent.sync-conflict-" in path for path in copies))

        poll_for(both_conflicted, "Syncthing to keep the losers as conflict copies", timeout=60, step=0.1)
        hosts.sync.settle()
        for fleet in hosts.hosts:      # the winner is on both sides; a conflict copy stays where it was made
            assert fleet.catalog.joinpath(*seat, "status").read_text() == "dnd\n"
            assert "edited on a" in fleet.catalog.joinpath(*seat, "agent.kdl").read_text()
        copies = {fleet.host: conflict_copies(fleet.catalog) for fleet in hosts.hosts}
        assert not (set(copies["a"]) & set(copies["b"])), copies

        for fleet in hosts.hosts:
            mine = copies[fleet.host]
            rows = roster(fleet)
            assert list(rows) == ["b.worker"], rows
            assert rows["b.worker"]["description"] == "edited on a", rows
            doctor = fleet.st2("doctor")
            assert "Traceback" not in doctor.stderr, doctor.stderr
            named = sorted(line for line in doctor.stdout.splitlines() if ": conflict-copy: " in line)
            assert len(named) == len(mine), (named, mine)
            for path, line in zip(mine, named):
                original = "status" if "/status.sync-conflict-" in path else "agent.kdl"
                assert line.startswith(f"advisory: catalog: conflict-copy: {path} is a replication engine's "
                                       f"conflict copy of {original}; "), line
            validate = fleet.st2("validate")
            declaration_copies = [path for path in mine if "/agent.sync-conflict-" in path]
            assert validate.returncode == (1 if declaration_copies else 0), validate.stdout
            for path in declaration_copies:
                assert (f"{path}: error[declaration-conflict-copy]: {path} is a replication engine's conflict copy "
                        "of agent.kdl: it was edited on two hosts at once") in validate.stdout
