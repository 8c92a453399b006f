"""The st2.agent-spec-diagnostic.v1 envelope: pinned field order, nulls kept, the human line."""

from __future__ import annotations

import json

from st2.declarations.diagnostics import CODES, Diagnostic, Span


def test_the_wire_shape_keeps_field_order_and_nulls() -> None:
    located = Diagnostic(code="task-name-missing", severity="error", layer="declaration",
                         source="agents/example/worker/agent.kdl", span=Span(42, 3, 3, 3),
                         field_path=("agent", "worker", "pty"), message="pty task must have one positional string name")
    assert json.dumps(located.wire(), separators=(",", ":")) == (
        '{"schema":"st2.agent-spec-diagnostic.v1","code":"task-name-missing","severity":"error",'
        '"layer":"declaration","source":"agents/example/worker/agent.kdl",'
        '"span":{"offset":42,"length":3,"line":3,"column":3},"fieldPath":["agent","worker","pty"],'
        '"message":"pty task must have one positional string name","help":null}')
    unlocated = Diagnostic(code="catalog-unreadable", severity="error", layer="catalog", source=None, span=None,
                           field_path=None, message="cannot list agents")
    assert json.dumps(unlocated.wire(), separators=(",", ":")) == (
        '{"schema":"st2.agent-spec-diagnostic.v1","code":"catalog-unreadable","severity":"error",'
        '"layer":"catalog","source":null,"span":null,"fieldPath":null,"message":"cannot list agents","help":null}')


def test_the_human_form_is_file_line_column_severity_code_message() -> None:
    diagnostic = Diagnostic(code="unknown-node", severity="warning", layer="declaration", source="a.kdl",
                            span=Span(0, 4, 2, 5), field_path=None, message="unknown node `nmae`",
                            help="did you mean `name`?")
    assert str(diagnostic) == "a.kdl:2:5: warning[unknown-node]: unknown node `nmae`\n  help: did you mean `name`?"
    assert diagnostic.promoted().severity == "error"
    assert Diagnostic(code="x", severity="error", layer="catalog", source="agents/h", span=None, field_path=None,
                      message="m").human() == "agents/h: error[x]: m"


def test_every_code_the_loaders_emit_is_documented() -> None:
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "st2"
    sources = [path.read_text() for folder in ("declarations", "catalog") for path in (package / folder).glob("*.py")]
    emitted = set()
    for text in sources:
        emitted.update(re.findall(r'(?:report(?:_shape)?\(|code=|_problem\(|_located\([^,]+, [^,]+, )\s*f?"([a-z][a-z-]+)"', text))
    emitted.discard("name")  # f"{field}-too-long" expands to the two codes below
    assert emitted <= set(CODES), emitted - set(CODES)
    assert {"name-too-long", "description-too-long"} <= set(CODES)
