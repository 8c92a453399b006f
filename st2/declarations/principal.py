"""A declared non-agent service principal, ``principals/<host>/<name>/principal.kdl``::

    principal "ci-bridge" host="h" {        // host is optional; the path gives it
        name "CI bridge"                     // optional presentation, <=160 chars
        description "Posts CI results"       // optional, <=1000 chars
        meta { managed-by "nix" }            // optional ownership markers
    }

A principal can send requests and receive replies through its own inbox, but it is not a seat:
nothing is launched for it and it has no presence. Its name is its directory name.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from st2.declarations import fields
from st2.declarations.context import NAME, Context, argument, plain, property_
from st2.declarations.diagnostics import CATALOG, ERROR, SYNTAX, Diagnostic
from st2.declarations.model import DESCRIPTION_MAX_CHARS, EMPTY, NAME_MAX_CHARS
from st2.fs.read import DECLARATION_LIMIT, read_text

PRINCIPAL_FIELDS = ("name", "description", "meta")


class PrincipalDeclaration(NamedTuple):
    principal: str
    host: str | None
    path: Path
    name: str | None = None
    description: str | None = None
    meta: Mapping[str, Any] = EMPTY


def load_principal(path: Path | str, *, source: str | None = None) -> tuple[PrincipalDeclaration | None, list[Diagnostic]]:
    """Read and validate one ``principal.kdl``; ``None`` with the diagnostics on any error."""
    path = Path(path)
    parts = path.parts
    host, directory_name = (parts[-3], parts[-2]) if len(parts) >= 4 and parts[-4] == "principals" else (None, None)
    if source is None:
        source = f"principals/{host}/{directory_name}/principal.kdl" if host is not None else str(path)
    try:
        text = read_text(path, DECLARATION_LIMIT)
    except (OSError, UnicodeDecodeError) as error:
        return None, [Diagnostic(code="unreadable-declaration", severity=ERROR, layer=CATALOG, source=source,
                                 span=None, field_path=None, message=f"cannot read the declaration: {error}")]
    import ckdl

    from st2.declarations.spans import SourceText, locate_syntax_error

    context = Context(text, source)
    try:
        document = ckdl.parse(text, version=2)
    except ckdl.ParseError:
        start, end, message = locate_syntax_error(text)
        return None, [Diagnostic(code="kdl-syntax", severity=ERROR, layer=SYNTAX, source=source,
                                 span=SourceText(text).span(start, end), field_path=None, message=message)]
    from st2.declarations.spans import nesting_refusal

    deep = nesting_refusal(text, document.nodes)
    if deep is not None:
        return None, [Diagnostic(code="nesting-too-deep", severity=ERROR, layer=SYNTAX, source=source,
                                 span=SourceText(text).span(deep[0], deep[1]), field_path=None, message=deep[2])]
    principals = [index for index, node in enumerate(document.nodes) if node.name == "principal"]
    for index, node in enumerate(document.nodes):
        if node.name != "principal":
            context.report_shape("unexpected-top-level-node", (index,), NAME, (node.name,),
                                 f"principal.kdl accepts only a top-level `principal` node, found `{node.name}`")
    for index in principals[1:]:
        context.report_shape("duplicate-field", (index,), NAME, ("principal",),
                             "principal.kdl declares exactly one `principal`; this is another")
    if not principals:
        context.add(Diagnostic(code="missing-agent", severity=ERROR, layer="declaration", source=source,
                               span=SourceText(text).span(0, 0), field_path=None,
                               message="principal.kdl declares no `principal` node"))
        return None, context.diagnostics()
    node_path = (principals[0],)
    node = document.nodes[principals[0]]
    declared = plain(node.args[0]) if len(node.args) == 1 else None
    fields.no_properties(context, node, node_path, ("principal",), allowed=("host",))
    declared_host = plain(node.properties["host"]) if "host" in node.properties else None
    if "host" in node.properties and (not isinstance(declared_host, str) or
                                      (host is not None and declared_host != host)):
        context.report("host-mismatch", node_path, property_("host"), ("principal", "host"),
                       f"host {declared_host!r} differs from the host directory {host!r}")
    if not isinstance(declared, str) or not declared:
        context.report_shape("invalid-value", node_path, argument(0) if node.args else NAME, ("principal",),
                             "`principal` takes one string argument: its name")
        declared = None
    elif directory_name is not None and declared != directory_name:
        context.report("identity-mismatch", node_path, argument(0), ("principal", declared),
                       f"principal \"{declared}\" differs from its directory \"{directory_name}\"")
    values: dict[str, Any] = {}
    for index, child in enumerate(node.children):
        child_path = node_path + (index,)
        field_path = ("principal", declared or "?", child.name)
        if child.name not in PRINCIPAL_FIELDS:
            context.report_shape("unknown-node", child_path, NAME, field_path,
                                 f"unknown node `{child.name}` in principal",
                                 help=partial(fields.suggestion, child.name, PRINCIPAL_FIELDS))
            continue
        if child.name in values:
            context.report_shape("duplicate-field", child_path, NAME, field_path,
                                 f"`{child.name}` is declared more than once")
            continue
        if child.name == "meta":
            fields.no_arguments(context, child, child_path, field_path)
            values["meta"] = {grandchild.name: tuple(plain(value) for value in grandchild.args)
                              for grandchild in child.children}
            continue
        value = fields.one_value(context, child, child_path, field_path, "string")
        limit = NAME_MAX_CHARS if child.name == "name" else DESCRIPTION_MAX_CHARS
        if value is not None and len(value) > limit:
            context.report(f"{child.name}-too-long", child_path, argument(0), field_path,
                           f"`{child.name}` is {len(value)} characters; the limit is {limit}")
        elif value is not None and (not value or value.strip() != value or not fields.printable_line(value)):
            context.report("presentation-invalid", child_path, argument(0), field_path,
                           f"`{child.name}` must be one non-empty printable line without surrounding whitespace")
        values[child.name] = value
    diagnostics = context.diagnostics()
    if context.has_errors or declared is None:
        return None, diagnostics
    return PrincipalDeclaration(principal=declared, host=host, path=path, name=values.get("name"),
                                description=values.get("description"), meta=values.get("meta") or EMPTY), diagnostics

