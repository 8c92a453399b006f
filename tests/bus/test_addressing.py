"""Addressing: identity, host.identity, declared address, --to-id; unique or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.bus import BusError
from st2.bus.addressing import resolve_seat, seats


def test_every_declared_seat_is_listed_with_its_declared_id_and_address(bus_catalog: Path) -> None:
    found = {seat.bus_id: seat for seat in seats(bus_catalog)}
    assert sorted(found) == ["h1.alice", "h1.bob", "h1.carol", "h1.gone", "h1.paused", "h2.bob"]
    assert (found["h1.bob"].address, found["h1.bob"].id) == ("robert", "h1.bob")
    assert (found["h1.carol"].address, found["h1.carol"].id) == ("carol", "carol-1")
    assert found["h1.bob"].streams == ("ci",)
    assert found["h1.gone"].retired


@pytest.mark.parametrize(
    ("name", "bus_id"),
    [("alice", "h1.alice"), ("h1.alice", "h1.alice"), ("robert", "h1.bob"), ("h2.bob", "h2.bob"),
     ("carol", "h1.carol")],
)
def test_a_unique_name_resolves(bus_catalog: Path, name: str, bus_id: str) -> None:
    assert resolve_seat(bus_catalog, name).bus_id == bus_id


def test_the_immutable_id_resolves_only_through_to_id(bus_catalog: Path) -> None:
    assert resolve_seat(bus_catalog, to_id="carol-1").bus_id == "h1.carol"
    assert resolve_seat(bus_catalog, to_id="h1.alice").bus_id == "h1.alice"  # the default id
    with pytest.raises(BusError, match="no agent"):
        resolve_seat(bus_catalog, "carol-1")
    with pytest.raises(BusError, match="no agent"):
        resolve_seat(bus_catalog, to_id="alice")


def test_an_ambiguous_name_is_refused_naming_the_candidates(bus_catalog: Path) -> None:
    with pytest.raises(BusError, match=r"ambiguous recipient 'bob': it names h1\.bob, h2\.bob"):
        resolve_seat(bus_catalog, "bob")


def test_an_unknown_name_is_refused(bus_catalog: Path) -> None:
    with pytest.raises(BusError, match="no agent 'nobody'"):
        resolve_seat(bus_catalog, "nobody")


def test_a_retired_seat_is_not_a_recipient_but_its_boxes_stay_readable(bus_catalog: Path) -> None:
    with pytest.raises(BusError, match="retired"):
        resolve_seat(bus_catalog, "gone")
    assert resolve_seat(bus_catalog, "gone", for_delivery=False).bus_id == "h1.gone"


def test_name_and_to_id_together_are_refused(bus_catalog: Path) -> None:
    with pytest.raises(BusError, match="not both"):
        resolve_seat(bus_catalog, "alice", to_id="h1.alice")


def test_a_directory_without_a_declaration_is_not_a_seat(bus_catalog: Path) -> None:
    (bus_catalog / "agents" / "h1" / "ghost" / "resources" / "inbox").mkdir(parents=True)
    with pytest.raises(BusError, match="no agent 'ghost'"):
        resolve_seat(bus_catalog, "ghost")


def test_a_seat_moved_to_another_host_is_addressed_there_by_the_name_it_kept(bus_catalog: Path) -> None:
    # Retired on h1, declared on h3 with the same identity and id: the live one is the recipient.
    old = bus_catalog / "agents" / "h1" / "mover"
    old.mkdir(parents=True)
    (old / "agent.kdl").write_text('agent "mover" {\n    id "mover-1"\n    desired-state "retired" reason="moved to h3"\n    argv "sh"\n}\n')
    new = bus_catalog / "agents" / "h3" / "mover"
    new.mkdir(parents=True)
    (new / "agent.kdl").write_text('agent "mover" {\n    id "mover-1"\n    argv "sh"\n}\n')
    assert resolve_seat(bus_catalog, "mover").bus_id == "h3.mover"
    assert resolve_seat(bus_catalog, to_id="mover-1").bus_id == "h3.mover"
    with pytest.raises(BusError, match="retired"):
        resolve_seat(bus_catalog, "h1.mover")
    # Reading the old boxes still names exactly one seat only by its full bus id.
    with pytest.raises(BusError, match="ambiguous"):
        resolve_seat(bus_catalog, "mover", for_delivery=False)
    # Two live seats with the name stay ambiguous.
    (new / "agent.kdl").write_text('agent "mover" {\n    argv "sh"\n}\n')
    (old / "agent.kdl").write_text('agent "mover" {\n    argv "sh"\n}\n')
    with pytest.raises(BusError, match=r"ambiguous recipient 'mover': it names h1\.mover, h3\.mover"):
        resolve_seat(bus_catalog, "mover")



def test_a_declaration_rewritten_in_place_with_its_old_mtime_is_read_again(bus_catalog: Path) -> None:
    # An engine writing a declaration in place and putting the source's mtime back (rsync
    # --inplace -t) keeps its size, inode and mtime: the cached seat must not survive new bytes.
    import os
    import time

    declaration = bus_catalog / "agents" / "h1" / "dora" / "agent.kdl"
    declaration.parent.mkdir(parents=True)
    declaration.write_text('agent "dora" {\n    address "aaaa"\n    argv "sh"\n}\n')
    before = os.stat(declaration)
    assert resolve_seat(bus_catalog, "aaaa").bus_id == "h1.dora"
    while time.time_ns() <= before.st_ctime_ns + 10_000_000:  # a ctime tick the filesystem can show
        time.sleep(0.005)
    with open(declaration, "r+") as handle:
        handle.write('agent "dora" {\n    address "bbbb"\n    argv "sh"\n}\n')
    os.utime(declaration, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(declaration)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (before.st_size, before.st_ino, before.st_mtime_ns)
    assert resolve_seat(bus_catalog, "bbbb").bus_id == "h1.dora"
    with pytest.raises(BusError, match="no agent 'aaaa'"):
        resolve_seat(bus_catalog, "aaaa")
