"""The catalog's own declaration, ``<catalog>/catalog.kdl``::

    catalog {
        pty-root "/run/agents/pty"     // where PTY session sockets live (relative: under the catalog)
        archive-after "7d"             // retired seats are archived this long after retirement; "0" disables
    }

An absent file is the default declaration. The field set is closed: a misspelt field is an error,
because a typo such as ``pty_root`` would otherwise fall back silently to the default. Standard
library only until a file is parsed (then ckdl).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import NamedTuple

from st2.declarations.diagnostics import CATALOG, ERROR, SYNTAX, Diagnostic
from st2.fs.read import DECLARATION_LIMIT, read_text

# The declaration's name under the catalog root and the source its diagnostics name. The layout
# (st2.catalog.layout.CATALOG_DECLARATION) sits above this package, which imports no catalog code.
SOURCE = "catalog.kdl"
DEFAULT_ARCHIVE_AFTER = "7d"
CATALOG_FIELDS = ("pty-root", "archive-after")


class CatalogDeclaration(NamedTuple):
    pty_root: str | None = None
    archive_after: str = DEFAULT_ARCHIVE_AFTER

    @property
    def archive_after_seconds(self) -> float | None:
        """Seconds after retirement before archival; ``None`` when archival is disabled (``"0"``)."""
        from st2.declarations.durations import parse_duration_seconds

        seconds = parse_duration_seconds(self.archive_after)
        return None if not seconds else seconds

    def resolved_pty_root(self, catalog_root: Path) -> Path | None:
        """The declared pty root with ``$CATALOG`` and ``~`` expanded; a relative value anchors at
        the catalog, never at the caller's working directory. ``None`` when undeclared."""
        if self.pty_root is None:
            return None
        value = self.pty_root.replace("${CATALOG}", str(catalog_root)).replace("$CATALOG", str(catalog_root))
        return Path(catalog_root) / Path(value).expanduser()


def load_catalog_declaration(catalog_root: Path) -> tuple[CatalogDeclaration, list[Diagnostic]]:
    """Read ``<catalog_root>/catalog.kdl``. On any error the default declaration is returned with
    the diagnostics, so runtime callers keep working while ``st2 validate`` reports the problem."""
    source = SOURCE
    path = Path(catalog_root) / source
    try:
        text = read_text(path, DECLARATION_LIMIT)
    except FileNotFoundError:
        return CatalogDeclaration(), []
    except (OSError, UnicodeDecodeError) as error:
        return CatalogDeclaration(), [Diagnostic(code="unreadable-declaration", severity=ERROR, layer=CATALOG,
                                                 source=source, span=None, field_path=None,
                                                 message=f"cannot read catalog.kdl: {error}")]
    return parse_catalog_declaration(text, source)


def parse_catalog_declaration(text: str, source: str = SOURCE) -> tuple[CatalogDeclaration, list[Diagnostic]]:
    import ckdl

    from st2.declarations import fields
    from st2.declarations.context import NAME, Context, argument
    from st2.declarations.durations import parse_duration_seconds
    from st2.declarations.spans import SourceText, locate_syntax_error

    context = Context(text, source)
    try:
        document = ckdl.parse(text, version=2)
    except ckdl.ParseError:
        start, end, message = locate_syntax_error(text)
        return CatalogDeclaration(), [Diagnostic(code="kdl-syntax", severity=ERROR, layer=SYNTAX,
                                                 source=source, span=SourceText(text).span(start, end),
                                                 field_path=None, message=message)]
    from st2.declarations.spans import nesting_refusal

    deep = nesting_refusal(text, document.nodes)
    if deep is not None:
        return CatalogDeclaration(), [Diagnostic(code="nesting-too-deep", severity=ERROR, layer=SYNTAX,
                                                 source=source, span=SourceText(text).span(deep[0], deep[1]),
                                                 field_path=None, message=deep[2])]
    values: dict[str, str] = {}
    blocks = 0
    for index, node in enumerate(document.nodes):
        if node.name != "catalog":
            context.report("unexpected-top-level-node", (index,), NAME, (node.name,),
                           f"catalog.kdl accepts only a top-level `catalog` node, found `{node.name}`",
                           layer=CATALOG)
            continue
        blocks += 1
        if blocks > 1:
            context.report("duplicate-field", (index,), NAME, ("catalog",),
                           "catalog.kdl declares `catalog` more than once", layer=CATALOG)
            continue
        fields.no_arguments(context, node, (index,), ("catalog",))
        fields.no_properties(context, node, (index,), ("catalog",))
        for child_index, child in enumerate(node.children):
            child_path = (index, child_index)
            field_path = ("catalog", child.name)
            if child.name not in CATALOG_FIELDS:
                context.report("unknown-node", child_path, NAME, field_path,
                               f"unknown catalog field `{child.name}` (expected pty-root or archive-after)",
                               layer=CATALOG, help=partial(fields.suggestion, child.name, CATALOG_FIELDS))
                continue
            if child.name in values:
                context.report("duplicate-field", child_path, NAME, field_path,
                               f"`{child.name}` is declared more than once", layer=CATALOG)
                continue
            value = fields.one_value(context, child, child_path, field_path, "string")
            if value is None:
                continue
            if value == "":
                context.report("invalid-value", child_path, argument(0), field_path,
                               f"`{child.name}` needs a non-empty value", layer=CATALOG)
                continue
            if child.name == "archive-after" and parse_duration_seconds(value) is None:
                context.report("invalid-value", child_path, argument(0), field_path,
                               f"archive-after \"{value}\" is not a duration",
                               layer=CATALOG, help='write e.g. "7d", "12h", or "0" to disable archival')
                continue
            values[child.name] = value
    diagnostics = context.diagnostics()
    if any(diagnostic.severity == ERROR for diagnostic in diagnostics):
        return CatalogDeclaration(), diagnostics
    return CatalogDeclaration(pty_root=values.get("pty-root"),
                              archive_after=values.get("archive-after", DEFAULT_ARCHIVE_AFTER)), diagnostics
