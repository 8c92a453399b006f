"""Strict JSON decoding shared by the JSON record readers.

The original records are read by a strict typed decoder, and a Python reader that accepts more
than it did would turn garbage into definite values. So: UTF-8 only, no ``NaN``/``Infinity``, no
duplicate keys, no lone surrogates, and typed field accessors that refuse ``true`` where a number
is due. Unknown fields are tolerated (additive-tolerant). Standard library only: hot paths import
this. Every failure is :class:`Malformed`; readers catch it and project their own absence.
"""

from __future__ import annotations

import json
import math

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Any

U64_MAX = 2**64 - 1
# The last millisecond a UTC datetime renders (9999-12-31T23:59:59.999Z). A millisecond stamp past
# it names no time st2 can show, so every reader takes it as malformed, never as a far-future
# instant that crashes the first command rendering it.
MAX_STAMP_MS = 253_402_300_799_999


class Malformed(ValueError):
    """The bytes are not a record of the expected shape."""


def _refuse_constant(name: str) -> Any:
    raise Malformed(f"non-finite JSON constant {name}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise Malformed(f"duplicate field {key!r}")
        result[key] = value
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)


def load_json(data: str | bytes) -> Any:
    """Decode ``data`` as any JSON value with the standard library's permissive rules (a hook
    payload, a harness's frame), or raise :class:`Malformed` (a :class:`ValueError`). Nesting
    deeper than the interpreter's recursion limit — a 2 KB line of 1,000 brackets — is malformed
    input like any other, never a ``RecursionError`` escaping to the caller."""
    try:
        return json.loads(data)
    except (UnicodeError, ValueError, RecursionError) as error:
        raise Malformed(str(error)) from error


def load_object(data: bytes) -> dict[str, Any]:
    """Decode ``data`` as one JSON object, or raise :class:`Malformed`."""
    try:
        text = data.decode("utf-8")
        value = _DECODER.decode(text)
        # A lone surrogate escape ("\\ud800") decodes in Python but is not a Unicode string; the
        # original's decoder refuses it, and it could not be re-encoded for output anyway. Valid
        # UTF-8 input holds no raw surrogate, so only a text with a \u escape needs the check
        # (skipping it otherwise saves a third of the roster's decoding time).
        if "\\u" in text:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except Malformed:
        raise
    except (UnicodeError, ValueError, RecursionError) as error:
        raise Malformed(str(error)) from error
    if not isinstance(value, dict):
        raise Malformed("not a JSON object")
    return value


def string(record: dict[str, Any], name: str, *, default: str | None = None) -> str:
    """A string field (``null`` refused). Absent: ``default``, or :class:`Malformed` if none."""
    if name not in record:
        if default is None:
            raise Malformed(f"missing field {name!r}")
        return default
    value = record[name]
    if not isinstance(value, str):
        raise Malformed(f"field {name!r} is not a string")
    return value


def optional_string(record: dict[str, Any], name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Malformed(f"field {name!r} is not a string")
    return value


def _u64(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
        raise Malformed(f"field {name!r} is not an unsigned 64-bit integer")
    return value


def unsigned(record: dict[str, Any], name: str, *, default: int | None = None) -> int:
    """An unsigned integer field. Absent: ``default``, or :class:`Malformed` if none."""
    if name not in record:
        if default is None:
            raise Malformed(f"missing field {name!r}")
        return default
    return _u64(record[name], name)


def optional_unsigned(record: dict[str, Any], name: str) -> int | None:
    value = record.get(name)
    if value is None:
        return None
    return _u64(value, name)


def is_stamp(value: Any) -> bool:
    """Whether ``value`` is a millisecond stamp st2 reads: an integer from 0 to :data:`MAX_STAMP_MS`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_STAMP_MS


def stamp(record: dict[str, Any], name: str, *, default: int | None = None) -> int:
    """A millisecond stamp field (:func:`is_stamp`). Absent: ``default``, or :class:`Malformed` if none."""
    if name not in record:
        if default is None:
            raise Malformed(f"missing field {name!r}")
        return default
    value = record[name]
    if not is_stamp(value):
        raise Malformed(f"field {name!r} is not a millisecond stamp up to {MAX_STAMP_MS}")
    return value


def optional_stamp(record: dict[str, Any], name: str) -> int | None:
    """:func:`stamp`, with ``null`` or absence read as None."""
    if record.get(name) is None:
        return None
    return stamp(record, name)


def optional_number(record: dict[str, Any], name: str) -> float | None:
    """An optional JSON number, as a float (an integral ``33`` reads as ``33.0``)."""
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Malformed(f"field {name!r} is not a number")
    try:
        number = float(value)
    except OverflowError as error:
        raise Malformed(f"field {name!r} is out of range") from error
    if not math.isfinite(number):
        raise Malformed(f"field {name!r} is not finite")
    return number
