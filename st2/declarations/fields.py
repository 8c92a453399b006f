"""Shape checks for single declaration fields: "exactly one string", "one boolean", "strings only".

Each helper reports through a :class:`~st2.declarations.context.Context` and returns the value,
or ``None`` when the shape is wrong (a wrong value never becomes a default). Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

from st2.declarations.context import NAME, WHOLE, Context, argument, kdl_repr, plain, property_

Path_ = tuple[int, ...]
FieldPath = tuple[str, ...]


def no_properties(context: Context, node: Any, path: Path_, field_path: FieldPath,
                  allowed: tuple[str, ...] = ()) -> bool:
    clean = True
    for key in node.properties:
        if key not in allowed:
            expected = ", ".join(f"`{name}`" for name in allowed) or "none"
            context.report("unknown-property", path, property_(key), field_path,
                           f"`{node.name}` does not accept the property `{key}` (accepted: {expected})",
                           layer="declaration")
            clean = False
    return clean


def no_children(context: Context, node: Any, path: Path_, field_path: FieldPath) -> bool:
    if node.children:
        context.report_shape("invalid-value", path, WHOLE, field_path,
                             f"`{node.name}` takes no children block")
        return False
    return True


def no_arguments(context: Context, node: Any, path: Path_, field_path: FieldPath) -> bool:
    if node.args:
        context.report_shape("invalid-value", path, argument(0), field_path,
                             f"`{node.name}` takes no arguments")
        return False
    return True


def one_value(context: Context, node: Any, path: Path_, field_path: FieldPath, kind: str,
              allowed_properties: tuple[str, ...] = ()) -> Any:
    """The single positional argument of ``node`` if it is of ``kind`` (string, boolean,
    integer); else report ``invalid-value`` and return ``None``."""
    arguments = node.args
    if len(arguments) == 1 and not node.properties and not node.children:
        value = arguments[0]
        # The common, well-formed case without a single extra call (the roster loads every
        # declaration of the catalog on each run).
        if value.__class__ is _FAST_TYPES.get(kind):
            return value
    shaped = no_properties(context, node, path, field_path, allowed_properties)
    shaped = no_children(context, node, path, field_path) and shaped
    article = "an" if kind[0] in "aeiou" else "a"
    if len(node.args) != 1:
        part = argument(1) if len(node.args) > 1 else NAME
        context.report_shape("invalid-value", path, part, field_path,
                             f"`{node.name}` takes exactly one {kind} argument, found {len(node.args)}")
        return None
    value = plain(node.args[0])
    if not _is_kind(value, kind):
        context.report_shape("invalid-value", path, argument(0), field_path,
                             f"`{node.name}` must be {article} {kind}, found {kdl_repr(value)}")
        return None
    return value if shaped else None


def strings(context: Context, node: Any, path: Path_, field_path: FieldPath) -> tuple[str, ...] | None:
    """All positional arguments of ``node`` as strings (argv-like), or ``None`` if one is not."""
    no_properties(context, node, path, field_path)
    no_children(context, node, path, field_path)
    values = []
    for index, value in enumerate(node.args):
        value = plain(value)
        if not isinstance(value, str):
            context.report_shape("invalid-value", path, argument(index), field_path,
                                 f"`{node.name}` accepts only string arguments, found {kdl_repr(value)}")
            return None
        values.append(value)
    return tuple(values)


def string_map(context: Context, node: Any, path: Path_, field_path: FieldPath) -> dict[str, str]:
    """``env { KEY "value"; … }``: every child is a name with one string."""
    no_arguments(context, node, path, field_path)
    no_properties(context, node, path, field_path)
    mapping: dict[str, str] = {}
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        value = one_value(context, child, child_path, field_path + (child.name,), "string")
        if value is None:
            continue
        if child.name in mapping:
            context.report_shape("duplicate-field", child_path, NAME, field_path + (child.name,),
                                 f"`{child.name}` is declared more than once in `{node.name}`")
            continue
        mapping[child.name] = value
    return mapping


_FAST_TYPES = {"string": str, "boolean": bool, "integer": int}


def _is_kind(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    raise ValueError(kind)


_NOT_PRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable_line(value: str) -> bool:
    """No control characters (C0, DEL, C1), no Unicode line or paragraph separators, and no
    invisible format characters (category Cf: the bidi overrides and isolates U+202A–202E and
    U+2066–2069, zero-width U+200B–200F, U+FEFF …), which reorder or hide what a terminal shows
    of every line a presentation value is printed in (agents, top, Doctor): refused here, so
    nothing prints one."""
    if _NOT_PRINTABLE.search(value) is not None:
        return False
    if value.isascii():
        return True
    import unicodedata

    return not any(unicodedata.category(character) == "Cf" for character in value)


def suggestion(word: str, choices: tuple[str, ...] | list[str]) -> str | None:
    """A "did you mean" hint for a misspelt node name."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f"did you mean `{close[0]}`?" if close else None


def closed_children(context: Context, node: Any, path: Path_, field_path: FieldPath, allowed: tuple[str, ...],
                    expected: str, layer: str, block: str | None = None) -> tuple[list[tuple[int, Any]], bool]:
    """The children of a block with a closed field set, each named at most once: ``(accepted,
    clean)``, where ``accepted`` holds ``(index, child)`` of every allowed first occurrence and
    ``clean`` is False after an unknown or repeated field was reported (at its own position;
    ``expected`` is the message's list of the allowed names; ``block`` names the block in the
    messages, by default the last element of ``field_path``)."""
    from functools import partial

    accepted: list[tuple[int, Any]] = []
    named: set[str] = set()
    clean = True
    block = block or field_path[-1]
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name not in allowed:
            context.report("unknown-node", child_path, NAME, child_field,
                           f"unknown {block} field `{child.name}` (expected {expected})",
                           layer=layer, help=partial(suggestion, child.name, allowed))
            clean = False
        elif child.name in named:
            context.report("duplicate-field", child_path, NAME, child_field,
                           f"`{child.name}` is declared more than once in `{block}`", layer=layer)
            clean = False
        else:
            named.add(child.name)
            accepted.append((index, child))
    return accepted, clean


def duration(context: Context, child: Any, child_path: Path_, child_field: FieldPath, value: str, *,
             positive: bool, example: str, layer: str) -> float | None:
    """The seconds a block child's duration ``value`` declares, or None after reporting why it is
    not one (or, when ``positive``, not above zero) at its argument."""
    from st2.declarations.durations import MAX_DURATION, DurationRefused, parse_duration, shown_value

    try:
        seconds = parse_duration(value)
        if positive and seconds <= 0:
            raise DurationRefused(f"{shown_value(value)} is not a positive duration")
    except DurationRefused as refusal:
        context.report("invalid-value", child_path, argument(0), child_field, f"{child.name} {refusal}",
                       layer=layer, help=f'write e.g. {example} (at most {MAX_DURATION})')
        return None
    return float(seconds)
