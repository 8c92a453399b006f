"""The host <-> provider runtime line protocol: every message pinned as a full line, and every
kind of lying or malformed runtime output refused with its reason."""

from __future__ import annotations

import io
import json

import pytest

from st2.resources import protocol

ADDRESS = (7, "h.seat", "repo", "reg-1")


def test_every_message_is_pinned_as_a_full_line() -> None:
    assert protocol.encode_hello(protocol.Hello("git", "reg-1", ("demand",))) == (
        b'{"type":"Hello","v":1,"scheme":"git","registration":"reg-1","capabilities":["demand"]}\n')
    assert protocol.encode_observe(protocol.Observe(*ADDRESS, "git:///srv/repo", {"path": "/srv/repo"})) == (
        b'{"type":"Observe","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"reg-1",'
        b'"uri":"git:///srv/repo","target":{"path":"/srv/repo"}}\n')
    assert protocol.encode_result(protocol.Result("Published", *ADDRESS, {"dirty": False}, None)) == (
        b'{"type":"Published","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"reg-1",'
        b'"facts":{"dirty":false}}\n')
    assert protocol.encode_result(protocol.Result("Unchanged", *ADDRESS, None, None)) == (
        b'{"type":"Unchanged","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"reg-1"}\n')
    assert protocol.encode_result(protocol.Result("Failed", *ADDRESS, None, "no repo")) == (
        b'{"type":"Failed","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"reg-1",'
        b'"message":"no repo"}\n')


def test_results_round_trip() -> None:
    for result in (protocol.Result("Published", *ADDRESS, {"a": 1}, None),
                   protocol.Result("Unchanged", *ADDRESS, None, None),
                   protocol.Result("Failed", *ADDRESS, None, "x")):
        assert protocol.decode_result(protocol.encode_result(result)) == result


def line(**changes) -> bytes:
    message = {"type": "Published", "v": 1, "watermark": 7, "owner": "h.seat", "binding": "repo",
               "registration": "reg-1", "facts": {"a": 1}}
    message.update(changes)
    return (json.dumps({key: value for key, value in message.items() if value is not ...}) + "\n").encode()


@pytest.mark.parametrize("data, reason", [
    (line(hostDigest="sha256:" + "0" * 64), "carries fields it may not: hostDigest"),
    (line(observedAtMs=1788000000000), "carries fields it may not: observedAtMs"),
    (line(digest="x"), "carries fields it may not: digest"),
    (line(watermark=0), "watermark 0 is not a positive integer"),
    (line(watermark=-3), "watermark -3 is not a positive integer"),
    (line(watermark=True), "watermark True is not a positive integer"),
    (line(watermark="7"), "watermark '7' is not a positive integer"),
    (line(v=2), "protocol version 2 is not 1"),
    (line(type="Observe"), "type 'Observe' is not one of"),
    (line(facts=[1]), "Published facts is not an object"),
    (line(facts=...), "Published lacks facts"),
    (line(owner=""), "owner is not a non-empty string"),
    (b"not json\n", "not one JSON object"),
    (b'{"type":"Published","type":"Failed"}\n', "duplicate field"),
    (b"[1,2]\n", "not one JSON object"),
    (line()[:-1], "a line without its newline"),
    (b'{"type":"Unchanged","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"r","facts":{}}\n',
     "carries fields it may not: facts"),
])
def test_lying_or_malformed_output_is_refused_with_its_reason(data: bytes, reason: str) -> None:
    with pytest.raises(protocol.Refused, match=reason.replace("(", r"\(")):
        protocol.decode_result(data)


def test_an_oversized_line_is_refused_and_consumed_whole() -> None:
    stream = io.BytesIO(b"x" * (protocol.LINE_LIMIT + 10) + b"\n" + line())
    with pytest.raises(protocol.Refused, match="longer than the bound"):
        protocol.read_line(stream)
    assert protocol.decode_result(protocol.read_line(stream)).watermark == 7
    with pytest.raises(protocol.Refused, match="exceeds the bound"):
        protocol.decode_result(b"x" * (protocol.LINE_LIMIT + 1))
    with pytest.raises(protocol.Refused, match="exceeds the bound"):
        protocol.encode_result(protocol.Result("Published", *ADDRESS, {"a": "x" * protocol.LINE_LIMIT}, None))
