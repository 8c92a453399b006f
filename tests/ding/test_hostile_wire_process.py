"""Hostile lines to the seat host's and the DING service's sockets under a real ``st2 up`` with
real tmux seats: a 2 KB line nested 1,000 deep, the same inside a field, invalid UTF-8, NaN, a
non-object, an overlong line and a line never ended, held open. Each gets one ``error`` line and
its connection closed within the request bound; neither process ends, each says the drops in
bounded lines of its log with no traceback, and every seat's next notice lands exactly once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ding_support import poll_for, runs_on
from seat_fleet_support import SEATS, Rounds, ding_fleet, ding_pids, exists, hello, served, standin_seats
from st2.ding import service_wire
from st2.seathost import wire

pytestmark = pytest.mark.process

DEEP = b"[" * 1000 + b"]" * 1000 + b"\n"     # 2,001 bytes
HOSTILE = [
    (DEEP, "unreadable request: the seat host connection carried a line that is not JSON: maximum recursion depth "
           "exceeded"),
    (b'{"op":"hello","x":' + b"[" * 1000 + b"]" * 1000 + b"}\n",
     "unreadable request: the seat host connection carried a line that is not JSON: maximum recursion depth "),
    (b'{"op":"\xff\xfe"}\n', "unreadable request: the seat host connection carried a line that is not JSON: 'utf-8' "
                             "codec can't decode byte 0xff in position 7: invalid start byte"),
    (b'{"op":NaN}\n', "unreadable request: the seat host connection carried a line that is not JSON: non-finite "
                      "JSON constant NaN"),
    (b'["op","hello"]\n', "unreadable request: the seat host connection carried a line that is not a JSON object"),
    (b'{"op":"\\u001b[2J\\u0007bogus"}\n', "unknown request '\\x1b[2J\\x07bogus'"),
]


@pytest.fixture
def fleet():
    yield from ding_fleet("st2hw-")


def answer_to(path: Path, raw: bytes) -> tuple[str, float]:
    """Send ``raw`` on a fresh connection; the one error line that comes back, and how long the
    connection took to close after it."""
    connection = wire.connect(path, timeout=10.0)
    try:
        connection.sendall(raw)
        answer, _ = wire.receive(connection)
        started = time.monotonic()
        assert connection.recv(1) == b""               # and the connection is closed
        return answer["error"], time.monotonic() - started
    finally:
        connection.close()


def overlong(path: Path) -> str:
    """A line past the line limit, sent until the server stops reading it."""
    connection = wire.connect(path, timeout=10.0)
    try:
        chunk = b" " * 65536
        try:
            for _ in range(wire.LINE_LIMIT // len(chunk) + 64):
                connection.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            answer, _ = wire.receive(connection)
        except wire.WireClosed:
            return "closed"
        return answer["error"]
    finally:
        connection.close()


def held_open(path: Path) -> tuple[str, float]:
    """A line begun and never ended, the connection held open: the server's answer and when."""
    # The server's bound runs from its accept, which can come before connect() returns here:
    # the clock starts before the connection is made, never after.
    started = time.monotonic()
    connection = wire.connect(path, timeout=10.0)
    try:
        connection.sendall(b'{"op":')
        answer, _ = wire.receive(connection)
        return answer["error"], time.monotonic() - started
    finally:
        connection.close()


def test_hostile_lines_end_neither_the_seat_host_nor_the_ding_service_and_every_seat_is_served(fleet):
    standins = standin_seats(fleet, SEATS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    supervisor = fleet.up("--interval", "1s")
    try:
        poll_for(lambda: len(ding_pids(fleet)) == len(SEATS) and served(fleet) == ding_pids(fleet), timeout=60,
                 what="every seat's stub served by the DING service")
        host_path, service_path = wire.socket_path(fleet.scope.directory), service_wire.socket_path(fleet.scope.directory)
        host, service = hello(host_path)["pid"], hello(service_path)["pid"]
        stubs = ding_pids(fleet)
        for path in (host_path, service_path):
            for raw, expected in HOSTILE:
                error, closing = answer_to(path, raw)
                assert error.startswith(expected), (path.name, raw[:40], error)
                assert closing < 1.0
            assert overlong(path) in ("closed", "unreadable request: overlong line on the seat host connection")
            error, elapsed = held_open(path)
            assert error == "unreadable request: no whole line within 2s on the seat host connection"
            assert wire.REQUEST_SECONDS <= elapsed < wire.REQUEST_SECONDS + 2.0
            assert exists(host) and exists(service)
            assert hello(host_path)["pid"] == host and hello(service_path)["pid"] == service
        assert served(fleet) == stubs == ding_pids(fleet)    # no seat's registration was disturbed

        logs = fleet.catalog / "logs"
        host_log = (logs / "h.seat-host.log").read_text()
        service_log = (logs / "h.ding-service.log").read_text()
        for text in (host_log, service_log):
            assert "Traceback" not in text and "RecursionError" not in text
            dropped = [line for line in text.splitlines() if "dropped a request" in line]
            # The burst is said in one line (the rest counted for the next one said), bounded and printable.
            assert len(dropped) == 1, dropped
            assert dropped[0].endswith("the seat host connection carried a line that is not JSON: maximum "
                                       "recursion depth exceeded while decoding a JSON array from a unicode string")
            assert all(character.isprintable() for character in dropped[0])

        rounds = Rounds(fleet, standins)
        rounds.post(0)
        rounds.wait_all("every notice after the hostile lines")
        for identity in SEATS:
            runs_on(fleet.catalog / "logs" / f"h.{identity}.ding.log", passes=3)
        rounds.assert_each_once()
        assert "SERVING" not in "".join((logs / f"h.{identity}.ding.log").read_text() for identity in SEATS)
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
