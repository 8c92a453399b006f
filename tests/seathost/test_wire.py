"""The seat host's line protocol (st2.seathost.wire) over a real unix socket pair: a read takes
one line and the descriptors sent with it, and nothing past its newline — a second line already
in the socket (a DING seat that ended at once sends its ``exit`` right behind the registration's
``ok``) is the next read's, whole."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from st2.seathost import wire


def test_two_lines_sent_at_once_are_two_reads_and_the_descriptors_come_with_the_first() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    read_end, write_end = os.pipe()
    try:
        wire.send(theirs, {"ok": True, "pid": 7}, (write_end,))
        theirs.sendall(b'{"exit":1,"error":"no seat"}\n')
        first, descriptors = wire.receive(ours)
        assert first == {"ok": True, "pid": 7} and len(descriptors) == 1
        os.write(descriptors[0], b"x")
        os.close(descriptors[0])
        assert os.read(read_end, 1) == b"x"
        assert wire.receive(ours) == ({"exit": 1, "error": "no seat"}, [])
        theirs.close()
        with pytest.raises(wire.WireClosed):
            wire.receive(ours)
    finally:
        ours.close()
        os.close(read_end)
        os.close(write_end)


def test_a_line_split_over_writes_is_read_whole() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    try:
        theirs.sendall(b'{"op":')
        theirs.sendall(b'"hello"}\n{"op":"next"}\n')
        assert wire.receive(ours) == ({"op": "hello"}, [])
        assert wire.receive(ours) == ({"op": "next"}, [])
    finally:
        ours.close()
        theirs.close()


def test_end_of_stream_inside_a_line_and_a_non_object_line_are_wire_errors() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    try:
        theirs.sendall(b'[1]\n{"op":')
        theirs.close()
        with pytest.raises(wire.WireError, match="not a JSON object"):
            wire.receive(ours)
        with pytest.raises(wire.WireClosed):
            wire.receive(ours)
    finally:
        ours.close()


HOSTILE_LINES = [
    (b"[" * 1000 + b"]" * 1000 + b"\n", "not JSON: maximum recursion depth exceeded"),    # 2 KB, 1,000 deep
    (b'{"op":' + b"[" * 1000 + b"]" * 1000 + b"}\n", "not JSON: maximum recursion depth exceeded"),
    (b'{"op":"\xff\xfe"}\n', "not JSON: 'utf-8' codec can't decode byte 0xff"),
    (b'{"op":NaN}\n', "not JSON: non-finite JSON constant NaN"),
    (b'{"op":"hello","op":"retire"}\n', "not JSON: duplicate field 'op'"),
    (b'"hello"\n', "not a JSON object"),
    (b"null\n", "not a JSON object"),
    (b'{"op":"hello","n":' + b"9" * 5000 + b"}\n", "not JSON: Exceeds the limit (4300 digits)"),
]


@pytest.mark.parametrize("raw,why", HOSTILE_LINES, ids=["deep-array", "deep-field", "utf-8", "nan", "duplicate",
                                                        "string", "null", "long-integer"])
def test_a_hostile_line_is_one_wire_error_and_the_next_line_reads_whole(raw, why) -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    try:
        theirs.sendall(raw + b'{"op":"hello"}\n')
        with pytest.raises(wire.WireError) as raised:
            wire.receive(ours)
        assert why in str(raised.value)
        assert wire.receive(ours) == ({"op": "hello"}, [])
    finally:
        ours.close()
        theirs.close()


def test_an_overlong_line_is_refused_at_the_limit_and_its_descriptors_closed() -> None:
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    read_end, write_end = os.pipe()
    try:
        socket.send_fds(theirs, [b"{"], [write_end])
        os.close(write_end)
        def send_past_the_limit():   # the receiver closes mid-line: the sender's broken pipe is expected
            try:
                theirs.sendall(b" " * (wire.LINE_LIMIT + 65536))
            except BrokenPipeError:
                pass

        sender = threading.Thread(target=send_past_the_limit)
        sender.start()
        with pytest.raises(wire.WireError, match="overlong line"):
            wire.receive(ours)
        ours.close()
        sender.join(10)
        assert os.read(read_end, 1) == b""   # the received write end was closed: no writer is left
    finally:
        ours.close()
        theirs.close()
        os.close(read_end)


def test_a_line_trickled_or_never_ended_is_refused_within_one_deadline_for_the_whole_line() -> None:

    ours, theirs = socket.socketpair()
    ours.settimeout(0.5)
    stop = threading.Event()

    def trickle():   # a byte every 0.1 s: each read alone is well inside the timeout
        while not stop.is_set():
            try:
                theirs.send(b" ")
            except OSError:
                return
            time.sleep(0.1)

    sender = threading.Thread(target=trickle)
    sender.start()
    try:
        started = time.monotonic()
        with pytest.raises(wire.WireError, match=r"no whole line within 0.5s"):
            wire.receive(ours)
        assert time.monotonic() - started < 1.5
        assert ours.gettimeout() == 0.5
    finally:
        stop.set()
        sender.join(5)
        ours.close()
        theirs.close()


def test_printable_strips_escapes_and_bounds_the_line() -> None:
    assert wire.printable("unknown request '\x1b[2J\x07\u2028ok'") == "unknown request '?[2J??ok'"
    assert wire.printable("x" * 500) == "x" * wire.DROP_LOG_CHARACTERS + "…"


def test_the_drop_log_says_the_first_drop_at_once_and_counts_the_rest_until_the_next_one_said() -> None:
    lines: list[str] = []
    now = [100.0]
    drops = wire.DropLog(lines.append, clock=lambda: now[0])
    drops.dropped("first \x1b[31m")
    for _ in range(500):
        drops.dropped("again")
    assert lines == ["dropped a request: first ?[31m"]
    now[0] += wire.DROP_LOG_SECONDS
    drops.dropped("later")
    assert lines[1:] == ["dropped a request: later (500 more dropped since the last one said)"]


def test_answer_one_answers_a_handlers_bug_and_a_malformed_line_with_one_error_line_and_serves_on(tmp_path) -> None:
    listener, _ = wire.listen(tmp_path / "s.sock", 8)
    lines: list[str] = []
    drops = wire.DropLog(lines.append, clock=iter(range(0, 1000, 100)).__next__)
    handled: list[dict] = []

    def handle(connection, body, descriptors):
        handled.append(body)
        if body.get("op") == "bug":
            raise RecursionError("deep inside a handler")
        wire.send(connection, {"ok": True})
        return False

    try:
        for raw, answer in ((b"[" * 1000 + b"]" * 1000 + b"\n",
                             "unreadable request: the seat host connection carried a line that is not JSON: maximum "
                             "recursion depth exceeded while decoding a JSON array from a unicode string"),
                            (b'{"op":"bug"}\n', "internal error: RecursionError: deep inside a handler")):
            client = wire.connect(tmp_path / "s.sock")
            client.sendall(raw)
            wire.answer_one(listener, handle, drops)
            assert wire.receive(client) == ({"error": answer}, [])
            assert client.recv(1) == b""
            client.close()
        assert handled == [{"op": "bug"}]
        client = wire.connect(tmp_path / "s.sock")
        client.sendall(b'{"op":"fine"}\n')
        wire.answer_one(listener, handle, drops)
        assert wire.receive(client) == ({"ok": True}, [])
        client.close()
        assert lines == ["dropped a request: the seat host connection carried a line that is not JSON: maximum recursion "
                         "depth exceeded while decoding a JSON array from a unicode string",
                         "dropped a request: a request failed: RecursionError: deep inside a handler"]
    finally:
        listener.close()
