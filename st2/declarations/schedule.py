"""``schedule "<name>" { every "24h" | at "09:00" "Europe/Berlin"; prompt "…" }``: the shape of a
scheduled prompt, judged without touching anything but the zone database.

The name is 1..64 characters of letters, digits, ``.``, ``_`` and ``-`` (it keys the prompt's
stream events). Exactly one cadence: ``every`` takes one duration (:mod:`st2.declarations.durations`,
whole seconds from 60 s to the 365 d every duration is bounded by); ``at`` takes a 24-hour
``HH:MM`` and an IANA zone name that :mod:`zoneinfo` knows on this host. ``prompt`` is the text
posted: 1..8000 characters, no control character but newline and tab. Every problem is one
``schedule-invalid`` diagnostic at its token.
"""

from __future__ import annotations

import re
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument, plain
from st2.declarations.diagnostics import DECLARATION
from st2.declarations.durations import DurationRefused, parse_duration, shown_value
from st2.declarations.model import Schedule

SCHEDULE_FIELDS = ("every", "at", "prompt")
MIN_EVERY_SECONDS = 60
PROMPT_MAX_CHARS = 8000
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9][A-Za-z0-9_+-]*){0,2}")
HELP = 'write: schedule "daily" { every "24h"; prompt "…" } or { at "09:00" "Europe/Berlin"; prompt "…" }'


def read_schedule(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> Schedule | None:
    """The block's :class:`~st2.declarations.model.Schedule`, or None (each problem reported at
    its token)."""
    name = plain(node.args[0]) if node.args else None
    if len(node.args) != 1 or not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        context.report("schedule-invalid", path, argument(0) if node.args else NAME, field_path,
                       "a schedule needs one name of 1..64 letters, digits, '.', '_' or '-'", help=HELP)
        return None
    field_path = field_path + (name,)
    fields.no_properties(context, node, path, field_path)
    children, clean = fields.closed_children(context, node, path, field_path, SCHEDULE_FIELDS,
                                             ", ".join(SCHEDULE_FIELDS), DECLARATION, block="schedule")
    broken = not clean
    values: dict[str, Any] = {}
    for index, child in children:
        child_path, child_field = path + (index,), field_path + (child.name,)
        reader = {"every": _every, "at": _at, "prompt": _prompt}[child.name]
        values[child.name] = reader(context, child, child_path, child_field, name)
        broken = broken or values[child.name] is None
    if "every" in values and "at" in values:
        context.report("schedule-invalid", path + (_index(node, "at"),), NAME, field_path + ("at",),
                       f"schedule \"{name}\" declares both `every` and `at`; choose one cadence", help=HELP)
        return None
    if "every" not in values and "at" not in values:
        context.report("schedule-invalid", path, WHOLE, field_path,
                       f"schedule \"{name}\" needs a cadence: `every` or `at`", help=HELP)
        return None
    if "prompt" not in values:
        context.report("schedule-invalid", path, WHOLE, field_path, f"schedule \"{name}\" needs a `prompt`", help=HELP)
        return None
    if broken:
        return None
    at = values.get("at")
    return Schedule(name=name, prompt=values["prompt"], every_seconds=values.get("every"),
                    at=None if at is None else at[0], zone=None if at is None else at[1])


def _index(node: Any, name: str) -> int:
    return next(index for index, child in enumerate(node.children) if child.name == name)


def _every(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...], name: str) -> int | None:
    text = fields.one_value(context, node, path, field_path, "string")
    if text is None:
        return None
    try:
        seconds = parse_duration(text)
    except DurationRefused as refusal:
        context.report("schedule-invalid", path, argument(0), field_path, f"schedule \"{name}\" `every`: {refusal}")
        return None
    if seconds < MIN_EVERY_SECONDS or seconds != int(seconds):
        context.report("schedule-invalid", path, argument(0), field_path,
                       f"schedule \"{name}\" `every` must be whole seconds and at least 60s, found \"{text}\"")
        return None
    return int(seconds)


def _at(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...],
        name: str) -> tuple[tuple[int, int], str] | None:
    fields.no_properties(context, node, path, field_path)
    fields.no_children(context, node, path, field_path)
    arguments = [plain(value) for value in node.args]
    if len(arguments) != 2 or not all(isinstance(value, str) for value in arguments):
        context.report("schedule-invalid", path, argument(min(len(arguments), 2)) if arguments else NAME, field_path,
                       f"schedule \"{name}\" `at` takes a time and a zone: at \"09:00\" \"Europe/Berlin\"")
        return None
    time_text, zone = arguments
    match = _TIME.fullmatch(time_text)
    if match is None:
        context.report("schedule-invalid", path, argument(0), field_path,
                       f"schedule \"{name}\" `at` time must be 24-hour HH:MM, found {shown_value(time_text)}")
        return None
    if zone_problem(zone) is not None:
        context.report("schedule-invalid", path, argument(1), field_path,
                       f"schedule \"{name}\" `at` zone: {zone_problem(zone)}")
        return None
    return (int(match.group(1)), int(match.group(2))), zone


def zone_problem(zone: str) -> str | None:
    """Why ``zone`` is not an IANA zone name this host's zone database has, or None."""
    if len(zone) > 64 or not _ZONE.fullmatch(zone):
        return f"{shown_value(zone)} is not an IANA zone name (Area/Location)"
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"\"{zone}\" is not in this host's zone database"
    return None


def _prompt(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...], name: str) -> str | None:
    text = fields.one_value(context, node, path, field_path, "string")
    if text is None:
        return None
    if not text.strip() or len(text) > PROMPT_MAX_CHARS or any(
            (ord(character) < 32 and character not in "\n\t") or 0x7f <= ord(character) < 0xa0 for character in text):
        context.report("schedule-invalid", path, argument(0), field_path,
                       f"schedule \"{name}\" `prompt` must be 1..{PROMPT_MAX_CHARS} characters of text "
                       "(no control character but newline and tab)")
        return None
    return text
