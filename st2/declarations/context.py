"""The reporting context shared by the declaration validators.

Validators walk ckdl's tree (which has no positions) and report problems against a *locator*:
the node's index path in the document plus the part of the node at fault (its name, the i-th
argument, a property, or the whole node). Spans are resolved only when a diagnostic exists, by
running :func:`st2.declarations.spans.locate` once, so a clean declaration pays nothing for
positions. Standard library only.
"""

from __future__ import annotations

from typing import Any

from st2.declarations.diagnostics import CORE, DECLARATION, ERROR, Diagnostic, Span

# What part of a node a diagnostic points at.
WHOLE = None
NAME = "name"


def argument(index: int) -> tuple[str, int]:
    return ("argument", index)


def property_(key: str) -> tuple[str, str]:
    return ("property", key)


class Context:
    """Collects diagnostics for one source text and resolves their spans on demand."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self._pending: list[tuple] = []
        self._fixed: list[Diagnostic] = []

    def report(self, code: str, node_path: tuple[int, ...] | None, part: Any,
               field_path: tuple[str, ...] | None, message: str, *, severity: str = ERROR,
               layer: str = CORE, help: str | None = None) -> None:
        self._pending.append((code, severity, layer, node_path, part, field_path, message, help))

    def report_shape(self, code: str, node_path: tuple[int, ...], part: Any,
                     field_path: tuple[str, ...] | None, message: str, help: str | None = None) -> None:
        self.report(code, node_path, part, field_path, message, layer=DECLARATION, help=help)

    def add(self, diagnostic: Diagnostic) -> None:
        self._fixed.append(diagnostic)

    @property
    def has_errors(self) -> bool:
        return any(entry[1] == ERROR for entry in self._pending) or any(
            diagnostic.severity == ERROR for diagnostic in self._fixed)

    def diagnostics(self) -> list[Diagnostic]:
        """Every reported problem with its span, in report order."""
        resolved = list(self._fixed)
        if not self._pending:
            return resolved
        # Imported here: a clean declaration never pays for the tokenizer.
        from st2.declarations.spans import KdlSyntaxError, SourceText, locate

        try:
            tree = locate(self.text)
        except KdlSyntaxError:
            tree = None
        source_text = SourceText(self.text)
        for code, severity, layer, node_path, part, field_path, message, help_text in self._pending:
            span = _resolve(tree, source_text, node_path, part)
            resolved.append(Diagnostic(code=code, severity=severity, layer=layer, source=self.source,
                                       span=span, field_path=field_path, message=message, help=help_text))
        # Document order reads best; the sort is stable, so same-token problems keep report order.
        resolved.sort(key=lambda diagnostic: diagnostic.span.offset if diagnostic.span is not None else -1)
        return resolved


def _resolve(tree: list | None, source_text: Any, node_path: tuple[int, ...] | None, part: Any) -> Span | None:
    if node_path is None:
        return None
    if tree is None:
        return source_text.span(0, 0)
    nodes = tree
    node = None
    for index in node_path:
        if index >= len(nodes):
            return source_text.span(0, 0)
        node = nodes[index]
        nodes = node.children
    assert node is not None
    if part is WHOLE:
        return source_text.span(node.start, node.end)
    if part == NAME:
        return source_text.span(node.name_start, node.name_end)
    kind, key = part
    if kind == "argument" and key < len(node.arguments):
        entry = node.arguments[key]
        return source_text.span(entry.start, entry.end)
    if kind == "property" and key in node.properties:
        entry = node.properties[key]
        return source_text.span(entry.start, entry.end)
    return source_text.span(node.start, node.end)


def plain(value: Any) -> Any:
    """A ckdl value without its type annotation (ckdl wraps only annotated values)."""
    if value.__class__ in _PLAIN_TYPES:
        return value
    return value.value if hasattr(value, "type_annotation") else value


_PLAIN_TYPES = frozenset((str, int, float, bool, type(None)))


def kdl_repr(value: Any) -> str:
    """How a value reads in KDL, for messages."""
    value = plain(value)
    if value is True:
        return "#true"
    if value is False:
        return "#false"
    if value is None:
        return "#null"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)
