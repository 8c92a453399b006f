"""The line protocol between a host and a provider runtime (docs/resources.md §Protocol).

Every message is one JSON object on one ``\\n``-terminated line of at most :data:`LINE_LIMIT`
bytes, carrying ``"v": 1``. The runtime speaks first, once per connection::

    {"type":"Hello","v":1,"scheme":"git","registration":"<token>","capabilities":["demand"]}

then the host sends observations and the runtime answers each with exactly one result::

    {"type":"Observe","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"<token>",
     "uri":"git:///srv/repo","target":{...}}
    {"type":"Published","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"<token>",
     "facts":{...}}
    {"type":"Unchanged","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"<token>"}
    {"type":"Failed","v":1,"watermark":7,"owner":"h.seat","binding":"repo","registration":"<token>",
     "message":"..."}

A result's field set is closed: a runtime that adds its own digest, timestamp or anything else
is refused (:class:`Refused`), as is a line over the bound, a non-JSON line, another version or
a watermark that is not a positive integer. Whether a well-formed result matches an open
observation is the host's decision (:mod:`st2.resources.host`), not this module's.
"""

from __future__ import annotations

import json
from collections import namedtuple

from st2.records import decoding

VERSION = 1
LINE_LIMIT = 128 * 1024
HELLO, OBSERVE = "Hello", "Observe"
PUBLISHED, UNCHANGED, FAILED = "Published", "Unchanged", "Failed"
RESULTS: tuple[str, ...] = (PUBLISHED, UNCHANGED, FAILED)
_ADDRESS = ("watermark", "owner", "binding", "registration")
RESULT_FIELDS = {
    PUBLISHED: ("type", "v") + _ADDRESS + ("facts",),
    UNCHANGED: ("type", "v") + _ADDRESS,
    FAILED: ("type", "v") + _ADDRESS + ("message",),
}
HELLO_FIELDS = ("type", "v", "scheme", "registration", "capabilities")
OBSERVE_FIELDS = ("type", "v") + _ADDRESS + ("uri", "target")
WATERMARK_MAX = 2**63 - 1

Hello = namedtuple("Hello", ("scheme", "registration", "capabilities"))
Observe = namedtuple("Observe", ("watermark", "owner", "binding", "registration", "uri", "target"))
Result = namedtuple("Result", ("kind", "watermark", "owner", "binding", "registration", "facts", "message"))
"""``facts`` only for Published (a dict, not yet bounded: the host bounds it), ``message`` only
for Failed."""


class Refused(ValueError):
    """A line that is not a well-formed message of the expected kind; the text says why."""


def _encode(message: dict) -> bytes:
    line = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    if len(line) > LINE_LIMIT:
        raise Refused(f"a {message['type']} line of {len(line)} bytes exceeds the bound of {LINE_LIMIT}")
    return line


def encode_hello(hello: Hello) -> bytes:
    return _encode({"type": HELLO, "v": VERSION, "scheme": hello.scheme, "registration": hello.registration,
                    "capabilities": list(hello.capabilities)})


def encode_observe(observe: Observe) -> bytes:
    return _encode({"type": OBSERVE, "v": VERSION, "watermark": observe.watermark, "owner": observe.owner,
                    "binding": observe.binding, "registration": observe.registration, "uri": observe.uri,
                    "target": observe.target})


def encode_result(result: Result) -> bytes:
    message = {"type": result.kind, "v": VERSION, "watermark": result.watermark, "owner": result.owner,
               "binding": result.binding, "registration": result.registration}
    if result.kind == PUBLISHED:
        message["facts"] = result.facts
    elif result.kind == FAILED:
        message["message"] = result.message
    return _encode(message)


def _object(line: bytes, kinds: tuple[str, ...]) -> dict:
    if len(line) > LINE_LIMIT:
        raise Refused(f"a line of {len(line)} bytes exceeds the bound of {LINE_LIMIT}")
    if not line.endswith(b"\n"):
        raise Refused("a line without its newline")
    try:
        message = decoding.load_object(line[:-1])
    except decoding.Malformed as error:
        raise Refused(f"not one JSON object: {error}") from None
    if message.get("v") != VERSION or isinstance(message.get("v"), bool):
        raise Refused(f"protocol version {message.get('v')!r} is not {VERSION}")
    if message.get("type") not in kinds:
        raise Refused(f"type {message.get('type')!r} is not one of {', '.join(kinds)}")
    return message


def _closed(message: dict, allowed: tuple[str, ...]) -> None:
    extra = [name for name in message if name not in allowed]
    if extra:
        raise Refused(f"{message['type']} carries fields it may not: {', '.join(sorted(extra))}")
    missing = [name for name in allowed if name not in message]
    if missing:
        raise Refused(f"{message['type']} lacks {', '.join(missing)}")


def _address(message: dict) -> tuple:
    watermark = message["watermark"]
    if isinstance(watermark, bool) or not isinstance(watermark, int) or not 0 < watermark <= WATERMARK_MAX:
        raise Refused(f"watermark {watermark!r} is not a positive integer")
    for name in ("owner", "binding", "registration"):
        if not isinstance(message[name], str) or not message[name]:
            raise Refused(f"{name} is not a non-empty string")
    return watermark, message["owner"], message["binding"], message["registration"]


def decode_hello(line: bytes) -> Hello:
    message = _object(line, (HELLO,))
    _closed(message, HELLO_FIELDS)
    capabilities = message["capabilities"]
    if not isinstance(capabilities, list) or not all(isinstance(word, str) for word in capabilities):
        raise Refused("capabilities is not a list of strings")
    if not isinstance(message["scheme"], str) or not isinstance(message["registration"], str) \
            or not message["registration"]:
        raise Refused("scheme and registration must be strings")
    return Hello(message["scheme"], message["registration"], tuple(capabilities))


def decode_observe(line: bytes) -> Observe:
    message = _object(line, (OBSERVE,))
    _closed(message, OBSERVE_FIELDS)
    if not isinstance(message["uri"], str) or not isinstance(message["target"], dict):
        raise Refused("uri must be a string and target an object")
    return Observe(*_address(message), message["uri"], message["target"])


def decode_result(line: bytes) -> Result:
    """One result line, or raise :class:`Refused`."""
    message = _object(line, RESULTS)
    kind = message["type"]
    _closed(message, RESULT_FIELDS[kind])
    address = _address(message)
    facts = message.get("facts")
    if kind == PUBLISHED and not isinstance(facts, dict):
        raise Refused("Published facts is not an object")
    text = message.get("message")
    if kind == FAILED and not isinstance(text, str):
        raise Refused("Failed message is not a string")
    return Result(kind, *address, facts, text)


def read_line(stream, limit: int = LINE_LIMIT) -> bytes:
    """Read one line from a binary ``stream`` (b'' at end of input). A line past ``limit`` is
    consumed whole and raises :class:`Refused`, so the next read starts at the next line."""
    line = stream.readline(limit + 1)
    if len(line) > limit and not line.endswith(b"\n"):
        while True:
            rest = stream.readline(limit)
            if not rest or rest.endswith(b"\n"):
                break
        raise Refused(f"a line longer than the bound of {limit} bytes")
    return line
