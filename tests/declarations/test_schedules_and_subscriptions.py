"""``schedule`` blocks and ``subscribe`` lines in agent.kdl: the accepted shapes and one
file:line:column diagnostic per malformed one."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations import load_agent
from st2.declarations.model import Schedule


def load(tmp_path: Path, body: str):
    directory = tmp_path / "catalog" / "agents" / "h" / "reviewer"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "reviewer" {{\n    argv "true"\n{body}}}\n')
    return load_agent(directory / "agent.kdl")


def test_both_cadences_are_read_into_the_model(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, '    schedule "daily" { every "24h"; prompt "summarize the day" }\n'
                                              '    schedule "morning" {\n        at "09:00" "Europe/Berlin"\n'
                                              '        prompt "plan\\nthe day"\n    }\n')
    assert diagnostics == []
    assert declaration.schedules == (
        Schedule(name="daily", prompt="summarize the day", every_seconds=86400),
        Schedule(name="morning", prompt="plan\nthe day", at=(9, 0), zone="Europe/Berlin"))
    assert [schedule.cadence for schedule in declaration.schedules] == ["every 86400s", "at 09:00 Europe/Berlin"]


@pytest.mark.parametrize("body, expected", [
    ('schedule "daily"', ("schedule-invalid", 3, 5, 'schedule "daily" needs a cadence: `every` or `at`')),
    ('schedule "daily" { every "24h" }', ("schedule-invalid", 3, 5, 'schedule "daily" needs a `prompt`')),
    ('schedule "a/b" { every "1h"; prompt "p" }', ("schedule-invalid", 3, 14, "a schedule needs one name")),
    ('schedule "d" { every "30s"; prompt "p" }', ("schedule-invalid", 3, 26, "at least 60s")),
    ('schedule "d" { every "400d"; prompt "p" }', ("schedule-invalid", 3, 26, "longer than the maximum, 365d")),
    ('schedule "d" { every "soon"; prompt "p" }', ("schedule-invalid", 3, 26, '"soon" is not a duration')),
    ('schedule "d" { at "9am" "UTC"; prompt "p" }', ("schedule-invalid", 3, 23, "24-hour HH:MM")),
    ('schedule "d" { at "24:00" "UTC"; prompt "p" }', ("schedule-invalid", 3, 23, "24-hour HH:MM")),
    ('schedule "d" { at "09:00" "Mars/Olympus"; prompt "p" }', ("schedule-invalid", 3, 31, "not in this host's zone")),
    ('schedule "d" { at "09:00" "../../etc/passwd"; prompt "p" }', ("schedule-invalid", 3, 31, "not an IANA zone")),
    ('schedule "d" { at "09:00"; prompt "p" }', ("schedule-invalid", 3, 20, "takes a time and a zone")),
    ('schedule "d" { every "1h"; at "09:00" "UTC"; prompt "p" }', ("schedule-invalid", 3, 32, "choose one cadence")),
    ('schedule "d" { every "1h"; prompt "" }', ("schedule-invalid", 3, 39, "`prompt` must be")),
    ('schedule "d" { every "1h"; prompt "a\\u{1b}[2J" }', ("schedule-invalid", 3, 39, "`prompt` must be")),
    ('schedule "d" { every "1h"; when "now"; prompt "p" }', ("unknown-node", 3, 32, "unknown schedule field `when` (expected every, at, prompt)")),
    ('schedule "d" { every "1h"; prompt "p" }\n    schedule "d" { every "2h"; prompt "q" }',
     ("schedule-invalid", 4, 14, 'schedule "d" is declared more than once')),
])
def test_each_malformed_schedule_is_one_diagnostic_at_its_token(tmp_path: Path, body: str, expected) -> None:
    assert_one_diagnostic(tmp_path, body, expected)


def assert_one_diagnostic(tmp_path: Path, body: str, expected) -> None:
    declaration, diagnostics = load(tmp_path, f"    {body}\n")
    assert declaration is None
    assert len(diagnostics) == 1, [str(d) for d in diagnostics]
    diagnostic = diagnostics[0]
    code, line, column, words = expected
    assert (diagnostic.code, diagnostic.span.line, diagnostic.span.column) == (code, line, column)
    assert words in diagnostic.message
    assert str(diagnostic).startswith(f"agents/h/reviewer/agent.kdl:{line}:{column}: error[{code}]")


def test_a_subscription_is_read_into_the_model(tmp_path: Path) -> None:
    from st2.declarations.model import Subscription

    declaration, diagnostics = load(tmp_path, '    stream "changes"\n'
                                              '    subscribe "now.md" stream="changes"\n'
                                              '    subscribe "ci" stream="changes" agent="h.builder"\n')
    assert diagnostics == []
    assert declaration.subscriptions == (Subscription("now.md", "changes"), Subscription("ci", "changes", "h.builder"))


@pytest.mark.parametrize("body, expected", [
    ('subscribe "doc"', ("subscription-invalid", 3, 5, "needs `stream`")),
    ('subscribe "Doc" stream="s"', ("subscription-invalid", 3, 15, "one binding name")),
    ('subscribe "doc" stream="a b"', ("subscription-invalid", 3, 21, "`stream` must be a name")),
    ('subscribe "doc" stream="s" agent="../x"', ("subscription-invalid", 3, 32, "`agent` must be a name")),
    ('subscribe "doc" stream="s" key="k"', ("unknown-property", 3, 32, "does not accept the property `key`")),
    ('subscribe "doc" stream="s"\n    subscribe "doc" stream="s"',
     ("subscription-invalid", 4, 15, 'subscription "doc" is declared more than once')),
])
def test_each_malformed_subscription_is_one_diagnostic_at_its_token(tmp_path: Path, body: str, expected) -> None:
    assert_one_diagnostic(tmp_path, body, expected)
