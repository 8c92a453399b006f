"""The ``resume "last" | "never"`` knob of a seat's agent.kdl (issue 24): default last, a wrong
word or shape fails with file:line:column, and it needs a typed driver block."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations import load_agent


def load(tmp_path: Path, body: str, launch: str = '    claude { model "m" }\n'):
    directory = tmp_path / "catalog" / "agents" / "h" / "worker"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "worker" {{\n{launch}{body}}}\n')
    return load_agent(directory / "agent.kdl")


def test_the_default_is_last(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, "")
    assert diagnostics == [] and declaration.resume == "last"


@pytest.mark.parametrize("word", ["last", "never"])
def test_both_words_load(tmp_path: Path, word: str) -> None:
    declaration, diagnostics = load(tmp_path, f'    resume "{word}"\n')
    assert diagnostics == [] and declaration.resume == word


@pytest.mark.parametrize("body, line", [
    ('    resume "sometimes"\n',
     'agents/h/worker/agent.kdl:3:12: error[unknown-resume]: unknown resume policy "sometimes"; expected last or never'),
    ('    resume #true\n',
     'agents/h/worker/agent.kdl:3:12: error[invalid-value]:'),
    ('    resume "last"\n    resume "never"\n',
     'agents/h/worker/agent.kdl:4:5: error[duplicate-field]: `resume` is declared more than once in agent "worker"'),
])
def test_a_malformed_knob_fails_with_file_line_column(tmp_path: Path, body: str, line: str) -> None:
    declaration, diagnostics = load(tmp_path, body)
    assert declaration is None
    assert str(diagnostics[0]).startswith(line), str(diagnostics[0])


def test_a_seat_without_a_driver_block_cannot_declare_it(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, '    resume "never"\n', launch='    argv "sh"\n')
    assert declaration is None
    assert str(diagnostics[0]).startswith(
        'agents/h/worker/agent.kdl:3:5: error[resume-without-driver]: `resume` applies to a seat with a typed '
        'driver block (claude, codex, pi, omp, opencode); agent "worker" has none'), str(diagnostics[0])
