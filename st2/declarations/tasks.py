"""``pty``, ``exec`` and ``stream`` task blocks, and the agent's ``restart`` block."""

from __future__ import annotations

from functools import partial
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument, kdl_repr, plain, property_
from st2.declarations.durations import MAX_DURATION, DurationRefused, parse_duration
from st2.declarations.model import LIFECYCLES, RESTART_MODES, Restart, Task

TASK_FIELDS = ("id", "command", "argv", "cwd", "keep", "lifecycle", "tags", "env")


def read_task(context: Context, node: Any, path: tuple[int, ...], agent_field_path: tuple[str, ...]) -> Task | None:
    """One task block. ``None`` when it has no name (reported as ``task-name-missing``)."""
    kind = node.name
    name = plain(node.args[0]) if node.args else None
    if len(node.args) != 1 or not isinstance(name, str) or not name:
        context.report_shape("task-name-missing", path, WHOLE, agent_field_path + (kind,),
                             f"{kind} task must have one positional string name")
        return None
    field_path = agent_field_path + (kind, name)
    fields.no_properties(context, node, path, field_path)
    values: dict[str, Any] = {}
    seen: set[str] = set()
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name not in TASK_FIELDS:
            context.report_shape("unknown-node", child_path, NAME, child_field,
                                 f"unknown node `{child.name}` in {kind} task \"{name}\"",
                                 help=partial(fields.suggestion, child.name, TASK_FIELDS))
            continue
        if child.name in seen:
            context.report_shape("duplicate-field", child_path, NAME, child_field,
                                 f"`{child.name}` is declared more than once in {kind} task \"{name}\"")
            continue
        seen.add(child.name)
        if child.name in ("id", "command", "cwd", "lifecycle"):
            values[child.name] = fields.one_value(context, child, child_path, child_field, "string")
        elif child.name == "keep":
            values["keep"] = fields.one_value(context, child, child_path, child_field, "boolean")
        elif child.name == "argv":
            values["argv"] = read_argv(context, child, child_path, child_field)
        elif child.name == "env":
            values["env"] = fields.string_map(context, child, child_path, child_field)
        elif child.name == "tags":
            values["tags"] = read_tags(context, child, child_path, child_field)
    check_launch(context, node, path, field_path, values, seen, f"{kind} task \"{name}\"")
    lifecycle = values.get("lifecycle")
    if lifecycle is not None and lifecycle not in LIFECYCLES:
        index = _child_index(node, "lifecycle")
        context.report("unknown-lifecycle", path + (index,), argument(0), field_path + ("lifecycle",),
                       f"unknown lifecycle \"{lifecycle}\" for {kind} task \"{name}\"; expected service or adopt-only")
        lifecycle = None
    return Task(kind=kind, name=name, argv=values.get("argv"), command=values.get("command"),
                id=values.get("id"), cwd=values.get("cwd"), env=values.get("env") or {},
                tags=values.get("tags") or {}, keep=bool(values.get("keep")),
                lifecycle=lifecycle or "service")


def read_argv(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> tuple[str, ...] | None:
    argv = fields.strings(context, node, path, field_path)
    if argv is None:
        return None
    if not argv:
        context.report("empty-argv", path, NAME, field_path, "`argv` needs at least the program to run")
        return None
    if argv[0] == "":
        context.report("empty-argv", path, argument(0), field_path, "`argv` names an empty program")
        return None
    return argv


def check_launch(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...],
                 values: dict[str, Any], seen: set[str], where: str) -> None:
    """``argv`` and ``command`` are mutually exclusive; report the second one declared."""
    if "argv" in seen and "command" in seen:
        second = max(_child_index(node, "argv"), _child_index(node, "command"))
        second_name = node.children[second].name
        context.report("argv-and-command", path + (second,), NAME, field_path + (second_name,),
                       f"{where} declares both `argv` and `command`; choose one launch form",
                       help="`argv` runs the program directly; `command` runs one line under `sh -c`")
        values.pop("argv", None)
        values.pop("command", None)
    command = values.get("command")
    if command == "":
        index = _child_index(node, "command")
        context.report("invalid-value", path + (index,), argument(0), field_path + ("command",),
                       f"{where} declares an empty `command`")
        values.pop("command", None)


def read_tags(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> dict[str, str]:
    """``tags role="agent" "st.network"="x"``: string properties only."""
    fields.no_arguments(context, node, path, field_path)
    fields.no_children(context, node, path, field_path)
    tags: dict[str, str] = {}
    for key, value in node.properties.items():
        value = plain(value)
        if not isinstance(value, str):
            context.report_shape("invalid-value", path, property_(key), field_path + (key,),
                                 f"tag `{key}` must be a string, found {kdl_repr(value)}")
            continue
        tags[key] = value
    return tags


RESTART_FIELDS = ("attempts", "interval", "delay", "mode")


def read_restart(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> Restart | None:
    """``restart { attempts 3; interval "60s"; delay "0s"; mode "delay" }``; omitted fields take
    the runner default. A malformed field is an error, never silently the default."""
    fields.no_arguments(context, node, path, field_path)
    fields.no_properties(context, node, path, field_path)
    default = Restart()
    values: dict[str, Any] = {"attempts": default.attempts, "interval_seconds": default.interval_seconds,
                              "delay_seconds": default.delay_seconds, "mode": default.mode}
    valid = True
    seen: set[str] = set()
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name not in RESTART_FIELDS:
            context.report_shape("unknown-node", child_path, NAME, child_field,
                                 f"unknown node `{child.name}` in `restart`",
                                 help=partial(fields.suggestion, child.name, RESTART_FIELDS))
            valid = False
            continue
        if child.name in seen:
            context.report_shape("duplicate-field", child_path, NAME, child_field,
                                 f"`{child.name}` is declared more than once in `restart`")
            valid = False
            continue
        seen.add(child.name)
        if child.name == "attempts":
            attempts = fields.one_value(context, child, child_path, child_field, "integer")
            if attempts is None:
                valid = False
            elif attempts < 0 or attempts > 2**32 - 1:
                context.report("restart-invalid", child_path, argument(0), child_field,
                               f"restart `attempts` must be between 0 and 4294967295, found {attempts}")
                valid = False
            else:
                values["attempts"] = attempts
        elif child.name in ("interval", "delay"):
            raw = fields.one_value(context, child, child_path, child_field, "string")
            try:
                seconds = parse_duration(raw) if raw is not None else None
            except DurationRefused as refusal:
                context.report("restart-invalid", child_path, argument(0), child_field, f"restart `{child.name}` {refusal}",
                               help=f'write a number with a unit: "500ms", "60s", "5m", "2h", "1d" '
                                    f'(at most {MAX_DURATION})')
                seconds = None
            if seconds is None:
                valid = False
            else:
                values[f"{child.name}_seconds"] = seconds
        else:
            mode = fields.one_value(context, child, child_path, child_field, "string")
            if mode is not None and mode not in RESTART_MODES:
                context.report("restart-invalid", child_path, argument(0), child_field,
                               f"restart `mode` \"{mode}\" is unknown; expected \"delay\" or \"fail\"")
                mode = None
            if mode is None:
                valid = False
            else:
                values["mode"] = mode
    return Restart(**values) if valid else None


def _child_index(node: Any, name: str) -> int:
    for index, child in enumerate(node.children):
        if child.name == name:
            return index
    return 0
