"""The seat host's line protocol (st2.seathost.wire) over a real unix socket pair: a read takes
one line and the descriptors sent with it, and nothing past its newline — a second line already
in the socket (a DING seat that ended at once sends its ``exit`` right behind the registration's
``ok``) is the next read's, whole."""

from __future__ import annotations

import os
import socket

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
