"""Source-preserving edits of one ``agent.kdl``: replace, insert or remove the agent's child
nodes by name, keeping every other byte (comments, spacing, order). Positions come from the
span locator (:mod:`st2.declarations.spans`); the result is always re-validated by the caller.
"""

from __future__ import annotations

from st2.declarations.spans import locate


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def quote(value: str) -> str:
    """A KDL string literal for ``value``: every non-printable character (controls, bidi and
    other format characters, separators) written as its ``\\u{…}`` escape, so any value makes
    valid KDL and the declaration's own rules, not a syntax error, judge it."""
    escaped = "".join(_ESCAPES.get(c) or (c if c.isprintable() else f"\\u{{{ord(c):x}}}") for c in value)
    return f'"{escaped}"'


def _agent(text: str):
    return next(node for node in locate(text) if node.name == "agent")


def set_field(text: str, names: tuple[str, ...], replacement: str | None) -> str:
    """Replace the first child named in ``names`` with ``replacement`` and drop the others;
    ``None`` removes them all. With none present, ``replacement`` becomes the first child."""
    agent = _agent(text)
    present = [child for child in agent.children if child.name in names]
    if present:
        first, rest = present[0], present[1:]
        for node in reversed(rest):
            text = remove_span(text, node.start, node.end)
        if replacement is None:
            return remove_span(text, first.start, first.end)
        return text[:first.start] + replacement + text[first.end:]
    if replacement is None:
        return text
    if agent.children:
        anchor = agent.children[0].start
        line_start = text.rfind("\n", 0, anchor) + 1
        indent = text[line_start:anchor]
        if indent.strip():
            return text[:anchor] + replacement + "; " + text[anchor:]
        return text[:line_start] + indent + replacement + "\n" + text[line_start:]
    return _open_block(text, agent, replacement)


def append_child(text: str, rendered: str) -> str:
    """Add ``rendered`` as the agent's last child, indented like its siblings."""
    agent = _agent(text)
    if not agent.children:
        return _open_block(text, agent, rendered)
    last = agent.children[-1]
    line_start = text.rfind("\n", 0, last.start) + 1
    indent = text[line_start:last.start]
    line_end = text.find("\n", last.end)
    if indent.strip() or line_end < 0:
        return text[:last.end] + "; " + rendered + text[last.end:]
    return text[:line_end + 1] + indent + rendered + "\n" + text[line_end + 1:]


def remove_child(text: str, name: str, first_argument: str) -> str:
    """Remove the agent's child ``name "<first_argument>" …`` (unchanged when absent)."""
    for child in _agent(text).children:
        if child.name == name and _first_argument(text, child) == first_argument:
            return remove_span(text, child.start, child.end)
    return text


def _first_argument(text: str, node) -> str | None:
    import ckdl

    try:
        parsed = ckdl.parse(text[node.start:node.end], version=2).nodes[0]
    except Exception:
        return None
    return parsed.args[0] if parsed.args and isinstance(parsed.args[0], str) else None


def _open_block(text: str, agent, rendered: str) -> str:
    brace = text.find("{", agent.name_end)
    if brace < 0:
        line_end = text.find("\n", agent.name_end)
        line_end = len(text) if line_end < 0 else line_end
        return text[:line_end] + " {\n    " + rendered + "\n}" + text[line_end:]
    return text[:brace + 1] + f"\n    {rendered}\n" + text[brace + 1:]


def remove_span(text: str, start: int, end: int) -> str:
    """Remove a node; when it sits alone on its line(s), remove those lines entirely."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:start], text[end:line_end]
    if not before.strip() and after.strip() in ("", ";"):
        return text[:line_start] + text[min(line_end + 1, len(text)):]
    tail = end
    while tail < len(text) and text[tail] in " ;":
        tail += 1
    return text[:start] + text[tail:]
