"""Source positions for KDL 2 documents.

ckdl parses KDL 2 correctly but reports no positions: its nodes carry no spans and its
``ParseError`` names no location. This module is a small KDL 2 tokenizer and tree walker that
recovers them, so a diagnostic can point at the exact token:

* :func:`locate` returns the span tree of a document that ckdl accepted: one :class:`NodeSpan`
  per node (slashdashed nodes, entries and blocks are skipped exactly as a parser skips them, so
  the n-th child here is the n-th child in ckdl's tree), with the span of its name, of every
  argument and of every property.
* :func:`locate_syntax_error` returns the position and a message for a document ckdl rejected.

Positions are :class:`Span` values: ``offset`` and ``length`` in UTF-8 bytes, ``line`` and
``column`` 1-based, the column counted in Unicode scalar values (as the original st2 reports).

The lexer (:mod:`st2.declarations.kdl_lexer`) follows the KDL 2.0 grammar closely enough for
positions; ckdl stays the judge of validity. Where the two disagree about a rejected document, :func:`locate_syntax_error` falls
back to re-parsing line prefixes with ckdl to find the first line that breaks the document.
Standard library only (ckdl is imported lazily by the fallback).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from st2.declarations.diagnostics import Span
from st2.declarations.kdl_lexer import DIGITS, KEYWORDS, NEWLINES, NON_IDENTIFIER, SPACES, KdlSyntaxError, Lexer

__all__ = ["EntrySpan", "KdlSyntaxError", "MAX_NESTING", "NodeSpan", "SourceText", "locate", "locate_syntax_error",
           "nesting_refusal"]

# How deep children blocks may nest in a declaration (st2's own grammars use at most four).
# Deeper documents are refused with a position instead of exhausting the recursion limit.
MAX_NESTING = 32


@dataclass(slots=True)
class EntrySpan:
    """One argument or property, in character positions (converted to :class:`Span` on demand)."""

    key: str | None
    start: int
    end: int
    value_start: int


@dataclass(slots=True)
class NodeSpan:
    """One node. ``start``/``end`` cover the type annotation through the last entry or ``}``."""

    name: str
    start: int
    end: int
    name_start: int
    name_end: int
    arguments: list[EntrySpan] = field(default_factory=list)
    properties: dict[str, EntrySpan] = field(default_factory=dict)
    children: list["NodeSpan"] = field(default_factory=list)


class SourceText:
    """Converts character positions of one text into :class:`Span` values."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._byte_starts: list[int] | None = None
        self._line_starts = [0]
        index = 0
        length = len(text)
        while index < length:
            character = text[index]
            if character == "\r" and index + 1 < length and text[index + 1] == "\n":
                index += 1
                self._line_starts.append(index + 1)
            elif character in NEWLINES:
                self._line_starts.append(index + 1)
            index += 1

    def span(self, start: int, end: int) -> Span:
        """The :class:`Span` of characters ``[start, end)``."""
        start = max(0, min(start, len(self.text)))
        end = max(start, min(end, len(self.text)))
        line_index = _bisect_right(self._line_starts, start) - 1
        column = start - self._line_starts[line_index] + 1
        if self._ascii:  # one byte per character: no encoding at all
            return Span(offset=start, length=end - start, line=line_index + 1, column=column)
        line_start = self._line_starts[line_index]
        offset = self._line_byte_starts()[line_index] + _utf8_length(self.text[line_start:start])
        return Span(offset=offset, length=_utf8_length(self.text[start:end]), line=line_index + 1, column=column)

    def _line_byte_starts(self) -> list[int]:
        """The byte offset of each line start, computed once: a span then encodes only the part
        of its own line before it, never the whole text before it (O(1) per diagnostic instead of
        O(file))."""
        if self._byte_starts is None:
            starts = self._line_starts
            byte_starts = [0]
            for index in range(1, len(starts)):
                byte_starts.append(byte_starts[-1] + _utf8_length(self.text[starts[index - 1]:starts[index]]))
            self._byte_starts = byte_starts
        return self._byte_starts

    def line_count(self) -> int:
        return len(self._line_starts)

    def line_end(self, line_number: int) -> int:
        """Character position just past line ``line_number`` (1-based), newline included."""
        if line_number >= len(self._line_starts):
            return len(self.text)
        return self._line_starts[line_number]


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _bisect_right(values: list[int], target: int) -> int:
    low, high = 0, len(values)
    while low < high:
        middle = (low + high) // 2
        if values[middle] <= target:
            low = middle + 1
        else:
            high = middle
    return low


class _Walker(Lexer):
    """Recursive-descent walk of a KDL 2 document recording spans."""

    def __init__(self, text: str, stop_after: tuple[int, ...] | None = None) -> None:
        super().__init__(text)
        # Positions of the children blocks open at the current position (for prefix bisection).
        self.open_blocks: list[int] = []
        # The last node path anyone asked about: the walk ends once it is past it (every later
        # node in document order has a greater path), so locating the first 100 diagnostics of
        # a 50k-node file walks only as far as they are.
        self.stop_after = stop_after
        self.stopped = False
        self.path: list[int] = []

    # -- structure --------------------------------------------------------------------------

    def document(self) -> list[NodeSpan]:
        nodes = self.nodes(top_level=True)
        if self.stopped:
            return nodes
        if self.position < self.length:
            raise KdlSyntaxError(self.position, 1, "unexpected `}` with no open children block")
        return nodes

    def nodes(self, top_level: bool) -> list[NodeSpan]:
        found: list[NodeSpan] = []
        while True:
            self.skip_line_space()
            if self.position >= self.length:
                return found
            if self.peek() == "}":
                if top_level:
                    raise KdlSyntaxError(self.position, 1, "unexpected `}` with no open children block")
                return found
            if self.peek() == ";":
                self.position += 1
                continue
            if self.text.startswith("/-", self.position):
                self.position += 2
                self.skip_after_slashdash()
                if self.peek() == "}" and not top_level:
                    continue  # ckdl accepts a dangling `/-` just before `}`
                self.path.append(-1)  # a discarded subtree is never asked about
                self.node(discarded=True)
                self.path.pop()
                if self.stopped:
                    return found
                continue
            if self.stop_after is not None and -1 not in self.path:
                candidate = tuple(self.path) + (len(found),)
                if candidate > self.stop_after and self.stop_after[:len(candidate)] != candidate:
                    self.stopped = True
                    return found
            self.path.append(len(found))
            node = self.node()
            self.path.pop()
            found.append(node)
            if self.stopped:
                return found

    def node(self, discarded: bool = False) -> NodeSpan:
        start = self.position
        while self.peek() == "(":
            self.read_type_annotation()
            self.skip_node_space()
        name, name_start, name_end = self.read_node_name()
        node = NodeSpan(name=name, start=start, end=name_end, name_start=name_start, name_end=name_end)
        saw_children = False
        while True:
            before_space = self.position
            self.skip_node_space()
            spaced = self.position > before_space
            if self.position >= self.length:
                return node
            character = self.peek()
            if character in NEWLINES:
                self.skip_newline()
                return node
            if character == ";":
                self.position += 1
                return node
            if character == "}":
                return node
            if self.text.startswith("//", self.position):
                self.skip_line_comment()
                continue
            if self.text.startswith("/-", self.position):
                self.position += 2
                self.skip_after_slashdash()
                if self.position >= self.length or self.peek() == "}":
                    continue  # a dangling `/-` that ckdl tolerates
                if self.peek() == "{":
                    self.children_block(record=False)
                    if self.stopped:
                        return node
                else:
                    self.entry(record=None)
                continue
            if character == "{":
                # ckdl does not check the shape of a slashdashed node this far.
                if saw_children and not discarded:
                    raise KdlSyntaxError(self.position, 1, "a node can have only one children block")
                node.children = self.children_block(record=True)
                node.end = self.position
                if self.stopped:
                    return node
                saw_children = True
                continue
            if saw_children and not discarded:
                raise KdlSyntaxError(self.position, 1, "expected `;` or a newline after a children block")
            if not spaced:
                raise KdlSyntaxError(self.position, 1, "expected whitespace before an argument or property")
            self.entry(record=node)

    def read_node_name(self) -> tuple[str, int, int]:
        character = self.peek()
        if character == "{":
            raise KdlSyntaxError(self.position, 1, "a children block needs a node name")
        if character == "=":
            raise KdlSyntaxError(self.position, 1, "unexpected `=`")
        if character == "#":
            hashes = 0
            while self.peek(hashes) == "#":
                hashes += 1
            if self.peek(hashes) != '"':
                raise KdlSyntaxError(self.position, 1, "a keyword cannot be a node name")
        if (character in DIGITS) or (character in "+-." and (self.peek(1) in DIGITS)):
            end = self.position
            while end < self.length and self.text[end] not in NON_IDENTIFIER:
                end += 1
            raise KdlSyntaxError(self.position, end - self.position, "a number cannot be a node name")
        return self.read_string_or_identifier()

    def children_block(self, record: bool) -> list[NodeSpan]:
        open_position = self.position
        if len(self.open_blocks) >= MAX_NESTING:
            raise KdlSyntaxError(open_position, 1, f"children blocks nest deeper than {MAX_NESTING} levels")
        self.position += 1
        self.open_blocks.append(open_position)
        children = self.nodes(top_level=False)
        if self.stopped:
            return children if record else []
        if self.peek() != "}":
            raise KdlSyntaxError(open_position, 1, "unclosed children block: this `{` has no matching `}`")
        self.open_blocks.pop()
        self.position += 1
        return children if record else []

    def entry(self, record: NodeSpan | None) -> None:
        start = self.position
        character = self.peek()
        if character == "=":
            raise KdlSyntaxError(start, 1, "a property needs a name before `=`")
        if character == "(":
            entry_start, value_start = self.read_value()
            self._record_argument(record, entry_start, value_start)
            return
        # A string-like token may be a property key.
        is_string_like = character == '"' or (character == "#" and not any(
            self.text.startswith(keyword, self.position) for keyword in KEYWORDS))
        is_bare = character not in NON_IDENTIFIER and not (
            (character in DIGITS) or (character in "+-." and (self.peek(1) in DIGITS)))
        if is_string_like or is_bare:
            key, key_start, key_end = self.read_string_or_identifier()
            mark = self.position
            self.skip_node_space()
            if self.peek() == "=":
                self.position += 1
                self.skip_node_space()
                if self.position >= self.length or self.peek() in NEWLINES or self.peek() in ";}":
                    raise KdlSyntaxError(key_start, key_end - key_start, f"property `{key}` has no value")
                if self.peek() == "{":
                    # ckdl drops a value-less property before a children block, and a slashdashed
                    # one takes the block with it; mirror both.
                    if record is None:
                        self.children_block(record=False)
                    return
                _, value_start = self.read_value()
                if record is not None:
                    record.properties[key] = EntrySpan(key=key, start=start, end=self.position, value_start=value_start)
                    record.end = self.position
                return
            self.position = mark
            self._record_argument(record, start, start)
            return
        entry_start, value_start = self.read_value()
        self._record_argument(record, entry_start, value_start)

    def _record_argument(self, record: NodeSpan | None, start: int, value_start: int) -> None:
        if record is not None:
            record.arguments.append(EntrySpan(key=None, start=start, end=self.position, value_start=value_start))
            record.end = self.position


def nesting_depth(nodes: list) -> int:
    """How deep the children blocks of a ckdl document go (iterative: never recursion)."""
    deepest = 0
    stack = [(node, 1) for node in nodes]
    while stack:
        node, depth = stack.pop()
        children = node.children
        if children:
            deepest = max(deepest, depth)
            if depth > MAX_NESTING:
                return depth
            stack.extend((child, depth + 1) for child in children)
    return deepest


def nesting_refusal(text: str, nodes: list) -> tuple[int, int, str] | None:
    """``(start, end, message)`` of the first block nested past :data:`MAX_NESTING` in a
    document ckdl accepted, or None when it nests within the bound."""
    if nesting_depth(nodes) <= MAX_NESTING:
        return None
    return locate_syntax_error(text)


def locate(text: str, stop_after: tuple[int, ...] | None = None) -> list[NodeSpan]:
    """The span tree of ``text``. Raise :class:`KdlSyntaxError` if the tokenizer rejects it.
    With ``stop_after`` (a node index path) the tree is complete only up to that node: the walk
    ends at the first node past it, for callers that need no later span."""
    return _Walker(text, stop_after).document()


def locate_syntax_error(text: str) -> tuple[int, int, str]:
    """Where ``text`` (rejected by ckdl) first goes wrong: ``(start, end, message)`` in characters.

    The tokenizer's own verdict is used when it finds an error. When it accepts the text (the
    grammars disagree), the first line whose prefix ckdl rejects is found by re-parsing prefixes
    that end at a line break with every open children block closed; the error then points at the
    first non-blank character of that line.
    """
    try:
        locate(text)
    except KdlSyntaxError as error:
        start = min(error.position, len(text))
        return start, min(error.position + error.length, len(text)), error.message
    return _bisect_with_ckdl(text)


# Tokenizer verdicts on a line prefix that only mean the prefix cut a multi-line construct.
_CUT_CONSTRUCTS = ("unterminated multi-line string", "unterminated raw string", "unterminated block comment")


def _bisect_with_ckdl(text: str) -> tuple[int, int, str]:
    import ckdl

    source = SourceText(text)

    def prefix_fails(line_number: int) -> bool:
        prefix = text[:source.line_end(line_number)]
        walker = _Walker(prefix)
        try:
            walker.document()
            closing = ""
        except KdlSyntaxError as error:
            if error.message.startswith(_CUT_CONSTRUCTS):
                # The prefix ends inside a multi-line string or comment that the whole text
                # closes: it is incomplete, not wrong.
                return False
            # Close whatever blocks were open where the prefix ends.
            closing = "\n" + "}" * len(walker.open_blocks)
        try:
            ckdl.parse(prefix + closing, version=2)
        except Exception:
            return True
        return False

    low, high = 1, source.line_count()
    while low < high:
        middle = (low + high) // 2
        if prefix_fails(middle):
            high = middle
        else:
            low = middle + 1
    line_start = source.line_end(low - 1) if low > 1 else 0
    line_end = source.line_end(low)
    stripped = len(text[line_start:line_end]) - len(text[line_start:line_end].lstrip("".join(SPACES)))
    start = line_start + stripped
    end = line_end
    while end > start and text[end - 1] in NEWLINES:
        end -= 1
    return start, max(end, start), "invalid KDL syntax"
