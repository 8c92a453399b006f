"""The bus's seat list (st2.bus.addressing.seats) through the host-local declaration cache: the
same seats as a fresh parse, each catalog read once inside one command (OneReading), and a seat
declared later seen by the next call outside it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from st2.bus import addressing
from st2.catalog import discovery
from st2.runtime.declaration_cache import SETTLE_NS


@pytest.fixture
def seated(bus_catalog: Path, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(addressing, "_CACHE", {})
    return bus_catalog


def discoveries(monkeypatch) -> list[Path]:
    seen: list[Path] = []
    real = discovery.discover

    def counting(root, *args, **kwargs):
        seen.append(root)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(discovery, "discover", counting)
    return seen


def test_cached_seats_are_the_freshly_parsed_ones(seated: Path, tmp_path: Path, monkeypatch) -> None:
    fresh = addressing.seats(seated)  # nothing settled yet: parsed, nothing stored
    assert {seat.bus_id for seat in fresh} >= {"h1.alice", "h1.bob", "h2.bob", "h1.carol"}
    assert not list((tmp_path / "state").rglob("declarations.*.json"))
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + SETTLE_NS + 1_000_000_000)
    monkeypatch.setattr(addressing, "_CACHE", {})
    assert addressing.seats(seated) == fresh  # parsed again, now stored
    assert list((tmp_path / "state").rglob("declarations.*.json"))
    monkeypatch.setattr(addressing, "_CACHE", {})
    from st2.runtime import declaration_cache

    monkeypatch.setattr(declaration_cache, "load_facts", lambda path: pytest.fail(f"parsed {path}"))
    assert addressing.seats(seated) == fresh  # served from the host cache alone
    bob = next(seat for seat in fresh if seat.bus_id == "h1.bob")
    assert (bob.address, bob.streams) == ("robert", ("ci",))


def test_one_command_reads_the_catalog_once(seated: Path, monkeypatch) -> None:
    seen = discoveries(monkeypatch)
    with addressing.OneReading():
        addressing.resolve_seat(seated, "robert")
        addressing.resolve_seat(seated, "h1.alice", for_delivery=False)
        addressing.seats(seated)
    assert seen == [seated]
    addressing.seats(seated)
    addressing.seats(seated)
    assert seen == [seated] * 3  # outside a command every call reads


def test_a_seat_declared_later_is_seen_by_the_next_call(seated: Path, seat_writer) -> None:
    assert "h1.dave" not in {seat.bus_id for seat in addressing.seats(seated)}
    seat_writer(seated, "h1", "dave")
    assert "h1.dave" in {seat.bus_id for seat in addressing.seats(seated)}
