"""The KDL 2 span locator agrees with ckdl's tree and points syntax errors at the right token."""

from __future__ import annotations

import ckdl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from st2.declarations.spans import SourceText, _bisect_with_ckdl, locate, locate_syntax_error

DOCUMENTS = [
    'agent "r" {\n  name "x" // c\n  desired-state "suspended" reason="w"\n  restart { attempts 3; interval "60s" }\n}',
    'n /-x 1 2',
    '/- n; m',
    '/- n {\n  a\n}\nm',
    'n a=(u8)1 (t)"x"',
    'n 0x1F 1_000 -2.5e3 #inf #-inf #nan',
    'n {a;b}',
    'n {a}',
    'n \\\n 1',
    'a; b; /-c {d}\ne /-{x} {y}',
    'n "a\\"b" c=#"raw "quoted" "#',
    'n /* c */ 1 /* d /* nested */ */',
    '/* multi\n line */ n',
    'n "x" \\ // continued\n  "y"',
    'n """\n  hi\n  """ 2',
    'n #"""\n  { "a": 1 }\n  """#',
    'n x=1 x=2',
    'n foo-bar baz',
    'n {\n}\n',
    'é "ü" k="ß"',
    '\ufeffn 1',
    'n\r\nm 1\r\n',
    'n; /-m; o',
    '(type)n 1',
    '"quoted name" 1',
    'n /- k=1 2',
]


def shape(node) -> tuple:
    return (node.name, len(node.args), tuple(node.properties), tuple(shape(child) for child in node.children))


def span_shape(node) -> tuple:
    return (node.name, len(node.arguments), tuple(node.properties), tuple(span_shape(child) for child in node.children))


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_span_tree_has_ckdls_shape(text: str) -> None:
    reference = ckdl.parse(text, version=2)
    assert [span_shape(node) for node in locate(text)] == [shape(node) for node in reference.nodes]


def test_spans_point_at_names_arguments_and_properties() -> None:
    text = 'agent "r" {\n    name "é x" // comment\n    exec "w" { argv "a" "b"; keep #true }\n    k v=1\n}\n'
    source = SourceText(text)
    agent = locate(text)[0]
    name = agent.children[0]
    assert source.span(name.name_start, name.name_end) == (16, 4, 2, 5)
    argument = name.arguments[0]
    assert text[argument.start:argument.end] == '"é x"'
    # Byte offset counts the two-byte é; the column counts scalars.
    assert source.span(argument.start, argument.end) == (21, 6, 2, 10)
    argv = agent.children[1].children[0]
    assert [text[entry.start:entry.end] for entry in argv.arguments] == ['"a"', '"b"']
    assert source.span(argv.arguments[1].start, argv.arguments[1].end).column == 25
    prop = agent.children[2].properties["v"]
    assert text[prop.start:prop.end] == "v=1"
    assert text[agent.start:agent.end] == text.rstrip("\n")


def test_a_later_duplicate_property_is_the_one_located() -> None:
    text = "n x=1 x=2"
    prop = locate(text)[0].properties["x"]
    assert text[prop.start:prop.end] == "x=2"


SYNTAX_ERRORS = [
    ('agent "x" {\n  name "a\n}', 2, 8, "unterminated string"),
    ('agent {\n  x true\n}', 2, 5, "bare `true` is not allowed in KDL 2; write `#true`"),
    ('agent "x" {\n  name "a"\n', 1, 11, "unclosed children block: this `{` has no matching `}`"),
    ("a }", 1, 3, "unexpected `}` with no open children block"),
    ("n 1abc", 1, 3, "invalid number `1abc`"),
    ('n "x" {a} b', 1, 11, "expected `;` or a newline after a children block"),
    ("n k=", 1, 3, "property `k` has no value"),
    ('n #"abc', 1, 3, "unterminated raw string"),
    ("n /* x", 1, 3, "unterminated block comment"),
    ('n """x"""', 1, 3, 'a multi-line string `"""` must start with a newline'),
    ("n (t 1", 1, 3, "unclosed type annotation"),
    ('n "\\q"', 1, 4, "invalid escape `\\q` in string"),
    ("a {\n  b {\n    c 1 2 3\n  }\n  d = 3\n}", 5, 5, "a property needs a name before `=`"),
    ('n "a"b', 1, 6, "expected whitespace before an argument or property"),
    ("n \\ x\n 1", 1, 3, "a line continuation `\\` must be followed by a newline"),
    ("#true 1", 1, 1, "a keyword cannot be a node name"),
]


@pytest.mark.parametrize("text, line, column, message", SYNTAX_ERRORS)
def test_syntax_errors_are_located(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ckdl.ParseError):
        ckdl.parse(text, version=2)
    start, end, found_message = locate_syntax_error(text)
    span = SourceText(text).span(start, end)
    assert (span.line, span.column) == (line, column)
    assert found_message.startswith(message)


def test_when_the_tokenizer_misses_an_error_ckdl_bisection_finds_the_line() -> None:
    # U+200E (a direction mark) is not allowed in KDL 2 identifiers; the tokenizer does not know
    # that, ckdl does. Bisection over line prefixes still names line 3.
    text = 'agent "x" {\n    name "ok"\n    wo\u200erd 1\n    argv "a"\n}\n'
    with pytest.raises(ckdl.ParseError):
        ckdl.parse(text, version=2)
    start, end, message = _bisect_with_ckdl(text)
    span = SourceText(text).span(start, end)
    assert (span.line, span.column, message) == (3, 5, "invalid KDL syntax")
    assert text[start:end] == "wo\u200erd 1"


MULTI_LINE = 'agent "x" {\n    render {\n        file "a" """\n            two\n            lines\n            """\n    }\n}\n'


def test_a_valid_document_does_not_bisect_to_a_false_error() -> None:
    reference = ckdl.parse(MULTI_LINE, version=2)
    tree = locate(MULTI_LINE)
    assert [span_shape(node) for node in tree] == [shape(node) for node in reference.nodes]
    body = tree[0].children[0].children[0].arguments[1]
    assert MULTI_LINE[body.start:body.end] == '"""\n            two\n            lines\n            """'


@pytest.mark.parametrize("opening, closing", [('"""', '"""'), ('#"""', '"""#'), ("/*", "*/")])
def test_bisection_names_the_broken_line_past_a_multi_line_construct(opening: str, closing: str) -> None:
    # Line prefixes that cut the multi-line string or comment (lines 3-5) are incomplete, not
    # wrong; the error is on line 8.
    text = MULTI_LINE.replace('"""\n            two', opening + "\n            two").replace(
        '            """\n    }', "            " + closing + "\n    }")
    if opening == "/*":
        text = text.replace('file "a" /*', 'file "a" "b" /*')
    ckdl.parse(text, version=2)
    broken = text.replace("    }\n}\n", "    }\n    wo\u200erd 1\n}\n")
    with pytest.raises(ckdl.ParseError):
        ckdl.parse(broken, version=2)
    start, end, message = locate_syntax_error(broken)
    span = SourceText(broken).span(start, end)
    assert (span.line, span.column, broken[start:end]) == (8, 5, "wo\u200erd 1")


# -- generated documents ---------------------------------------------------------------------

identifiers = st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True).filter(
    lambda word: word not in ("true", "false", "null", "inf", "nan"))
strings = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=8).map(
    lambda text: '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
raw_strings = st.text(alphabet="abc \"{}", max_size=6).map(lambda text: '#"' + text + '"#')
numbers = st.integers(-1000, 1000).map(str)
keywords = st.sampled_from(["#true", "#false", "#null", "#inf"])
values = st.one_of(strings, raw_strings, numbers, keywords, identifiers)
separators = st.sampled_from([" ", "  ", " /* c */ ", "\t"])


@st.composite
def nodes(draw, depth: int = 0) -> str:
    name = draw(st.one_of(identifiers, strings))
    parts = [name]
    for _ in range(draw(st.integers(0, 3))):
        entry = draw(values)
        if draw(st.booleans()):
            entry = f"{draw(identifiers)}={entry}"
        if draw(st.integers(0, 5)) == 0:
            entry = "/-" + entry
        parts.append(draw(separators) + entry)
    if depth < 2 and draw(st.booleans()):
        children = draw(st.lists(nodes(depth + 1), max_size=3))
        body = "\n".join(children)
        parts.append(" {\n" + body + "\n}")
    text = "".join(parts)
    if draw(st.integers(0, 6)) == 0:
        text = "/-" + text
    return text


@settings(max_examples=80, deadline=None)
@given(st.lists(nodes(), min_size=1, max_size=4), st.sampled_from(["\n", "\n\n", "; ", "\n// c\n"]))
def test_generated_documents_locate_like_ckdl_parses(node_texts: list[str], joiner: str) -> None:
    text = joiner.join(node_texts) + "\n"
    try:
        reference = ckdl.parse(text, version=2)
    except ckdl.ParseError:
        return
    tree = locate(text)
    assert [span_shape(node) for node in tree] == [shape(node) for node in reference.nodes]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(st.sampled_from(
    ['n', ' ', '"', '#', '{', '}', ';', '\n', '/-', '/*', '*/', '//', '=', '(', ')', '\\', '1', 'x', '"""', '#"']),
    max_size=30).map("".join)))
def test_locating_an_error_never_fails_on_arbitrary_text(text: str) -> None:
    try:
        ckdl.parse(text, version=2)
    except ckdl.ParseError:
        start, end, message = locate_syntax_error(text)
        assert 0 <= start <= end <= len(text)
        assert message
        span = SourceText(text).span(start, end)
        assert span.line >= 1 and span.column >= 1


MUTATION_TOKENS = ['n', ' ', '"', '#', '{', '}', ';', '\n', '/-', '/*', '*/', '//', '=', '(', ')', '1', 'x',
                   '"""\n', '#"', '"#', 'k=1', '/- ', ' {', '}\n', '\r\n']


def arity(node) -> tuple:
    return (len(node.args), len(node.properties), tuple(arity(child) for child in node.children))


def span_arity(node) -> tuple:
    return (len(node.arguments), len(node.properties), tuple(span_arity(child) for child in node.children))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DOCUMENTS), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(MUTATION_TOKENS), st.booleans()),
                                            min_size=1, max_size=3))
def test_mutated_documents_ckdl_accepts_locate_with_the_same_shape(seed: str, edits) -> None:
    # ckdl tolerates a few non-KDL-2 shapes (a dangling `/-` before `}`, a value-less property
    # before a block); the locator mirrors them so node indices stay aligned.
    text = seed
    for fraction, token, delete in edits:
        index = int(fraction * len(text))
        text = text[:index] + text[index + len(token):] if delete else text[:index] + token + text[index:]
    try:
        reference = ckdl.parse(text, version=2)
    except ckdl.ParseError:
        return
    assert [span_arity(node) for node in locate(text)] == [arity(node) for node in reference.nodes]
