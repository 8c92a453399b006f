"""A character-level KDL 2 lexer: whitespace, comments, line continuations, strings (quoted,
raw, multi-line), numbers, keywords and type annotations.

It reads positions, not values: every ``read_*`` method advances over one token and returns where
it was, raising :class:`KdlSyntaxError` with the offending position when the text breaks the
KDL 2 grammar. :mod:`st2.declarations.spans` builds the node tree on top of it. Where ckdl (the
parser whose tree the spans must match) tolerates something KDL 2 does not, the lexer mirrors
ckdl, and says so where it does. Standard library only.
"""

from __future__ import annotations

import re

NEWLINES = "\r\n\x85\x0b\x0c\u2028\u2029"
SPACES = "\t \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\ufeff"
# Characters that can never appear in a bare identifier.
NON_IDENTIFIER = set('\\/(){};[]"#=') | set(NEWLINES) | set(SPACES)
KEYWORDS = ("#true", "#false", "#null", "#inf", "#-inf", "#nan")
RESERVED_BARE = {"true", "false", "null", "inf", "-inf", "nan"}
NUMBER_PATTERN = re.compile(
    r"[+-]?(?:0x[0-9a-fA-F][0-9a-fA-F_]*|0o[0-7][0-7_]*|0b[01][01_]*"
    r"|[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9][0-9_]*)?)"
)
SIMPLE_ESCAPES = set('"\\bfnrts')
DIGITS = frozenset("0123456789")


class KdlSyntaxError(Exception):
    """Raised by the tokenizer: ``position`` and ``length`` in characters."""

    def __init__(self, position: int, length: int, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.length = length
        self.message = message


class Lexer:
    """Position-tracking reader over one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.position = 1 if text.startswith("\ufeff") else 0

    def peek(self, offset: int = 0) -> str:
        index = self.position + offset
        return self.text[index] if index < self.length else ""

    def at_newline(self) -> bool:
        return self.position < self.length and self.text[self.position] in NEWLINES

    def skip_newline(self) -> None:
        if self.text.startswith("\r\n", self.position):
            self.position += 2
        else:
            self.position += 1

    def skip_block_comment(self) -> None:
        start = self.position
        depth = 0
        while self.position < self.length:
            if self.text.startswith("/*", self.position):
                depth += 1
                self.position += 2
            elif self.text.startswith("*/", self.position):
                depth -= 1
                self.position += 2
                if depth == 0:
                    return
            else:
                self.position += 1
        raise KdlSyntaxError(start, 2, "unterminated block comment")

    def skip_line_comment(self) -> None:
        while self.position < self.length and self.text[self.position] not in NEWLINES:
            self.position += 1

    def skip_node_space(self) -> None:
        """Whitespace, block comments and escaped line continuations (not newlines)."""
        while self.position < self.length:
            character = self.text[self.position]
            if character in SPACES:
                self.position += 1
            elif self.text.startswith("/*", self.position):
                self.skip_block_comment()
            elif character == "\\":
                start = self.position
                self.position += 1
                while self.position < self.length:
                    inner = self.text[self.position]
                    if inner in SPACES:
                        self.position += 1
                    elif self.text.startswith("/*", self.position):
                        self.skip_block_comment()
                    else:
                        break
                if self.text.startswith("//", self.position):
                    self.skip_line_comment()
                if self.position >= self.length:
                    return
                if not self.at_newline():
                    raise KdlSyntaxError(start, 1, "a line continuation `\\` must be followed by a newline")
                self.skip_newline()
            else:
                return

    def skip_line_space(self) -> None:
        """Whitespace, newlines and every kind of comment (between nodes)."""
        while self.position < self.length:
            character = self.text[self.position]
            if character == "\\":
                # Between nodes ckdl skips a stray `\` even when no newline follows (KDL 2 would
                # require one); mirror it so both trees keep the same node indices.
                self.position += 1
            elif character in SPACES:
                self.position += 1
            elif self.text.startswith("/*", self.position):
                self.skip_block_comment()
            elif character in NEWLINES:
                self.skip_newline()
            elif self.text.startswith("//", self.position):
                self.skip_line_comment()
            else:
                return

    def skip_after_slashdash(self) -> None:
        """Line space after ``/-``; ckdl also skips semicolons and repeated ``/-`` there, so do
        the same (the trees must keep identical indices)."""
        while True:
            self.skip_line_space()
            if self.peek() == ";":
                self.position += 1
            elif self.text.startswith("/-", self.position):
                self.position += 2
            else:
                return

    # -- values -----------------------------------------------------------------------------

    def read_string_or_identifier(self) -> tuple[str, int, int]:
        """Read a string (quoted, raw, multi-line, or bare identifier). Return (value, start, end).
        The value is approximate for escapes; it is only used for property keys and node names."""
        start = self.position
        character = self.peek()
        if character == '"':
            return self.read_quoted(start)
        if character == "#":
            hashes = 0
            while self.peek(hashes) == "#":
                hashes += 1
            if self.peek(hashes) == '"':
                return self.read_raw(start, hashes)
            raise KdlSyntaxError(start, 1, "expected a string")
        return self.read_identifier(start)

    def read_identifier(self, start: int) -> tuple[str, int, int]:
        while self.position < self.length and self.text[self.position] not in NON_IDENTIFIER:
            self.position += 1
        if self.position == start:
            if start >= self.length:
                raise KdlSyntaxError(max(0, self.length - 1), 1, "unexpected end of document")
            raise KdlSyntaxError(start, 1, f"unexpected character {self.text[start]!r}")
        word = self.text[start:self.position]
        if word in RESERVED_BARE:
            raise KdlSyntaxError(start, len(word), f"bare `{word}` is not allowed in KDL 2; write `#{word}`")
        if _looks_numeric(word):
            raise KdlSyntaxError(start, len(word), f"`{word}` is neither a number nor an identifier")
        return word, start, self.position

    def read_quoted(self, start: int) -> tuple[str, int, int]:
        if self.text.startswith('"""', start):
            self.position = start + 3
            if not self.at_newline():
                raise KdlSyntaxError(start, 3, 'a multi-line string `"""` must start with a newline')
            while self.position < self.length:
                if self.text[self.position] == "\\":
                    self.position += 2
                    continue
                if self.text.startswith('"""', self.position):
                    self.position += 3
                    return self.text[start + 3:self.position - 3], start, self.position
                self.position += 1
            raise KdlSyntaxError(start, 3, "unterminated multi-line string")
        self.position = start + 1
        pieces: list[str] = []
        while self.position < self.length:
            character = self.text[self.position]
            if character == '"':
                self.position += 1
                return "".join(pieces), start, self.position
            if character == "\\":
                escape = self.peek(1)
                if escape in SIMPLE_ESCAPES:
                    pieces.append({"n": "\n", "t": "\t", "r": "\r", "s": " ", "b": "\b", "f": "\f"}.get(escape, escape))
                    self.position += 2
                elif escape == "u":
                    match = re.match(r"u\{([0-9a-fA-F]{1,6})\}", self.text[self.position + 1:self.position + 11])
                    if match is None:
                        raise KdlSyntaxError(self.position, 2, "invalid unicode escape")
                    self.position += 1 + match.end()
                elif escape and (escape in SPACES or escape in NEWLINES):
                    self.position += 1
                    while self.position < self.length and (self.text[self.position] in SPACES or self.text[self.position] in NEWLINES):
                        self.position += 1
                else:
                    raise KdlSyntaxError(self.position, 2, f"invalid escape `\\{escape}` in string")
                continue
            if character in NEWLINES:
                raise KdlSyntaxError(start, 1, 'unterminated string (a single-line string cannot hold a newline; use """ for multi-line)')
            pieces.append(character)
            self.position += 1
        raise KdlSyntaxError(start, 1, "unterminated string")

    def read_raw(self, start: int, hashes: int) -> tuple[str, int, int]:
        closing_hashes = "#" * hashes
        body_start = start + hashes
        if self.text.startswith('"""', body_start):
            self.position = body_start + 3
            if not self.at_newline():
                raise KdlSyntaxError(start, hashes + 3, 'a multi-line raw string must start with a newline')
            terminator = '"""' + closing_hashes
        else:
            self.position = body_start + 1
            terminator = '"' + closing_hashes
        end = self.text.find(terminator, self.position)
        if end < 0:
            raise KdlSyntaxError(start, hashes + 1, "unterminated raw string")
        if terminator.startswith('"""') is False:
            newline = next((index for index in range(self.position, end) if self.text[index] in NEWLINES), None)
            if newline is not None:
                raise KdlSyntaxError(start, hashes + 1, "unterminated raw string (a single-line raw string cannot hold a newline)")
        self.position = end + len(terminator)
        return self.text[body_start:end], start, self.position

    def read_value(self) -> tuple[int, int]:
        """Read an argument or property value, with its optional type annotation."""
        start = self.position
        while self.peek() == "(":  # ckdl accepts repeated annotations and keeps the last
            self.read_type_annotation()
            self.skip_node_space()
        value_start = self.position
        character = self.peek()
        if character == "#":
            for keyword in KEYWORDS:
                if self.text.startswith(keyword, self.position):
                    after = self.position + len(keyword)
                    if after >= self.length or self.text[after] in NON_IDENTIFIER:
                        self.position = after
                        return start, value_start
            self.read_string_or_identifier()
            return start, value_start
        if character == '"':
            self.read_quoted(value_start)
            return start, value_start
        if (character in DIGITS) or (character in "+-." and (self.peek(1) in DIGITS)):
            while self.position < self.length and self.text[self.position] not in NON_IDENTIFIER:
                self.position += 1
            word = self.text[value_start:self.position]
            if NUMBER_PATTERN.fullmatch(word) is None:
                raise KdlSyntaxError(value_start, len(word), f"invalid number `{word}`")
            return start, value_start
        self.read_identifier(value_start)
        return start, value_start

    def read_type_annotation(self) -> None:
        start = self.position
        self.position += 1
        self.skip_node_space()
        self.read_string_or_identifier()
        self.skip_node_space()
        if self.peek() != ")":
            raise KdlSyntaxError(start, 1, "unclosed type annotation")
        self.position += 1


def _looks_numeric(word: str) -> bool:
    first = word[0]
    if (first in DIGITS):
        return True
    return first in "+-." and len(word) > 1 and ((word[1] in DIGITS) or (word[1] == "." and len(word) > 2 and (word[2] in DIGITS)))
