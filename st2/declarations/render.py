"""``render { … }``: ordered materialization operations, and ``resource`` bindings."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument, kdl_repr, plain, property_
from st2.declarations.model import (JSON_ARRAY_MODES, RENDER_OPERATIONS, RESOURCE_REASON_MAX_BYTES,
                                    RenderOperation, Resource)

USAGE = {
    "copy": 'copy "<source>" "<target>"',
    "file": 'file "<target>" "<content>"',
    "json-upsert": 'json-upsert "<target>" [arrays="union"|"replace"] "<json>"',
    "ensure-line": 'ensure-line "<target>" "<line>"',
    "git-exclude": 'git-exclude "<path>" …',
}


def read_render(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> tuple[RenderOperation, ...]:
    fields.no_arguments(context, node, path, field_path)
    fields.no_properties(context, node, path, field_path)
    operations: list[RenderOperation] = []
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name not in RENDER_OPERATIONS:
            context.report("unknown-render-operation", child_path, NAME, child_field,
                           f"unknown render operation `{child.name}`; expected one of {', '.join(RENDER_OPERATIONS)}",
                           layer="declaration", help=partial(fields.suggestion, child.name, RENDER_OPERATIONS))
            continue
        operations.extend(_read_operation(context, child, child_path, child_field))
    return tuple(operations)


def _read_operation(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> list[RenderOperation]:
    operation = node.name
    allowed = ("arrays",) if operation == "json-upsert" else ()
    fields.no_properties(context, node, path, field_path, allowed)
    arguments = []
    for index, value in enumerate(node.args):
        value = plain(value)
        if not isinstance(value, str):
            context.report("render-invalid", path, argument(index), field_path,
                           f"`{operation}` accepts only string arguments, found {kdl_repr(value)}",
                           help=USAGE[operation])
            return []
        arguments.append(value)
    content = _content_child(context, node, path, field_path, operation)
    if content is not None:
        arguments.append(content)

    if operation == "git-exclude":
        if not arguments:
            return _bad_arity(context, node, path, field_path)
        for index, target in enumerate(arguments):
            if not target:
                context.report("render-invalid", path, argument(index), field_path, "git-exclude needs non-empty paths")
                return []
        return [RenderOperation(operation=operation, target=target) for target in arguments]
    if len(arguments) != 2:
        return _bad_arity(context, node, path, field_path)
    first, second = arguments
    if first == "":
        context.report("render-invalid", path, argument(0), field_path,
                       f"`{operation}` needs a non-empty target", help=USAGE[operation])
        return []

    if operation == "copy":
        return [RenderOperation(operation=operation, source=first, target=second)]
    if operation == "ensure-line":
        if "\n" in second or "\r" in second:
            context.report("render-invalid", path, argument(1), field_path,
                           "`ensure-line` takes one line without line breaks", help=USAGE[operation])
            return []
        return [RenderOperation(operation=operation, target=first, line=second)]
    arrays = None
    if operation == "json-upsert":
        arrays = plain(node.properties.get("arrays", "union"))
        if arrays not in JSON_ARRAY_MODES:
            context.report("render-invalid", path, property_("arrays"), field_path + ("arrays",),
                           f"`arrays` must be \"union\" or \"replace\", found {kdl_repr(arrays)}")
            return []
        import json

        try:
            parsed = json.loads(second)
        except ValueError as error:
            context.report("render-invalid", path, argument(1) if len(node.args) > 1 else WHOLE, field_path,
                           f"`json-upsert` content is not valid JSON: {error}")
            return []
        if not isinstance(parsed, dict):
            context.report("render-invalid", path, argument(1) if len(node.args) > 1 else WHOLE, field_path,
                           "`json-upsert` content must be a JSON object")
            return []
    return [RenderOperation(operation=operation, target=first, content=second, arrays=arrays)]


def _content_child(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...],
                   operation: str) -> str | None:
    """``file "<target>" { content "…" }`` is the block form of the content argument."""
    if not node.children:
        return None
    if operation not in ("file", "json-upsert") or len(node.children) != 1 or node.children[0].name != "content":
        context.report("render-invalid", path, WHOLE, field_path,
                       f"`{operation}` accepts no children" if operation not in ("file", "json-upsert")
                       else f"`{operation}` accepts only a `content` child", help=USAGE[operation])
        return None
    return fields.one_value(context, node.children[0], path + (0,), field_path + ("content",), "string")


def _bad_arity(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> list[RenderOperation]:
    context.report("render-invalid", path, WHOLE, field_path,
                   f"`{node.name}` has the wrong arguments", help=f"write: {USAGE[node.name]}")
    return []


RESOURCE_PROPERTIES = ("uri", "_tag", "relation", "reason")
_RELATION = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?!-))*")
_BAD_PERCENT_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_URI_FORBIDDEN_PATTERN = re.compile(r'[\x00-\x20\x7f "<>\\^`{|}]')


def read_resource(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> Resource | None:
    """``resource "<name>" uri="<absolute URI>" [_tag="…"] [relation="…"] [reason="…"]``."""
    fields.no_children(context, node, path, field_path)
    name = plain(node.args[0]) if node.args else None
    if len(node.args) != 1 or not isinstance(name, str) or not name:
        context.report("resource-invalid", path, WHOLE, field_path,
                       "a resource binding needs exactly one positional string name")
        return None
    field_path = field_path + (name,)
    fields.no_properties(context, node, path, field_path, RESOURCE_PROPERTIES)
    values: dict[str, str] = {}
    for key in RESOURCE_PROPERTIES:
        if key not in node.properties:
            continue
        value = plain(node.properties[key])
        if not isinstance(value, str):
            context.report("resource-invalid", path, property_(key), field_path + (key,),
                           f"resource \"{name}\" `{key}` must be a string, found {kdl_repr(value)}")
            return None
        values[key] = value
    if "uri" not in values:
        context.report("resource-invalid", path, WHOLE, field_path,
                       f"resource \"{name}\" needs a `uri` property")
        return None
    problem = absolute_uri_problem(values["uri"])
    if problem is None:
        from st2.declarations.resource_providers import target_problem

        problem = target_problem(values["uri"])
    if problem is not None:
        context.report("resource-invalid", path, property_("uri"), field_path + ("uri",),
                       f"resource \"{name}\" `uri` must be an exact absolute URI: {problem}")
        return None
    if "_tag" in values and values["_tag"] == "":
        context.report("resource-invalid", path, property_("_tag"), field_path + ("_tag",),
                       f"resource \"{name}\" has an empty `_tag`")
        return None
    relation = values.get("relation")
    if relation is not None and (len(relation) > 64 or not _RELATION.fullmatch(relation) or relation.endswith("-")):
        context.report("resource-invalid", path, property_("relation"), field_path + ("relation",),
                       f"resource \"{name}\" `relation` must be lowercase ASCII kebab-case of 1..64 bytes")
        return None
    reason = values.get("reason")
    if reason is not None and (not reason or len(reason.encode()) > RESOURCE_REASON_MAX_BYTES
                               or reason.strip() != reason or not fields.printable_line(reason)):
        context.report("resource-invalid", path, property_("reason"), field_path + ("reason",),
                       f"resource \"{name}\" `reason` must be 1..160 bytes on one line without surrounding whitespace")
        return None
    return Resource(name=name, uri=values["uri"], tag=values.get("_tag"), relation=relation, reason=reason)


def absolute_uri_problem(uri: str) -> str | None:
    """Why ``uri`` is not an absolute RFC 3986 URI (checked without normalizing it), or ``None``."""
    scheme, colon, rest = uri.partition(":")
    if not colon:
        return "missing scheme"
    if not _SCHEME.fullmatch(scheme):
        return "invalid scheme"
    if not uri.isascii():
        return "contains non-ASCII characters"
    if _URI_FORBIDDEN_PATTERN.search(rest):
        return "contains a raw character RFC 3986 forbids"
    if rest.count("#") > 1:
        return "contains more than one fragment delimiter"
    if "%" in rest and _BAD_PERCENT_ESCAPE.search(rest):
        return "contains an invalid percent escape"
    return None
