"""The host-local seat index (st2/bus/seat_index.py): a settled catalog's seats are served from
it without a walk, exactly as the walk lists them; any change the walk would see — a seat or a
host added or removed, a declaration rewritten, retyped or removed, a declaration appearing in a
seat directory — is walked again; a catalog or index it cannot prove is walked every time; and a
malformed, planted or foreign index is a miss, never an error or a wait."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import st2.catalog.discovery as discovery
from st2.bus import AmbiguousRecipient, BusError, seat_index
from st2.bus.addressing import resolve_seat, seats
from st2.runtime.declaration_cache import SETTLE_NS


@pytest.fixture
def state(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def later(monkeypatch):
    """Let the clock run past the settle bound: every file written so far is settled."""
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + SETTLE_NS + 1_000_000_000)


@pytest.fixture
def walks(monkeypatch) -> list[str]:
    """Record every catalog walk the bus makes."""
    seen: list[str] = []
    real = discovery.discover

    def counting(root):
        seen.append(str(root))
        return real(root)

    monkeypatch.setattr(discovery, "discover", counting)
    return seen


def walked(catalog: Path, monkeypatch) -> list:
    """The seats a walk lists (the index neither read nor written)."""
    with monkeypatch.context() as patch:
        patch.setattr(seat_index, "load", lambda root: None)
        patch.setattr(seat_index, "store", lambda *arguments: None)
        return seats(catalog)


def test_a_settled_catalog_is_served_from_the_index_exactly_as_walked(bus_catalog, state, later, walks,
                                                                        monkeypatch) -> None:
    first = seats(bus_catalog)
    assert len(walks) == 1 and seat_index.index_file(bus_catalog).is_file()
    assert seats(bus_catalog) == first == walked(bus_catalog, monkeypatch)
    assert len(walks) == 2  # the second call was the index's; the third the reference walk
    assert [(seat.bus_id, seat.directory, seat.address, seat.id, seat.desired_state, seat.streams)
            for seat in seats(bus_catalog)] == [
        (seat.bus_id, bus_catalog / "agents" / seat.host / seat.identity, seat.address, seat.id,
         seat.desired_state, seat.streams) for seat in first]
    assert type(first[0].directory) is type(bus_catalog)


def add_seat(catalog: Path, declare_seat) -> None:
    declare_seat(catalog, "h1", "dave", extra='    address "robert"\n')  # makes "robert" ambiguous


def add_host(catalog: Path, declare_seat) -> None:
    declare_seat(catalog, "h3", "erin")


def remove_seat(catalog: Path, declare_seat=None) -> None:
    (catalog / "agents" / "h1" / "alice" / "agent.kdl").unlink()
    (catalog / "agents" / "h1" / "alice").rmdir()


def rewrite_in_place(catalog: Path, declare_seat=None) -> None:
    # the same size, in place: only the declaration's own stat (its ctime at least) changes
    path = catalog / "agents" / "h1" / "bob" / "agent.kdl"
    text = path.read_text()
    with open(path, "r+") as handle:
        handle.write(text.replace('address "robert"', 'address "roberx"'))


def symlink_declaration(catalog: Path, declare_seat=None) -> None:
    path = catalog / "agents" / "h1" / "alice" / "agent.kdl"
    target = catalog.parent / "elsewhere.kdl"
    target.write_text(path.read_text())
    path.unlink()
    path.symlink_to(target)


def declaration_appears(catalog: Path) -> None:
    (catalog / "agents" / "h1" / "alice" / "agent.kdl").rename(catalog.parent / "kept.kdl")


def declaration_returns(catalog: Path) -> None:
    (catalog.parent / "kept.kdl").rename(catalog / "agents" / "h1" / "alice" / "agent.kdl")


@pytest.mark.parametrize("change", [add_seat, add_host, remove_seat, rewrite_in_place, symlink_declaration])
def test_every_change_the_walk_would_see_is_walked_again(bus_catalog, state, later, walks, monkeypatch,
                                                         seat_writer, change) -> None:
    before = seats(bus_catalog)
    assert seats(bus_catalog) == before and len(walks) == 1
    change(bus_catalog, seat_writer)
    after = seats(bus_catalog)
    assert len(walks) == 2
    assert after == walked(bus_catalog, monkeypatch) and after != before


def test_a_refusal_through_the_index_is_the_walks_refusal(bus_catalog, state, later, monkeypatch,
                                                         seat_writer) -> None:
    add_seat(bus_catalog, seat_writer)
    seats(bus_catalog)  # indexed
    with pytest.raises(AmbiguousRecipient) as through_index:
        resolve_seat(bus_catalog, "robert")
    with pytest.raises(BusError) as unknown:
        resolve_seat(bus_catalog, "nobody")
    monkeypatch.setattr(seat_index, "load", lambda root: None)
    with pytest.raises(AmbiguousRecipient) as through_walk:
        resolve_seat(bus_catalog, "robert")
    assert str(through_index.value) == str(through_walk.value) == (
        "ambiguous recipient 'robert': it names h1.bob, h1.dave; use <host>.<identity> or --to-id")
    assert str(unknown.value) == f"no agent 'nobody' in catalog {bus_catalog}"


def test_a_seat_directory_without_a_declaration_is_walked_every_time(bus_catalog, state, later, walks) -> None:
    declaration_appears(bus_catalog)
    assert "h1.alice" not in {seat.bus_id for seat in seats(bus_catalog)}
    assert not seat_index.index_file(bus_catalog).exists()  # discovery warned: nothing indexed
    declaration_returns(bus_catalog)  # inside the seat directory: no host directory changes
    assert "h1.alice" in {seat.bus_id for seat in seats(bus_catalog)}
    assert len(walks) == 2


def test_a_catalog_written_within_the_settle_bound_is_never_indexed(bus_catalog, state, walks) -> None:
    seats(bus_catalog)
    seats(bus_catalog)
    assert not seat_index.index_file(bus_catalog).exists() and len(walks) == 2


def plant_fifo(file: Path, valid: bytes, catalog: Path) -> None:
    os.mkfifo(file)


def plant_symlink(file: Path, valid: bytes, catalog: Path) -> None:
    target = file.parent / "elsewhere.json"
    target.write_bytes(valid)  # a well-formed index, reached only by following the link
    file.symlink_to(target)


def plant_garbage(file: Path, valid: bytes, catalog: Path) -> None:
    file.write_bytes(b'{"schema":"st2.seat-index.v1","seats":[[')


def plant_foreign_parser(file: Path, valid: bytes, catalog: Path) -> None:
    stored = json.loads(valid)
    stored["parser"] = "another st2"
    file.write_text(json.dumps(stored))


def plant_bad_row(file: Path, valid: bytes, catalog: Path) -> None:
    stored = json.loads(valid)
    stored["seats"][0][2] = -1
    file.write_text(json.dumps(stored))


def plant_escaping_row(file: Path, valid: bytes, catalog: Path) -> None:
    stored = json.loads(valid)
    stored["seats"][0][1] = "../h2/bob"
    file.write_text(json.dumps(stored))


def plant_escaping_host(file: Path, valid: bytes, catalog: Path) -> None:
    stored = json.loads(valid)
    outside = catalog / "evil" / "agent.kdl"  # agents/../evil/agent.kdl: a real file, outside agents/
    outside.parent.mkdir()
    outside.write_text('agent "evil" {\n    argv "sh"\n}\n')
    stored["directories"].append(["agents/..", *seat_index.directory_key(str(catalog))])  # its true key
    stored["seats"].append(["..", "evil", *seat_index.declaration_key(str(outside)), [None, None, "running", []]])
    file.write_text(json.dumps(stored))


def plant_hostless_row(file: Path, valid: bytes, catalog: Path) -> None:
    stored = json.loads(valid)
    stored["seats"][0][:2] = ["", "h1"]  # agents/h1 posing as a seat directory
    file.write_text(json.dumps(stored))


def plant_duplicate_key(file: Path, valid: bytes, catalog: Path) -> None:
    file.write_bytes(valid[:-1] + b',"schema":"st2.seat-index.v1"}')


@pytest.mark.parametrize("plant", [plant_fifo, plant_symlink, plant_garbage, plant_foreign_parser, plant_bad_row,
                                   plant_escaping_row, plant_escaping_host, plant_hostless_row,
                                   plant_duplicate_key])
def test_a_malformed_planted_or_foreign_index_is_a_miss(bus_catalog, state, later, walks, monkeypatch,
                                                        plant) -> None:
    expected = seats(bus_catalog)
    file = seat_index.index_file(bus_catalog)
    valid = file.read_bytes()
    file.unlink()
    plant(file, valid, bus_catalog)
    monkeypatch.setattr(seat_index, "store", lambda *arguments: None)  # keep the planted file in place
    assert seat_index.load(str(bus_catalog)) is None
    assert seats(bus_catalog) == expected
    assert len(walks) == 2
