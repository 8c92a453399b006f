"""catalog.kdl ``resource-provider`` and ``resource-command`` blocks, each problem at its own
line and column, and the resource URIs validate refuses (control characters, traversal)."""

from __future__ import annotations

import os

import pytest

from st2.declarations.catalog import parse_catalog_declaration
from st2.declarations.resource_providers import ResourceCommand, ResourceProvider, built_ins
from support import run_st2


def summary(diagnostics) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.span.line, d.span.column, d.message) for d in diagnostics]


def test_providers_and_commands_are_read_over_the_built_ins() -> None:
    declaration, diagnostics = parse_catalog_declaration(
        'catalog {\n'
        '    resource-provider "git" { interval "30s" }\n'
        '    resource-provider "jira" { argv "jira-provider" "-q"; capability "demand"; interval "5m"; timeout "9s" }\n'
        '    resource-command "pr" { argv "gh" "pr" "view" "--json" "state"; timeout "20s" }\n'
        '}\n')
    assert diagnostics == []
    assert declaration.providers == {
        "file": ResourceProvider("file", None, ("demand",), 5.0, 30.0),
        "git": ResourceProvider("git", None, ("demand",), 30.0, 30.0),
        "cmd": ResourceProvider("cmd", None, ("demand",), 300.0, 30.0),
        "jira": ResourceProvider("jira", ("jira-provider", "-q"), ("demand",), 300.0, 9.0),
    }
    assert declaration.commands == {"pr": ResourceCommand("pr", ("gh", "pr", "view", "--json", "state"), 20.0)}
    assert parse_catalog_declaration("catalog {\n}\n")[0].providers == built_ins()


@pytest.mark.parametrize("block, expected", [
    ('resource-provider "jira" {\n        capability "demand" "bogus"\n        argv "j"\n    }',
     [("invalid-value", 3, 29, "unknown capability 'bogus' (capabilities: demand)")]),
    ('resource-provider "file" {\n        argv "my-file-provider"\n    }',
     [("invalid-value", 3, 9, "`file` is a built-in provider; its argv cannot be replaced")]),
    ('resource-provider "jira" {\n        interval "5m"\n    }',
     [("invalid-value", 2, 5, "resource-provider 'jira' needs `argv` (only file, git and cmd are built in)")]),
    ('resource-provider "Bad Scheme" {\n    }',
     [("invalid-value", 2, 23, "resource-provider scheme 'Bad Scheme' is not a URI scheme (a-z, then a-z 0-9 + . -)")]),
    ('resource-provider "git" {\n        intervl "3s"\n    }',
     [("unknown-node", 3, 9, "unknown resource-provider field `intervl` (expected argv, capability, interval, timeout)")]),
    ('resource-provider "git" {\n        interval "0s"\n    }',
     [("invalid-value", 3, 18, 'interval "0s" is not a positive duration')]),
    ('resource-command "pr" {\n        timeout "5s"\n    }',
     [("invalid-value", 2, 5, "resource-command 'pr' needs `argv`")]),
    ('resource-command "../pr" {\n        argv "x"\n    }',
     [("invalid-value", 2, 22, "resource-command name '../pr' must be lower-case letters, digits, '.', '_' or '-'")]),
    ('resource-command "pr" { argv "a"; }\n    resource-command "pr" { argv "b"; }',
     [("duplicate-field", 3, 22, "resource-command 'pr' is declared more than once")]),
])
def test_a_malformed_block_is_refused_at_its_line_and_column(block: str, expected) -> None:
    _, diagnostics = parse_catalog_declaration(f"catalog {{\n    {block}\n}}\n")
    assert summary(diagnostics) == expected


@pytest.mark.process
def test_validate_refuses_resource_uris_with_control_characters_or_traversal(catalog) -> None:
    seat = catalog / "agents" / "h" / "w"
    seat.mkdir(parents=True)
    refused = {
        "file:///srv/../etc/passwd": "the path may not contain '.' or '..' segments",
        "file:///srv/%2e%2e/etc": "the path may not contain a percent escape",
        "git://other-host/srv/repo": "a git: binding names an absolute local path",
        "cmd:../../bin/sh": "a cmd: binding names a resource-command (cmd:<name>)",
        "file:///srv/a\\u{1b}[31mb": "contains a raw character RFC 3986 forbids",
        "file:///srv/a\\nb": "contains a raw character RFC 3986 forbids",
    }
    for uri, reason in refused.items():
        (seat / "agent.kdl").write_text(f'agent "w" {{\n    resource "doc" uri="{uri}"\n    argv "true"\n}}\n')
        result = run_st2("validate", "--host", "h", catalog=catalog)
        assert result.returncode != 0 and reason in result.stdout + result.stderr, (uri, result.stdout, result.stderr)
        assert "agent.kdl:2:" in result.stdout + result.stderr and "Traceback" not in result.stderr
    (seat / "agent.kdl").write_text('agent "w" {\n    resource "doc" uri="file:///srv/now.md"\n    argv "true"\n}\n')
    assert run_st2("validate", "--host", "h", catalog=catalog).returncode == 0


@pytest.mark.process
def test_validate_refuses_a_cmd_binding_whose_command_catalog_kdl_does_not_declare(catalog) -> None:
    seat = catalog / "agents" / "h" / "w"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "w" {\n    resource "doc" uri="file:///srv/now.md"\n'
                                    '    resource "pr" uri="cmd:pr"\n    argv "true"\n}\n')
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stdout.splitlines()[:2] == [
        'agents/h/w/agent.kdl:3:5: error[resource-command-undeclared]: resource "pr" binds cmd:pr, which catalog.kdl '
        'does not declare',
        '  help: add `resource-command "pr" { argv …; }` to catalog.kdl']
    # An unreadable catalog.kdl (a FIFO) is said as such; its commands are unknown, not absent.
    os.mkfifo(catalog / "catalog.kdl")
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert result.returncode == 1 and "unreadable-declaration" in result.stdout, result.stdout
    assert "resource-command-undeclared" not in result.stdout and "Traceback" not in result.stderr
    (catalog / "catalog.kdl").unlink()
    (catalog / "catalog.kdl").write_text('catalog {\n    resource-command "pr" { argv "true"; timeout "5s"; }\n}\n')
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert result.returncode == 0, result.stdout + result.stderr
