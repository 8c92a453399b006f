"""The reporting context shared by the declaration validators.

Validators walk ckdl's tree (which has no positions) and report problems against a *locator*:
the node's index path in the document plus the part of the node at fault (its name, the i-th
argument, a property, or the whole node). Spans are resolved only when a diagnostic exists, by
running :func:`st2.declarations.spans.locate` once, so a clean declaration pays nothing for
positions. Standard library only.
"""

from __future__ import annotations

from typing import Any

from st2.declarations.diagnostics import CORE, DECLARATION, ERROR, WARNING, Diagnostic, Span

# What part of a node a diagnostic points at.
WHOLE = None
NAME = "name"


def argument(index: int) -> tuple[str, int]:
    return ("argument", index)


def property_(key: str) -> tuple[str, str]:
    return ("property", key)


MAX_DIAGNOSTICS = 100  # per file: past it problems are counted, not listed (nor located)


class Context:
    """Collects diagnostics for one source text and resolves their spans on demand.

    At most :data:`MAX_DIAGNOSTICS` are kept per file; the rest are counted and reported as one
    ``diagnostics-truncated`` diagnostic, so a generated file with 280k unknown nodes costs a
    count, not 280k located messages. ``help`` may be a callable, called only for a kept one."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text = text
        self.source = source
        self._pending: list[tuple] = []
        self._fixed: list[Diagnostic] = []
        self._suppressed = 0
        self._suppressed_errors = 0

    def report(self, code: str, node_path: tuple[int, ...] | None, part: Any,
               field_path: tuple[str, ...] | None, message: str, *, severity: str = ERROR,
               layer: str = CORE, help: Any = None) -> None:
        if len(self._pending) + len(self._fixed) >= MAX_DIAGNOSTICS:
            self._suppressed += 1
            self._suppressed_errors += severity == ERROR
            return
        if callable(help):
            help = help()
        self._pending.append((code, severity, layer, node_path, part, field_path, message, help))

    def report_shape(self, code: str, node_path: tuple[int, ...], part: Any,
                     field_path: tuple[str, ...] | None, message: str, help: str | None = None) -> None:
        self.report(code, node_path, part, field_path, message, layer=DECLARATION, help=help)

    def add(self, diagnostic: Diagnostic) -> None:
        if len(self._pending) + len(self._fixed) >= MAX_DIAGNOSTICS:
            self._suppressed += 1
            self._suppressed_errors += diagnostic.severity == ERROR
            return
        self._fixed.append(diagnostic)

    @property
    def has_errors(self) -> bool:
        return self._suppressed_errors > 0 or any(entry[1] == ERROR for entry in self._pending) or any(
            diagnostic.severity == ERROR for diagnostic in self._fixed)

    def _truncation(self) -> list[Diagnostic]:
        if not self._suppressed:
            return []
        return [Diagnostic(code="diagnostics-truncated", severity=ERROR if self._suppressed_errors else WARNING,
                           layer=DECLARATION, source=self.source, span=None, field_path=None,
                           message=f"{self._suppressed} more problem(s) in this file are not listed "
                                   f"(at most {MAX_DIAGNOSTICS} per file); fix these and validate again")]

    def diagnostics(self) -> list[Diagnostic]:
        """Every reported problem with its span, in report order."""
        resolved = list(self._fixed)
        if not self._pending:
            return resolved + self._truncation()
        # Imported here: a clean declaration never pays for the tokenizer.
        from st2.declarations.spans import KdlSyntaxError, SourceText, locate

        paths = [entry[3] for entry in self._pending if entry[3] is not None]
        stop = max(paths) if paths else ()
        if any(entry[4] is WHOLE and entry[3] is not None and entry[3] != stop and stop[:len(entry[3])] == entry[3]
               for entry in self._pending):
            stop = None  # a whole ancestor is located: its end lies past the last asked-about node
        try:
            tree = locate(self.text, stop)
        except KdlSyntaxError:
            tree = None
        source_text = SourceText(self.text)
        for code, severity, layer, node_path, part, field_path, message, help_text in self._pending:
            span = _resolve(tree, source_text, node_path, part)
            resolved.append(Diagnostic(code=code, severity=severity, layer=layer, source=self.source,
                                       span=span, field_path=field_path, message=message, help=help_text))
        # Document order reads best; the sort is stable, so same-token problems keep report order.
        resolved.sort(key=lambda diagnostic: diagnostic.span.offset if diagnostic.span is not None else -1)
        return resolved + self._truncation()


def parse_kdl(context: Context, text: str) -> Any:
    """ckdl's KDL 2 document for ``text``, or None after adding the one located ``kdl-syntax``
    diagnostic to ``context``: every declaration reader's first step."""
    import ckdl

    try:
        return ckdl.parse(text, version=2)
    except ckdl.ParseError:
        from st2.declarations.diagnostics import SYNTAX
        from st2.declarations.spans import SourceText, locate_syntax_error

        start, end, message = locate_syntax_error(text)
        context.add(Diagnostic(code="kdl-syntax", severity=ERROR, layer=SYNTAX, source=context.source,
                               span=SourceText(text).span(start, end), field_path=None, message=message))
        return None


def resolve_span(tree: list | None, source_text: Any, node_path: tuple[int, ...] | None, part: Any) -> Span | None:
    """The span of ``part`` of the node at ``node_path`` in a located tree
    (:func:`st2.declarations.spans.locate`)."""
    return _resolve(tree, source_text, node_path, part)


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
