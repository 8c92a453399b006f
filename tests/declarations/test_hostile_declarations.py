"""Hostile declarations: a document nested deeper than the bound is one located error (never a
RecursionError) in every declaration and every command; a generated file with thousands of
problems lists at most the cap and counts the rest; locating a diagnostic encodes only its own
line, never the text before it."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations.catalog import load_catalog_declaration
from st2.declarations import load_agent
from st2.declarations import spans
from st2.declarations.context import MAX_DIAGNOSTICS
from st2.declarations.principal import load_principal
from st2.declarations.spans import MAX_NESTING, SourceText
from support import run_st2, st2_env


def nested(depth: int) -> str:
    return "x {" * depth + "}" * depth


def agent_text(body: str) -> str:
    return f'agent "w" {{\n    argv "sh" "-c" "true"\n    {body}\n}}\n'


def seat_declaration(catalog: Path, text: str) -> Path:
    directory = catalog / "agents" / "h" / "w"
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(text)
    return directory / "agent.kdl"


def test_a_declaration_nested_500_deep_is_one_located_error(catalog: Path) -> None:
    path = seat_declaration(catalog, agent_text(nested(500)))
    assert len(path.read_bytes()) < 4000
    declaration, diagnostics = load_agent(path)
    assert declaration is None
    assert [(d.code, d.span.line, d.span.column) for d in diagnostics] == [
        ("nesting-too-deep", 3, 7 + 3 * (MAX_NESTING - 1))]  # the first `{` past the bound
    assert str(diagnostics[0]).startswith("agents/h/w/agent.kdl:3:")


def test_nesting_up_to_the_bound_is_judged_by_its_fields_not_refused(catalog: Path) -> None:
    # One level is the agent block itself; MAX_NESTING - 1 more stay within the bound.
    path = seat_declaration(catalog, agent_text(nested(MAX_NESTING - 1)))
    _, diagnostics = load_agent(path)
    assert [d.code for d in diagnostics] == ["unknown-node"]


def test_a_deep_document_ckdl_rejects_is_located_too() -> None:
    start, end, message = spans.locate_syntax_error('agent "w" {\n' + "x {" * 500 + "\n")
    assert "deeper" in message or "unclosed" in message


def test_principal_and_catalog_declarations_refuse_deep_nesting(tmp_path: Path) -> None:
    principal = tmp_path / "principals" / "h" / "ops" / "principal.kdl"
    principal.parent.mkdir(parents=True)
    principal.write_text('principal "ops" {\n    ' + nested(500) + "\n}\n")
    _, diagnostics = load_principal(principal)
    assert [d.code for d in diagnostics] == ["nesting-too-deep"]
    (tmp_path / "catalog.kdl").write_text("catalog {\n    " + nested(500) + "\n}\n")
    _, diagnostics = load_catalog_declaration(tmp_path)
    assert [d.code for d in diagnostics] == ["nesting-too-deep"]


@pytest.mark.process
@pytest.mark.parametrize("argv", [["validate"], ["agents"], ["tasks"], ["doctor"], ["ls"], ["up", "--once"]])
def test_every_command_reading_a_deep_declaration_answers_without_a_traceback(tmp_path: Path, catalog: Path, argv) -> None:
    seat_declaration(catalog, agent_text(nested(500)))
    result = run_st2(*argv, "--host", "h", env=st2_env(catalog, XDG_STATE_HOME=str(tmp_path / "state")), timeout=60)
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr + result.stdout, result
    if argv == ["validate"]:
        assert result.returncode == 1 and "agents/h/w/agent.kdl:3:" in result.stdout and "nesting-too-deep" in result.stdout


def test_thousands_of_problems_list_the_cap_and_count_the_rest(catalog: Path) -> None:
    body = "\n    ".join(f"unknown{index} 1" for index in range(5000))
    path = seat_declaration(catalog, agent_text(body))
    _, diagnostics = load_agent(path)
    assert len(diagnostics) == MAX_DIAGNOSTICS + 1
    assert all(d.code == "unknown-node" for d in diagnostics[:-1])
    assert diagnostics[-1].code == "diagnostics-truncated" and diagnostics[-1].severity == "error"
    assert f"{5000 - MAX_DIAGNOSTICS} more problem(s)" in diagnostics[-1].message
    # The span walk stops past the last listed node, yet every listed span is exact.
    assert [(d.span.line, d.span.column, d.span.length) for d in diagnostics[:-1]] == [
        (index + 3, 5, len(f"unknown{index}")) for index in range(MAX_DIAGNOSTICS)]


def test_a_few_problems_are_all_listed_without_a_truncation(catalog: Path) -> None:
    body = "\n    ".join(f"unknown{index} 1" for index in range(MAX_DIAGNOSTICS))
    _, diagnostics = load_agent(seat_declaration(catalog, agent_text(body)))
    assert len(diagnostics) == MAX_DIAGNOSTICS and {d.code for d in diagnostics} == {"unknown-node"}


def test_locating_a_span_encodes_only_its_own_line(monkeypatch) -> None:
    lines = [f"é-line {index} " + "x" * 50 for index in range(2000)]
    text = "\n".join(lines)
    encoded = []
    real = spans._utf8_length
    monkeypatch.setattr(spans, "_utf8_length", lambda part: encoded.append(len(part)) or real(part))
    source = SourceText(text)
    positions = [text.index(f"é-line {index} ") for index in range(0, 2000, 2)]
    located = [source.span(position, position + 3) for position in positions]
    assert sum(encoded) <= 2 * len(text)  # the quadratic version encodes ~500x the text
    for position, span in zip(positions, located):
        assert span.offset == len(text[:position].encode())
        assert span.length == len(text[position:position + 3].encode())


def test_an_ascii_text_is_located_without_encoding(monkeypatch) -> None:
    text = "agent \"w\" {\n    argv \"sh\"\n}\n" * 100
    encoded = []
    monkeypatch.setattr(spans, "_utf8_length", lambda part: encoded.append(part) or len(part))
    span = SourceText(text).span(len(text) - 3, len(text) - 1)
    assert encoded == [] and span.offset == len(text) - 3 and span.length == 2
