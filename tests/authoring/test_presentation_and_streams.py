"""`st2 agent new`, `describe`, `address` and `stream add|rm`: source-preserving authoring
through the full-catalog gate that refuses a Nix-owned declaration outright."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.declarations.model import DRIVER_HARNESSES
from support import run_st2
from st2.drivers import available_harnesses, expansion

ORIGINAL = '// kept\nagent "x" {\n    argv "sleep" "600"   // kept too\n}\n'
NIX = '// kept\nagent "x" {\n    meta { managed-by "nix"; }\n    argv "sleep" "600"   // kept too\n}\n'


def test_the_offered_harnesses_are_shell_and_every_driver_that_expands_its_block():
    expected = ["shell"] + [harness for harness in DRIVER_HARNESSES if expansion(harness) is not None]
    assert list(available_harnesses()) == expected
    assert "claude" in expected and "opencode" in expected
    # Every expansion the registry names is a real module with the expand entry point.
    assert all(callable(expansion(harness).expand) for harness in expected[1:])


@pytest.mark.process
def test_agent_new_publishes_a_valid_starter_declaration_once(fleet):
    created = fleet.st2("agent", "new", "helper", "--harness", "shell", "--workspace", "/tmp")
    assert created.returncode == 0, created.stderr
    declaration = fleet.catalog / "agents" / "h" / "helper" / "agent.kdl"
    assert created.stdout == (f"declared h.helper at {declaration}; `st2 up` launches it\n"
                              "declared the operator principal h.operator: `st2 message send h.helper -m …` "
                              "mails the seat as h.operator\n")
    operator = fleet.catalog / "principals" / "h" / "operator" / "principal.kdl"
    assert operator.read_text() == 'principal "operator" host="h"\n'
    mailed = fleet.st2("message", "send", "helper", "-m", "hello", "--subject", "hi")
    assert mailed.returncode == 0, mailed.stderr
    assert "from: h.operator" in next((declaration.parent / "resources" / "inbox").iterdir()).read_text()
    assert declaration.read_text() == 'agent "helper" {\n    host "h"\n    workspace "/tmp"\n    argv "sh"\n    ding\n}\n'
    assert (fleet.catalog / ".st2" / "catalog-generation").read_text() == "1\n"
    claude = fleet.st2("agent", "new", "coder", "--harness", "claude")
    assert claude.returncode == 0, claude.stderr
    assert "operator principal" not in claude.stdout, "a catalog that has one gets no second"
    assert fleet.st2("validate").returncode == 0
    declaration.write_text(declaration.read_text().replace('"sh"', '"bash"'))
    again = fleet.st2("agent", "new", "helper", "--harness", "shell", "--workspace", "/tmp")
    assert again.returncode == 1 and "[seat-exists] h.helper is already declared" in again.stderr
    unknown = fleet.st2("agent", "new", "other", "--harness", "aider")
    assert unknown.returncode == 2
    assert f"'aider' has no driver; choose one of {', '.join(available_harnesses())}" in unknown.stderr
    assert not (fleet.catalog / "agents" / "h" / "other").exists()


@pytest.mark.process
def test_describe_and_address_change_only_presentation_lines(fleet):
    directory = fleet.seat("x", '    argv "sleep" "600"   // kept too')
    path = directory / "agent.kdl"
    original = path.read_text()
    described = fleet.st2("agent", "describe", "x", "--name", "Build owner", "--description", "Owns the build",
                          "--json")
    assert described.returncode == 0, described.stderr
    assert described.stdout == ('{"result":"changed","identity":"h.x","name":"Build owner",'
                                '"description":"Owns the build"}\n')
    addressed = fleet.st2("agent", "address", "h.x", "builder", "--json")
    assert addressed.stdout == '{"result":"changed","identity":"h.x","address":"builder","busAddress":"h.builder"}\n'
    row = json.loads(fleet.st2("agents", "--json").stdout)[0]
    assert (row["identity"], row["name"], row["description"], row["address"]) == (
        "h.x", "Build owner", "Owns the build", "builder")
    repeat = fleet.st2("agent", "describe", "x", "--name", "Build owner", "--json")
    assert json.loads(repeat.stdout)["result"] == "unchanged"
    assert fleet.st2("agent", "describe", "x", "--clear-name", "--clear-description").returncode == 0
    assert fleet.st2("agent", "address", "x", "--clear").returncode == 0
    assert path.read_text() == original
    too_long = fleet.st2("agent", "describe", "x", "--name", "n" * 161)
    assert too_long.returncode == 1 and "name-too-long" in too_long.stderr
    assert path.read_text() == original


@pytest.mark.process
def test_presentation_address_stream_and_resource_authoring_refuse_a_nix_owned_declaration_outright(fleet):
    directory = fleet.seat("x", '    meta { managed-by "nix"; }\n    argv "sleep" "600"')
    path = directory / "agent.kdl"
    owned = path.read_text()
    for arguments in (("agent", "describe", "x", "--name", "N"), ("agent", "address", "x", "a"),
                      ("agent", "stream", "add", "x", "ci"), ("agent", "stream", "rm", "x", "ci"),
                      ("agent", "resource", "add", "x", "spec", "--uri", "file:///spec.md"),
                      ("agent", "resource", "rm", "x", "spec")):
        refused = fleet.st2(*arguments)
        assert refused.returncode == 1, arguments
        assert "[nix-managed-declaration]" in refused.stderr and "no assertion admits this edit" in refused.stderr
        assert path.read_text() == owned
    assert "--managed-by" not in fleet.st2("agent", "describe", "--help").stdout
    # The same edits of a declaration carrying a label marker go through.
    labelled = fleet.seat("y", '    meta { managed-by "ansible"; }\n    argv "sleep" "600"')
    assert fleet.st2("agent", "describe", "y", "--name", "N").returncode == 0
    assert fleet.st2("agent", "stream", "add", "y", "ci").returncode == 0
    assert 'stream "ci" {}' in (labelled / "agent.kdl").read_text()


@pytest.mark.process
def test_stream_add_supports_external_command_and_argv_and_remove_is_idempotent(fleet):
    directory = fleet.seat("x", '    argv "sleep" "600"')
    path = directory / "agent.kdl"
    original = path.read_text()
    assert fleet.st2("agent", "stream", "add", "x", "webhook").returncode == 0
    assert fleet.st2("agent", "stream", "add", "x", "github-ci", "--command", "gh watch --repo st2").returncode == 0
    argv = run_st2("agent", "stream", "add", "--host", "h", "x", "tick", "--", "tick-source", "--daily", env=fleet.env)
    assert argv.returncode == 0, argv.stderr
    assert path.read_text() == original.replace(
        '    argv "sleep" "600"\n',
        '    argv "sleep" "600"\n    stream "webhook" {}\n    stream "github-ci" { command "gh watch --repo st2" }\n'
        '    stream "tick" { argv "tick-source" "--daily" }\n')
    same = fleet.st2("agent", "stream", "add", "x", "webhook", "--json")
    assert same.stdout == '{"result":"unchanged","identity":"h.x","stream":"webhook","present":true}\n'
    different = fleet.st2("agent", "stream", "add", "x", "webhook", "--command", "other")
    assert different.returncode == 1 and "[stream-exists]" in different.stderr
    for name in ("webhook", "github-ci", "tick"):
        removed = fleet.st2("agent", "stream", "rm", "x", name, "--json")
        assert json.loads(removed.stdout)["result"] == "changed"
        assert json.loads(fleet.st2("agent", "stream", "rm", "x", name, "--json").stdout)["result"] == "unchanged"
    assert path.read_text() == original


@pytest.mark.process
def test_stream_authoring_enforces_authority_and_canonical_validation(fleet):
    fleet.seat("root", '    argv "sleep" "600"')
    fleet.seat("child", '    supervisor "root"\n    argv "sleep" "600"\n    exec "job" { argv "true"; }')
    fleet.seat("sibling", '    supervisor "root"\n    argv "sleep" "600"')
    child = fleet.catalog / "agents" / "h" / "child" / "agent.kdl"
    before = child.read_text()
    env = dict(fleet.env)
    fleet.env["ST_AGENT"] = "h.sibling"
    refused = fleet.st2("agent", "stream", "add", "child", "events")
    assert refused.returncode == 1 and "[stream-not-authorized]" in refused.stderr
    fleet.env["ST_AGENT"] = "h.root"
    assert fleet.st2("agent", "stream", "add", "child", "events").returncode == 0, "a supervisor may author"
    fleet.env.clear()
    fleet.env.update(env)
    invalid = fleet.st2("agent", "stream", "add", "child", "Bad Name")
    assert invalid.returncode == 1 and "[invalid-stream]" in invalid.stderr
    empty = fleet.st2("agent", "stream", "add", "child", "empty", "--command", " ")
    assert empty.returncode == 1 and "[invalid-stream]" in empty.stderr
    collision = fleet.st2("agent", "stream", "add", "child", "job")
    assert collision.returncode == 1 and "duplicate-task" in collision.stderr
    assert child.read_text() == before.replace('    exec "job" { argv "true"; }\n',
                                               '    exec "job" { argv "true"; }\n    stream "events" {}\n')


@pytest.mark.process
def test_resource_add_and_rm_author_one_binding_through_the_gate(fleet):
    directory = fleet.seat("x", '    argv "sleep" "600"')
    path = directory / "agent.kdl"
    original = path.read_text()
    added = fleet.st2("agent", "resource", "add", "x", "spec", "--uri", "file:///spec.md", "--reason", "the spec",
                      "--json")
    assert added.stdout == '{"result":"changed","identity":"h.x","resource":"spec","present":true}\n'
    assert path.read_text() == original.replace('    argv "sleep" "600"\n', '    argv "sleep" "600"\n'
                                                '    resource "spec" uri="file:///spec.md" reason="the spec"\n')
    row = json.loads(fleet.st2("agents", "--json").stdout)[0]
    assert row["resources"] == [{"name": "spec", "uri": "file:///spec.md", "reason": "the spec"}]
    other = fleet.st2("agent", "resource", "add", "x", "spec", "--uri", "file:///other.md")
    assert other.returncode == 1 and "[resource-exists]" in other.stderr
    relative = fleet.st2("agent", "resource", "add", "x", "notes", "--uri", "notes.md")
    assert relative.returncode == 1 and "resource-invalid" in relative.stderr
    assert fleet.st2("agent", "resource", "rm", "x", "spec").returncode == 0
    assert json.loads(fleet.st2("agent", "resource", "rm", "x", "spec", "--json").stdout)["result"] == "unchanged"
    assert path.read_text() == original


@pytest.mark.parametrize("harness", available_harnesses())
def test_every_offered_harness_gets_a_starter_the_catalog_admits(tmp_path, harness):
    from st2.authoring import gate
    from st2.authoring.starter import new_seat
    from st2.catalog.location import CatalogLocation

    location = CatalogLocation(tmp_path / "c", "h")
    location.root.mkdir()
    created = new_seat(location, "seat", harness, None)
    assert created.published.status == "published"
    gate.admit(location, "h", "seat", created.published.path.read_text())    # raises on any error


@pytest.mark.process
def test_concurrent_stream_authors_are_serialized_and_lose_no_edit(fleet):
    import subprocess
    import sys

    from support import REPO

    directory = fleet.seat("x", '    argv "sleep" "600"')
    authors = [subprocess.Popen([sys.executable, "-m", "st2", "agent", "stream", "add", "--host", "h", "x", f"s{index}"],
                                cwd=REPO, env=fleet.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for index in range(8)]
    assert [author.wait(timeout=60) for author in authors] == [0] * 8, [author.stderr.read() for author in authors]
    text = (directory / "agent.kdl").read_text()
    assert sorted(line.strip() for line in text.splitlines() if line.strip().startswith("stream")) == \
        sorted(f'stream "s{index}" {{}}' for index in range(8))
    assert (fleet.catalog / ".st2" / "catalog-generation").read_text() == "8\n"
