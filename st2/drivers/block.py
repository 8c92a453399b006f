"""The field grammar every typed driver block shares (``claude { … }``, ``codex { … }`` …): no
arguments or properties on the block; each child a known field, declared once, carrying string
arguments only — exactly one non-empty string for a single-value field, at least one otherwise."""

from __future__ import annotations

from typing import Any


def _plain(value: Any) -> Any:
    return getattr(value, "value", value)


def read_fields(node: Any, block: str, fields: tuple[str, ...], single_value: tuple[str, ...]) -> dict[str, Any]:
    """``{field: str | tuple[str, ...]}`` from the ckdl node of ``<block> { … }``; raise
    ValueError naming the first problem."""
    if getattr(node, "args", None) or getattr(node, "properties", None):
        raise ValueError(f"`{block}` takes no arguments or properties; put its fields in its block")
    values: dict[str, Any] = {}
    for child in getattr(node, "children", ()) or ():
        name = child.name
        if name not in fields:
            raise ValueError(f"unknown field `{name}` in `{block}`; expected one of {', '.join(fields)}")
        if name in values:
            raise ValueError(f"`{name}` is declared more than once in `{block}`")
        if child.properties or child.children:
            raise ValueError(f"`{block} {{ {name} }}` takes string arguments only")
        words = [_plain(value) for value in child.args]
        if not all(isinstance(word, str) for word in words):
            raise ValueError(f"`{block} {{ {name} }}` takes strings")
        if name in single_value:
            if len(words) != 1 or not words[0]:
                raise ValueError(f"`{block} {{ {name} }}` takes exactly one non-empty string")
            values[name] = words[0]
        else:
            if not words:
                raise ValueError(f"`{block} {{ {name} }}` needs at least one argument")
            values[name] = tuple(words)
    return values


def expand_native_block(declaration, host: str, st2_command: list[str], harness: str, noun: str, read_block,
                        session_argv):
    """Expand the ``<harness> { … }`` block of a seat whose wrapper owns its delivery (Codex,
    opencode) into its argv: the block is the launch, so ``argv``/``command`` beside it is
    refused, and so is ``ding`` (the wrapper's pump delivers). ``noun`` names the seat in the
    refusal ("a Codex seat"). Raise ValueError naming the declaration and the problem."""
    block = declaration.drivers.get(harness)
    if block is None:
        return declaration
    label = f"{declaration.path}: agent \"{declaration.identity}\""
    if declaration.argv is not None or declaration.command is not None:
        raise ValueError(f"{label} declares `{harness} {{ … }}` and `argv`/`command`; the driver block is the "
                         "launch, so remove one of them")
    if declaration.ding:
        raise ValueError(f"{label} declares `{harness} {{ … }}` and `ding`; {noun} is delivered by its "
                         "wrapper's native pump only, so remove `ding`")
    try:
        content = read_block(block.node)
    except ValueError as error:
        raise ValueError(f"{label}: {error}") from None
    agent = f"{host}.{declaration.identity}"
    return declaration._replace(argv=session_argv(st2_command, agent, agent, content))
