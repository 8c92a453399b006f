"""The DING service's registration protocol (st2.ding.service, st2.ding.service_wire), served by
the real service loop on a real unix socket in this process: a malformed request gets one
clear ``error`` line, never a traceback; a second registration for a seat waits for the first
seat thread to end, and for any other holder of the seat's lock; one seat's exception ends only
that seat, with 70."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from ding_support import make_seat, poll_for
from st2.ding import service_wire
from st2.ding.notifier import Settings
from st2.ding.service import DingService
from st2.fs.lock import RecordLock
from st2.seathost import wire


@pytest.fixture
def service(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    scope = tmp_path / "scope"
    scope.mkdir()
    running = DingService(scope)
    running.listener = running._bind()
    signal_read, signal_write = os.pipe()
    loop = threading.Thread(target=running._loop, args=(signal_read,), daemon=True)
    loop.start()
    yield running
    running.stopping = True
    with running.guard:
        seats = list(running.seats)
    for seat in seats:
        seat.stop()
    os.write(running.done_write, b"x")
    loop.join(10)
    assert not loop.is_alive()


def ask(service: DingService, raw: bytes, descriptors: tuple[int, ...] = ()) -> tuple[socket.socket, dict]:
    connection = wire.connect(service_wire.socket_path(service.directory))
    if descriptors:
        socket.send_fds(connection, [raw], list(descriptors))
    else:
        connection.sendall(raw)
    answer, extra = wire.receive(connection)
    assert extra == []
    return connection, answer


def line(body: dict) -> bytes:
    return json.dumps(body).encode() + b"\n"


def serve_body(service: DingService, catalog: Path, target: str = "h.ann", **extra) -> dict:
    body = service_wire.serve_request(target, catalog, "h", str(catalog.parent / "no-terminal"),
                                      Settings(poll_interval=0.05, startup_grace=0.01), service.build)
    body.update(extra)
    return body


class Log:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def text(self) -> str:
        return self.path.read_text() if self.path.exists() else ""

    def close(self) -> None:
        os.close(self.descriptor)


def register(service: DingService, catalog: Path, log: Log, target: str = "h.ann") -> socket.socket:
    connection, answer = ask(service, line(serve_body(service, catalog, target)), (log.descriptor,))
    assert answer == {"ok": True, "pid": os.getpid()}
    return connection


def exit_line(connection: socket.socket) -> dict:
    connection.settimeout(30)
    answer, _ = wire.receive(connection)
    return answer


def test_settings_travel_by_field_name_and_bad_ones_are_named():
    settings = Settings(poll_interval=0.5, retry_backoff=3.0, trace_progress=True, gone_misses=5)
    encoded = service_wire.encode_settings(settings)
    assert list(encoded) == ["pollInterval", "retryBackoff", "observationWindow", "observationPoll",
                             "pasteVisibleTimeout", "receiptTimeout", "startupGrace",
                             "debounce", "quietPassInterval", "goneMisses", "traceProgress"]
    assert service_wire.decode_settings(json.loads(json.dumps(encoded))) == settings
    assert service_wire.decode_settings({}) == Settings()
    for bad, message in ((["x"], "settings is not an object"),
                         ({"pollInterval": "fast"}, "setting 'pollInterval' must be a non-negative float"),
                         ({"pollInterval": True}, "setting 'pollInterval' must be a non-negative float"),
                         ({"goneMisses": 1.5}, "setting 'goneMisses' must be a non-negative int"),
                         ({"traceProgress": 1}, "setting 'traceProgress' must be true or false"),
                         ({"retryBackoff": -1}, "setting 'retryBackoff' must be a non-negative float"),
                         ({"colour": 1}, "unknown setting 'colour'")):
        with pytest.raises(ValueError) as raised:
            service_wire.decode_settings(bad)
        assert str(raised.value) == message


def test_a_malformed_request_gets_one_clear_refusal_and_the_service_serves_on(service, tmp_path):
    catalog = tmp_path / "catalog"
    make_seat(catalog, "ann")
    log = Log(tmp_path / "ann.log")
    refusals = [
        (b"not json\n", (), "unreadable request: the seat host connection carried a line that is not JSON: "
                            "Expecting value: line 1 column 1 (char 0)"),
        (b"[1, 2]\n", (), "unreadable request: the seat host connection carried a line that is not a JSON object"),
        (line({"op": "bogus"}), (), "unknown request 'bogus'"),
        (line(serve_body(service, catalog)), (), "malformed serve request: expected the task's log descriptor, got 0"),
        (line({**serve_body(service, catalog), "target": None}), (log.descriptor,),
         "malformed serve request: 'target' must be a non-empty string"),
        (line(serve_body(service, catalog, "../evil")), (log.descriptor,),
         "malformed serve request: 'target' must be a runtime id <host>.<identity>"),
        (line(serve_body(service, catalog, "nodot")), (log.descriptor,),
         "malformed serve request: 'nodot' is not a runtime id <host>.<identity>"),
        (line({**serve_body(service, catalog), "catalog": "relative"}), (log.descriptor,),
         "malformed serve request: 'catalog' must be an absolute path"),
        (line({**serve_body(service, catalog), "socket": 7}), (log.descriptor,),
         "malformed serve request: 'socket' must be a non-empty string or null"),
        (line({**serve_body(service, catalog), "settings": {"pollInterval": "fast"}}), (log.descriptor,),
         "malformed serve request: setting 'pollInterval' must be a non-negative float"),
    ]
    for raw, descriptors, error in refusals:
        connection, answer = ask(service, raw, descriptors)
        assert answer == {"error": error}, raw
        assert connection.recv(1) == b""        # and the connection is closed
        connection.close()
    connection, answer = ask(service, line({**serve_body(service, catalog), "build": "sha256:other"}), (log.descriptor,))
    assert answer == {"error": "build", "build": service.build}
    assert service.hello()["serving"] == []
    # The service still serves a well-formed registration.
    served = register(service, catalog, log)
    poll_for(lambda: "watching " in log.text(), "the seat's notifier to start", timeout=30)
    assert "Traceback" not in log.text()
    served.close()
    poll_for(lambda: service.hello()["serving"] == [], "the seat to end with its stub's connection", timeout=30)
    log.close()


def test_a_second_registration_for_a_seat_waits_for_the_first_thread(service, tmp_path):
    catalog = tmp_path / "catalog"
    make_seat(catalog, "ann")
    first_log, second_log = Log(tmp_path / "first.log"), Log(tmp_path / "second.log")
    first = register(service, catalog, first_log)
    poll_for(lambda: "watching " in first_log.text(), "the first thread's loop", timeout=30)
    second = register(service, catalog, second_log)
    poll_for(lambda: "waiting for the previous notifier of h.ann to finish its pass" in second_log.text(),
             "the second registration to wait", timeout=30)
    assert "watching " not in second_log.text()          # never two notifiers of one seat at once
    assert [row["target"] for row in service.hello()["serving"]] == ["h.ann", "h.ann"]
    first.sendall(b'{"op":"stop"}\n')                     # the first stub's SIGTERM
    assert exit_line(first) == {"exit": 0}
    poll_for(lambda: "watching " in second_log.text(), "the second thread to start once the first ended", timeout=30)
    assert "another notifier" not in second_log.text()
    second.close()                                         # the second stub SIGKILLed
    poll_for(lambda: service.hello()["serving"] == [], "the second thread to stop", timeout=30)
    first_log.close()
    second_log.close()


def test_a_registration_waits_while_another_process_holds_the_seat_lock(service, tmp_path):
    catalog = tmp_path / "catalog"
    make_seat(catalog, "ann")
    log = Log(tmp_path / "ann.log")
    held = RecordLock(service_wire.seat_lock_path(service.directory, "h.ann"))
    held.acquire()                                         # e.g. a stub serving the seat itself
    try:
        connection = register(service, catalog, log)
        poll_for(lambda: "another notifier of h.ann still runs" in log.text(), "the wait for the lock", timeout=30)
        assert "watching " not in log.text()
    finally:
        held.release()
    poll_for(lambda: "watching " in log.text(), "the loop once the lock is free", timeout=30)
    connection.close()
    log.close()


def test_one_seats_exception_ends_only_that_seat_with_70(service, tmp_path, monkeypatch):
    import st2.ding.notifier as notifier_module

    real_run = notifier_module.run

    def run(notifier, *arguments):
        if notifier.store.target == "h.bad":
            raise RuntimeError("boom")
        return real_run(notifier, *arguments)

    monkeypatch.setattr(notifier_module, "run", run)
    catalog = tmp_path / "catalog"
    make_seat(catalog, "ann")
    make_seat(catalog, "bad")
    good_log, bad_log = Log(tmp_path / "ann.log"), Log(tmp_path / "bad.log")
    good = register(service, catalog, good_log, "h.ann")
    bad = register(service, catalog, bad_log, "h.bad")
    assert exit_line(bad) == {"exit": 70}
    assert "st2 ding: RuntimeError: boom\n" in bad_log.text()
    assert [row["target"] for row in service.hello()["serving"]] == ["h.ann"]
    nowhere = register(service, catalog, Log(tmp_path / "nowhere.log"), "h.nobody")
    assert exit_line(nowhere) == {"exit": 1, "error": f"no seat {catalog / 'agents' / 'h' / 'nobody'}"}
    good.sendall(b'{"op":"stop"}\n')
    assert exit_line(good) == {"exit": 0}
    good_log.close()
    bad_log.close()


def test_a_registered_stubs_ping_is_answered_at_once_and_a_malformed_line_stops_only_its_seat(service, tmp_path):
    catalog = tmp_path / "catalog"
    make_seat(catalog, "ann")
    make_seat(catalog, "bob")
    ann_log, bob_log = Log(tmp_path / "ann.log"), Log(tmp_path / "bob.log")
    ann, bob = register(service, catalog, ann_log, "h.ann"), register(service, catalog, bob_log, "h.bob")
    poll_for(lambda: "watching " in ann_log.text() and "watching " in bob_log.text(), "both seats' loops", timeout=30)
    for connection in (ann, bob):
        connection.sendall(service_wire.PING + service_wire.PING)   # two pings in one read: two pongs
        connection.settimeout(10)
        assert wire.receive(connection) == ({"pong": True}, []) and wire.receive(connection) == ({"pong": True}, [])
    ann.sendall(b"[" * 1000 + b"]" * 1000 + b"\n")                 # a 1,000-deep line from a registered peer
    ann.settimeout(30)
    assert ann.recv(1) == b""                                     # its seat stopped, its connection dropped
    poll_for(lambda: [row["target"] for row in service.hello()["serving"]] == ["h.bob"], "ann's seat to stop",
             timeout=30)
    bob.sendall(service_wire.PING)
    assert wire.receive(bob) == ({"pong": True}, [])               # the other seat is served on
    bob.sendall(b"x" * (service_wire.STUB_LINE_LIMIT + 1))        # no newline, past the stub line bound
    bob.settimeout(30)
    assert bob.recv(1) == b""
    poll_for(lambda: service.hello()["serving"] == [], "bob's seat to stop", timeout=30)
    assert "Traceback" not in ann_log.text() + bob_log.text()
    for connection, log in ((ann, ann_log), (bob, bob_log)):
        connection.close()
        log.close()
