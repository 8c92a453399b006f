"""agent.kdl into AgentDeclaration: every rule fires on its fault and stays quiet on the valid form."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from st2.declarations import load_agent
from st2.declarations.model import Resource

FULL = '''agent "reviewer" {
    name "Code reviewer"
    description "Reviews every change before it merges."
    workspace "~/src/app"
    supervisor "lead"
    desired-state "suspended" reason="waiting for CI"
    restart { attempts 5; interval "2m"; delay "500ms"; mode "fail" }
    argv "claude" "--permission-mode" "default"
    ding
    env { LANG "C.UTF-8" }
    meta { managed-by "nix" }
    resource "spec" uri="file:///srv/spec.md" reason="the design"
    resource "board" _tag="github-project" uri="https://github.com/orgs/x/projects/1" relation="tracks" reason="work queue"
    exec "watch" { argv "make" "watch"; keep #true }
    pty "shell" { command "bash -l"; cwd "/tmp"; lifecycle "adopt-only"; tags role="aux"; env { A "1" } }
    stream "ci" { argv "ci-adapter" "--repo" "x" }
    stream "external"
    render {
        json-upsert ".claude/settings.local.json" arrays="union" #"""
            { "hooks": {} }
            """#
        ensure-line ".gitignore" ".st2/"
        copy "_templates/persona.md" ".st2/PERSONA.md"
        file "NOTES.md" { content "hello" }
        git-exclude ".st2/" ".claude/"
    }
    claude { statusline #true }
    harness "claude"
    id "h.reviewer"
    address "reviewer"
}
'''


def load(tmp_path: Path, text: str, identity: str = "reviewer", host: str = "h"):
    directory = tmp_path / "catalog" / "agents" / host / identity
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(text)
    return load_agent(directory / "agent.kdl")


def found(diagnostics) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) if d.span else (d.code, 0, 0) for d in diagnostics]


def minimal(body: str, identity: str = "reviewer") -> str:
    return f'agent "{identity}" {{\n    argv "true"\n{body}}}\n'


def test_the_full_node_set_loads(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, FULL)
    assert diagnostics == []
    assert declaration is not None
    assert (declaration.identity, declaration.host) == ("reviewer", "h")
    assert declaration.name == "Code reviewer"
    assert declaration.description == "Reviews every change before it merges."
    assert declaration.workspace == "~/src/app"
    assert declaration.supervisor == "lead"
    assert (declaration.desired_state, declaration.desired_state_reason) == ("suspended", "waiting for CI")
    assert tuple(declaration.restart) == (5, 120.0, 0.5, "fail")
    assert declaration.argv == ("claude", "--permission-mode", "default")
    assert declaration.command is None
    assert declaration.ding is True
    assert dict(declaration.env) == {"LANG": "C.UTF-8"}
    assert dict(declaration.meta) == {"managed-by": "nix"}
    assert declaration.managed_by == ("nix",)
    assert [resource.wire() for resource in declaration.resources] == [
        {"name": "board", "_tag": "github-project", "uri": "https://github.com/orgs/x/projects/1",
         "relation": "tracks", "reason": "work queue"},
        {"name": "spec", "uri": "file:///srv/spec.md", "reason": "the design"},
    ]
    assert [(task.kind, task.name, task.argv, task.command, task.keep, task.lifecycle)
            for task in declaration.tasks] == [
        ("exec", "watch", ("make", "watch"), None, True, "service"),
        ("pty", "shell", None, "bash -l", False, "adopt-only"),
        ("stream", "ci", ("ci-adapter", "--repo", "x"), None, False, "service"),
        ("stream", "external", None, None, False, "service"),
    ]
    shell = declaration.tasks[1]
    assert (shell.cwd, dict(shell.tags), dict(shell.env)) == ("/tmp", {"role": "aux"}, {"A": "1"})
    assert [tuple(operation) for operation in declaration.render] == [
        ("json-upsert", ".claude/settings.local.json", None, '{ "hooks": {} }', None, "union"),
        ("ensure-line", ".gitignore", None, None, ".st2/", None),
        ("copy", ".st2/PERSONA.md", "_templates/persona.md", None, None, None),
        ("file", "NOTES.md", None, "hello", None, None),
        ("git-exclude", ".st2/", None, None, None, None),
        ("git-exclude", ".claude/", None, None, None, None),
    ]
    assert list(declaration.drivers) == ["claude"]
    assert declaration.drivers["claude"].node.children[0].name == "statusline"
    assert dict(declaration.render_only) == {"harness": ("claude",)}
    assert (declaration.id, declaration.address) == ("h.reviewer", "reviewer")


def test_the_compact_form_lowers_to_the_canonical_pty_and_a_derived_ding(tmp_path: Path) -> None:
    declaration, _ = load(tmp_path, FULL)
    assert [(task.kind, task.name, task.id, task.derived) for task in declaration.runtime_tasks("h")] == [
        ("pty", "agent", "h.reviewer", False),
        ("exec", "ci", "h.reviewer.ci", True),
        ("exec", "ding", "h.reviewer.ding", True),
        ("pty", "shell", "h.reviewer.shell", False),
        ("exec", "watch", "h.reviewer.watch", False),
    ]
    agent_task = declaration.runtime_tasks("h")[0]
    assert dict(agent_task.env) == {"LANG": "C.UTF-8"}


def test_running_is_the_default_and_omits_the_reason(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal(""))
    assert diagnostics == []
    assert (declaration.desired_state, declaration.desired_state_reason) == ("running", None)
    assert declaration.restart is None
    assert tuple(declaration.restart_policy) == (3, 60.0, 0.0, "delay")


def test_an_unknown_node_is_rejected_with_a_suggestion(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal('    nmae "x"\n'))
    assert declaration is None
    assert found(diagnostics) == [("unknown-node", 3, 5)]
    assert diagnostics[0].help == "did you mean `name`?"
    assert diagnostics[0].field_path == ("agent", "reviewer", "nmae")


def test_unknown_nodes_inside_blocks_are_rejected(tmp_path: Path) -> None:
    text = minimal('    restart { tries 3 }\n    exec "w" { argv "x"; retry 1 }\n')
    assert found(load(tmp_path, text)[1]) == [("unknown-node", 3, 15), ("unknown-node", 4, 26)]


def test_argv_and_command_together_are_rejected(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal('    command "echo hi"\n'))
    assert declaration is None
    assert found(diagnostics) == [("argv-and-command", 3, 5)]


def test_argv_and_command_together_in_a_task_are_rejected(tmp_path: Path) -> None:
    text = minimal('    exec "w" {\n        command "a"\n        argv "b"\n    }\n')
    assert found(load(tmp_path, text)[1]) == [("argv-and-command", 5, 9)]


def test_command_alone_is_a_launch(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, 'agent "reviewer" { command "echo hi" }\n')
    assert diagnostics == [] and declaration.command == "echo hi" and declaration.argv is None


@pytest.mark.parametrize("argv, column", [("argv", 5), ('argv ""', 10)])
def test_an_empty_argv_is_rejected(tmp_path: Path, argv: str, column: int) -> None:
    text = f'agent "reviewer" {{\n    {argv}\n}}\n'
    assert found(load(tmp_path, text)[1]) == [("empty-argv", 2, column)]


def test_argv_accepts_only_strings(tmp_path: Path) -> None:
    text = 'agent "reviewer" {\n    argv "sleep" 5\n}\n'
    assert found(load(tmp_path, text)[1]) == [("invalid-value", 2, 18)]


@pytest.mark.parametrize("field, limit", [("name", 160), ("description", 1000)])
def test_presentation_at_its_limit_is_accepted(tmp_path: Path, field: str, limit: int) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f'    {field} "{"é" * limit}"\n'))
    assert diagnostics == []
    assert len(getattr(declaration, field)) == limit


@pytest.mark.parametrize("field, limit", [("name", 160), ("description", 1000)])
def test_presentation_over_its_limit_is_rejected(tmp_path: Path, field: str, limit: int) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f'    {field} "{"é" * (limit + 1)}"\n'))
    assert declaration is None
    assert found(diagnostics) == [(f"{field}-too-long", 3, 6 + len(field))]
    assert diagnostics[0].message == f"`{field}` is {limit + 1} characters; the limit is {limit}"


@pytest.mark.parametrize("value", ["", " padded", "two\\nlines", "sep\\u{2028}x", "bidi\\u{202e}evil",
                                   "zero\\u{200b}width", "isolate\\u{2066}x\\u{2069}", "bom\\u{feff}"])
def test_presentation_must_be_one_printable_line(tmp_path: Path, value: str) -> None:
    assert found(load(tmp_path, minimal(f'    name "{value}"\n'))[1]) == [("presentation-invalid", 3, 10)]


@pytest.mark.parametrize("value", ["café", "日本語の席", "emoji \U0001f916 seat"])
def test_a_printable_non_ascii_presentation_is_accepted(tmp_path: Path, value: str) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f'    name "{value}"\n'))
    assert declaration is not None and declaration.name == value, diagnostics


def test_a_field_declared_twice_is_rejected(tmp_path: Path) -> None:
    text = minimal('    name "a"\n    name "b"\n')
    assert found(load(tmp_path, text)[1]) == [("duplicate-field", 4, 5)]


def test_a_wrongly_typed_value_is_not_defaulted(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal('    keep "yes"\n    workspace 7\n'))
    assert declaration is None
    assert found(diagnostics) == [("invalid-value", 3, 10), ("invalid-value", 4, 15)]


@pytest.mark.parametrize("line, expected", [
    ('desired-state "suspended"', [("desired-state-reason-required", 3, 5)]),
    ('desired-state "retired"', [("desired-state-reason-required", 3, 5)]),
    ('desired-state "running" reason="x"', [("desired-state-reason-forbidden", 3, 29)]),
    ('desired-state "paused" reason="x"', [("unknown-desired-state", 3, 19)]),
    ('desired-state "suspended" reason=" padded"', [("desired-state-reason-invalid", 3, 31)]),
    (f'desired-state "suspended" reason="{"x" * 161}"', [("desired-state-reason-invalid", 3, 31)]),
    ('desired-state "suspended" reason="x" why="y"', [("unknown-property", 3, 42)]),
    ('retired #true\n    desired-state "retired" reason="done"', [("lifecycle-conflict", 4, 5)]),
])
def test_desired_state_rules_fire(tmp_path: Path, line: str, expected) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f"    {line}\n"))
    assert declaration is None
    assert found(diagnostics) == expected


@pytest.mark.parametrize("line, state, reason", [
    ('desired-state "running"', "running", None),
    ('desired-state "retired" reason="replaced by v2"', "retired", "replaced by v2"),
    (f'desired-state "suspended" reason="{"x" * 160}"', "suspended", "x" * 160),
    ("retired #true", "retired", None),
    ("retired #false", "running", None),
])
def test_desired_state_valid_forms_load(tmp_path: Path, line: str, state: str, reason) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f"    {line}\n"))
    assert diagnostics == []
    assert (declaration.desired_state, declaration.desired_state_reason) == (state, reason)


def test_an_unknown_type_is_rejected_and_service_accepted(tmp_path: Path) -> None:
    assert found(load(tmp_path, minimal('    type "batch"\n'))[1]) == [("unknown-type", 3, 10)]
    assert load(tmp_path, minimal('    type "service"\n'))[1] == []


@pytest.mark.parametrize("body, expected", [
    ('restart { attempts -1 }', [("restart-invalid", 3, 24)]),
    ('restart { interval "soon" }', [("restart-invalid", 3, 24)]),
    ('restart { delay 5 }', [("invalid-value", 3, 21)]),
    ('restart { mode "never" }', [("restart-invalid", 3, 20)]),
    ('restart { delay "366d" }', [("restart-invalid", 3, 21)]),
    ('restart { delay "' + "9" * 400 + 's" }', [("restart-invalid", 3, 21)]),
    ('restart { interval "' + "9" * 5000 + '" }', [("restart-invalid", 3, 24)]),
], ids=lambda value: f"{len(value)}-characters" if isinstance(value, str) and len(value) > 500 else None)
def test_malformed_restart_fields_are_errors_not_defaults(tmp_path: Path, body: str, expected) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f"    {body}\n"))
    assert declaration is None
    assert found(diagnostics) == expected


@pytest.mark.parametrize("body, expected", [
    ('resource "spec" reason="x"', [("resource-invalid", 3, 5)]),
    ('resource "spec" uri="relative/path"', [("resource-invalid", 3, 21)]),
    ('resource "spec" uri="https://bad host/"', [("resource-invalid", 3, 21)]),
    ('resource "spec" uri="https://x/%zz"', [("resource-invalid", 3, 21)]),
    ('resource "spec" uri="https://x/" relation="Not_Kebab"', [("resource-invalid", 3, 38)]),
    ('resource "spec" uri="https://x/" colour="red"', [("unknown-property", 3, 38)]),
    ('resource uri="https://x/"', [("resource-invalid", 3, 5)]),
    ('resource "a" uri="https://x/"\n    resource "a" uri="https://y/"', [("duplicate-resource", 4, 14)]),
])
def test_resource_rules_fire(tmp_path: Path, body: str, expected) -> None:
    assert found(load(tmp_path, minimal(f"    {body}\n"))[1]) == expected


def test_a_resource_descriptor_is_the_roster_wire_shape() -> None:
    assert Resource(name="work", uri="vendor+thing://authority/exact%20identity", tag="vendor-specific-type").wire() == {
        "name": "work", "_tag": "vendor-specific-type", "uri": "vendor+thing://authority/exact%20identity"}


@pytest.mark.parametrize("body, expected", [
    ('render { json-upsert "a.json" "[1]" }', [("render-invalid", 3, 35)]),
    ('render { json-upsert "a.json" "{" }', [("render-invalid", 3, 35)]),
    ('render { json-upsert "a.json" arrays="merge" "{}" }', [("render-invalid", 3, 35)]),
    ('render { ensure-line ".gitignore" }', [("render-invalid", 3, 14)]),
    ('render { copy "a" }', [("render-invalid", 3, 14)]),
    ('render { template "a" "b" }', [("unknown-render-operation", 3, 14)]),
])
def test_render_rules_fire(tmp_path: Path, body: str, expected) -> None:
    assert found(load(tmp_path, minimal(f"    {body}\n"))[1]) == expected


@pytest.mark.parametrize("body, expected", [
    ('exec { argv "x" }', [("task-name-missing", 3, 5)]),
    ('exec "w" { argv "x" }\n    pty "w" { argv "y" }', [("duplicate-task", 4, 9)]),
    ('pty "agent" { argv "x" }', [("compact-conflict", 3, 9)]),
    ('ding\n    exec "ding" { argv "x" }', [("compact-conflict", 4, 10)]),
    ('exec "w" { argv "x"; lifecycle "sometimes" }', [("unknown-lifecycle", 3, 36)]),
])
def test_task_rules_fire(tmp_path: Path, body: str, expected) -> None:
    assert found(load(tmp_path, minimal(f"    {body}\n"))[1]) == expected


def test_an_explicit_pty_agent_without_a_compact_launch_is_accepted(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, 'agent "reviewer" { pty "agent" { argv "claude" } }\n')
    assert diagnostics == []
    assert [task.id for task in declaration.runtime_tasks("h")] == ["h.reviewer.agent"]


def test_an_agent_with_nothing_to_launch_is_not_runnable(tmp_path: Path) -> None:
    text = 'agent "reviewer" {\n    stream "ci"\n}\n'
    assert found(load(tmp_path, text)[1]) == [("not-runnable", 1, 1)]


def test_the_identity_must_match_the_seat_directory(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, 'agent "other" { argv "true" }\n')
    assert declaration is None
    assert found(diagnostics) == [("identity-mismatch", 1, 7)]
    assert load(tmp_path, 'agent { argv "true" }\n')[0].identity == "reviewer"


def test_a_declared_host_must_match_the_host_directory(tmp_path: Path) -> None:
    assert found(load(tmp_path, minimal('    host "elsewhere"\n'))[1]) == [("host-mismatch", 3, 10)]
    assert load(tmp_path, minimal('    host "h"\n'))[1] == []


def test_an_authored_conflicting_st_agent_is_refused(tmp_path: Path) -> None:
    assert found(load(tmp_path, minimal('    env { ST_AGENT "h.someone" }\n'))[1]) == [("reserved-environment", 3, 5)]
    assert load(tmp_path, minimal('    env { ST_AGENT "h.reviewer" }\n'))[1] == []


def test_top_level_shape_is_strict(tmp_path: Path) -> None:
    text = 'agent "reviewer" { argv "true" }\nagent "two" { argv "true" }\nnotes "x"\n'
    assert found(load(tmp_path, text)[1]) == [("multiple-agents", 2, 1), ("unexpected-top-level-node", 3, 1)]
    assert found(load(tmp_path, "// nothing here\n")[1]) == [("missing-agent", 1, 1)]


def test_meta_keeps_every_marker_in_order(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal('    meta { managed-by "nix"; managed-by "ansible"; owner "ops" }\n'))
    assert diagnostics == []
    assert declaration.managed_by == ("nix", "ansible")
    assert dict(declaration.meta) == {"owner": "ops"}


def test_every_problem_is_reported_once(tmp_path: Path) -> None:
    text = 'agent "reviewer" {\n    nmae "x"\n    argv "a"\n    command "b"\n    desired-state "suspended"\n}\n'
    assert found(load(tmp_path, text)[1]) == [
        ("unknown-node", 2, 5), ("argv-and-command", 4, 5), ("desired-state-reason-required", 5, 5)]


def test_an_unreadable_declaration_is_reported(tmp_path: Path) -> None:
    directory = tmp_path / "catalog" / "agents" / "h" / "reviewer"
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_bytes(b'agent "reviewer" { name "\xff" }\n')
    declaration, diagnostics = load_agent(directory / "agent.kdl")
    assert declaration is None
    assert [(d.code, d.layer, d.source, d.span) for d in diagnostics] == [
        ("unreadable-declaration", "catalog", "agents/h/reviewer/agent.kdl", None)]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_loading_arbitrary_text_never_raises(text: str) -> None:
    from st2.declarations import parse_agent

    declaration, diagnostics = parse_agent(text, path=Path("agents/h/reviewer/agent.kdl"),
                                           source="agents/h/reviewer/agent.kdl", host="h", identity="reviewer")
    assert (declaration is None) == any(diagnostic.severity == "error" for diagnostic in diagnostics)


@pytest.mark.parametrize("field", ["workspace", "supervisor", "role", "id", "address", "identity"])
def test_an_empty_string_field_is_rejected_not_taken_as_absent(tmp_path: Path, field: str) -> None:
    declaration, diagnostics = load(tmp_path, minimal(f'    {field} ""\n'))
    assert declaration is None
    assert found(diagnostics) == [("invalid-value", 3, 6 + len(field))]


def test_an_empty_command_is_rejected(tmp_path: Path) -> None:
    assert found(load(tmp_path, 'agent "reviewer" {\n    command ""\n}\n')[1]) == [("invalid-value", 2, 13)]


def test_a_driver_block_alone_is_a_launch(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, 'agent "reviewer" {\n    codex { }\n}\n')
    assert diagnostics == []
    assert list(declaration.drivers) == ["codex"]


def test_a_nested_relative_render_target_is_accepted(tmp_path: Path) -> None:
    declaration, diagnostics = load(tmp_path, minimal('    render { file ".st2/deep/x..y.md" "x" }\n'))
    assert diagnostics == [] and declaration.render[0].target == ".st2/deep/x..y.md"
