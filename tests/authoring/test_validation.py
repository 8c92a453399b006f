"""`st2 validate`: one diagnostic per problem with its exact position, and the exit status."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from st2.authoring.validation import validate_catalog
from support import run_st2


@pytest.fixture
def tmp_path():
    """A short temp dir: the socket-admission checks below measure paths against the 104-byte
    sun_path bound, and pytest's own tmp_path grows by ``popen-gwN/`` under xdist."""
    directory = Path(tempfile.mkdtemp(prefix="st2v-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)

MALFORMED = {
    "broken": 'agent "broken" {\n    name "Broken\n    argv "true"\n}\n',
    "typo": 'agent "typo" {\n    argv "true"\n    desired-stat "suspended"\n}\n',
    "both": 'agent "both" {\n    argv "claude"\n    command "claude --resume"\n}\n',
    "wordy": 'agent "wordy" {\n    name "' + "n" * 161 + '"\n    argv "true"\n}\n',
    "fine": 'agent "fine" {\n    name "Fine"\n    argv "true"\n}\n',
}

EXPECTED_JSON = (
    '[{"schema":"st2.agent-spec-diagnostic.v1","code":"argv-and-command","severity":"error","layer":"core",'
    '"source":"agents/h/both/agent.kdl","span":{"offset":37,"length":7,"line":3,"column":5},'
    '"fieldPath":["agent","both","command"],'
    '"message":"agent \\"both\\" declares both `argv` and `command`; choose one launch form",'
    '"help":"`argv` runs the program directly; `command` runs one line under `sh -c`"},'
    '{"schema":"st2.agent-spec-diagnostic.v1","code":"kdl-syntax","severity":"error","layer":"syntax",'
    '"source":"agents/h/broken/agent.kdl","span":{"offset":26,"length":1,"line":2,"column":10},"fieldPath":null,'
    '"message":"unterminated string (a single-line string cannot hold a newline; use \\"\\"\\" for multi-line)",'
    '"help":null},'
    '{"schema":"st2.agent-spec-diagnostic.v1","code":"unknown-node","severity":"error","layer":"declaration",'
    '"source":"agents/h/typo/agent.kdl","span":{"offset":35,"length":12,"line":3,"column":5},'
    '"fieldPath":["agent","typo","desired-stat"],"message":"unknown node `desired-stat` in agent \\"typo\\"",'
    '"help":"did you mean `desired-state`?"},'
    '{"schema":"st2.agent-spec-diagnostic.v1","code":"name-too-long","severity":"error","layer":"core",'
    '"source":"agents/h/wordy/agent.kdl","span":{"offset":25,"length":163,"line":2,"column":10},'
    '"fieldPath":["agent","wordy","name"],"message":"`name` is 161 characters; the limit is 160","help":null}]\n'
)

EXPECTED_HUMAN = """\
agents/h/both/agent.kdl:3:5: error[argv-and-command]: agent "both" declares both `argv` and `command`; choose one launch form
  help: `argv` runs the program directly; `command` runs one line under `sh -c`
agents/h/broken/agent.kdl:2:10: error[kdl-syntax]: unterminated string (a single-line string cannot hold a newline; use \"\"\" for multi-line)
agents/h/typo/agent.kdl:3:5: error[unknown-node]: unknown node `desired-stat` in agent "typo"
  help: did you mean `desired-state`?
agents/h/wordy/agent.kdl:2:10: error[name-too-long]: `name` is 161 characters; the limit is 160
"""


def write_seats(catalog: Path, seats: dict[str, str], host: str = "h") -> None:
    for identity, text in seats.items():
        directory = catalog / "agents" / host / identity
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.kdl").write_text(text)


@pytest.mark.process
def test_validate_json_reports_each_malformed_file_at_its_exact_position(catalog: Path) -> None:
    write_seats(catalog, MALFORMED)
    result = run_st2("validate", "--json", "--host", "h", catalog=catalog)
    assert result.stdout == EXPECTED_JSON
    assert result.returncode == 1


@pytest.mark.process
def test_validate_human_form_is_file_line_column_severity_code_message(catalog: Path) -> None:
    write_seats(catalog, MALFORMED)
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert result.stdout == EXPECTED_HUMAN
    assert result.stderr == "4 errors, 0 warnings\n"
    assert result.returncode == 1


@pytest.mark.process
def test_a_clean_catalog_validates_with_exit_status_zero(catalog: Path) -> None:
    write_seats(catalog, {"fine": MALFORMED["fine"]})
    result = run_st2("validate", "--json", "--host", "h", catalog=catalog)
    assert (result.stdout, result.returncode) == ("[]\n", 0)
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert (result.stdout, result.stderr, result.returncode) == ("", "0 errors, 0 warnings\n", 0)


@pytest.mark.process
def test_strict_turns_a_warning_into_a_failing_error(catalog: Path) -> None:
    write_seats(catalog, {"worker": 'agent "worker" {\n    supervisor "nobody"\n    argv "true"\n}\n'})
    relaxed = run_st2("validate", "--json", "--host", "h", catalog=catalog)
    strict = run_st2("validate", "--json", "--strict", "--host", "h", catalog=catalog)
    expected = (
        '[{"schema":"st2.agent-spec-diagnostic.v1","code":"dangling-supervisor","severity":"%s","layer":"catalog",'
        '"source":"agents/h/worker/agent.kdl","span":{"offset":21,"length":19,"line":2,"column":5},'
        '"fieldPath":["agent","worker","supervisor"],"message":"supervisor \\"nobody\\" is not a seat in this catalog",'
        '"help":"crash-loop notices for this seat will reach no one"}]\n'
    )
    assert (relaxed.stdout, relaxed.returncode) == (expected % "warning", 0)
    assert (strict.stdout, strict.returncode) == (expected % "error", 1)


@pytest.mark.process
def test_layout_errors_fail_validation(catalog: Path) -> None:
    write_seats(catalog, {"fine": MALFORMED["fine"]})
    (catalog / "agents" / "h" / "stray.txt").write_text("x")
    result = run_st2("validate", "--host", "h", catalog=catalog)
    assert result.stdout == "agents/h/stray.txt: error[catalog-entry-unexpected]: agents/h/stray.txt is not an identity directory\n"
    assert result.returncode == 1


def test_a_supervisor_naming_a_seat_by_bare_or_qualified_identity_is_not_dangling(catalog: Path, tmp_path: Path) -> None:
    write_seats(catalog, {
        "lead": 'agent "lead" { argv "true" }\n',
        "a": 'agent "a" { supervisor "lead"; argv "true" }\n',
        "b": 'agent "b" { supervisor "h.lead"; argv "true" }\n',
    })
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "state") == []


def socket_codes(catalog: Path, host: str, state_dir: Path) -> list[tuple[str, str]]:
    return [(diagnostic.code, diagnostic.source) for diagnostic in validate_catalog(catalog, host, state_dir=state_dir)]


def long_state_dir(tmp_path: Path, total: int) -> Path:
    """A state directory whose path makes ``<state>/scopes/<12>/h/s/h.<identity>`` long."""
    base = tmp_path / "s"
    padding = max(1, total - len(str(base)) - 1)
    return base / ("x" * padding)


def test_an_unbindable_session_socket_path_is_rejected_at_admission(catalog: Path, tmp_path: Path) -> None:
    state = long_state_dir(tmp_path, 60)
    identity = "a" * 30
    write_seats(catalog, {identity: f'agent "{identity}" {{ argv "true" }}\n'})
    diagnostics = validate_catalog(catalog, "h", state_dir=state)
    assert [(d.code, d.source) for d in diagnostics] == [("socket-path-too-long", f"agents/h/{identity}/agent.kdl")]
    socket = state / "scopes"
    assert str(socket) in diagnostics[0].message
    assert "exceeds the portable 104-byte sun_path bound by" in diagnostics[0].message


def test_a_short_session_socket_path_is_admitted(catalog: Path, tmp_path: Path) -> None:
    state = long_state_dir(tmp_path, 30)
    write_seats(catalog, {"a": 'agent "a" { argv "true" }\n'})
    assert socket_codes(catalog, "h", state) == []


def test_another_hosts_long_identity_is_not_judged_against_this_hosts_root(catalog: Path, tmp_path: Path) -> None:
    state = long_state_dir(tmp_path, 60)
    identity = "a" * 30
    write_seats(catalog, {identity: f'agent "{identity}" {{ argv "true" }}\n'}, host="other")
    assert socket_codes(catalog, "h", state) == []


def test_a_long_exec_task_id_is_not_a_socket_path_issue(catalog: Path, tmp_path: Path) -> None:
    state = long_state_dir(tmp_path, 60)
    write_seats(catalog, {"a": 'agent "a" {\n    exec "' + "w" * 40 + '" { argv "true" }\n}\n'})
    assert socket_codes(catalog, "h", state) == []


def test_templates_within_bounds_are_clean(catalog: Path, tmp_path: Path) -> None:
    (catalog / "_templates" / "claude").mkdir(parents=True)
    (catalog / "_templates" / "claude" / "persona.md").write_text("hello\n")
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "state") == []


def test_templates_reject_symlinks_reserved_names_and_depth(catalog: Path, tmp_path: Path) -> None:
    templates = catalog / "_templates"
    templates.mkdir()
    (templates / "real.md").write_text("x")
    os.symlink(templates / "real.md", templates / "link.md")
    (templates / "status").write_text("x")
    deep = templates.joinpath(*[f"d{level}" for level in range(9)])
    deep.mkdir(parents=True)
    (deep / "too-deep.md").write_text("x")
    found = [(d.code, d.source) for d in validate_catalog(catalog, "h", state_dir=tmp_path / "state")]
    assert found == [
        ("templates-invalid", "_templates/d0/d1/d2/d3/d4/d5/d6/d7/d8"),
        ("templates-invalid", "_templates/link.md"),
        ("templates-invalid", "_templates/status"),
    ]


def test_catalog_declaration_problems_are_reported(catalog: Path, tmp_path: Path) -> None:
    (catalog / "catalog.kdl").write_text('catalog {\n    pty_root "/run/pty"\n}\n')
    found = [(d.code, d.source, d.span.line, d.span.column) for d in validate_catalog(catalog, "h", state_dir=tmp_path / "s")]
    assert found == [("unknown-node", "catalog.kdl", 2, 5)]


def test_principal_problems_are_reported(catalog: Path, tmp_path: Path) -> None:
    directory = catalog / "principals" / "h" / "bridge"
    directory.mkdir(parents=True)
    (directory / "principal.kdl").write_text('principal "bridge" {\n    descripton "x"\n}\n')
    found = [(d.code, d.source, d.span.line) for d in validate_catalog(catalog, "h", state_dir=tmp_path / "s")]
    assert found == [("unknown-node", "principals/h/bridge/principal.kdl", 2)]
    (directory / "principal.kdl").write_text('principal "bridge" {\n    description "Posts CI results"\n}\n')
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "s") == []


def test_a_principal_may_name_its_host_but_only_its_own(catalog: Path, tmp_path: Path) -> None:
    directory = catalog / "principals" / "h" / "bridge"
    directory.mkdir(parents=True)
    (directory / "principal.kdl").write_text('principal "bridge" host="h"\n')
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "s") == []
    (directory / "principal.kdl").write_text('principal "bridge" host="elsewhere"\n')
    found = [(d.code, d.span.line, d.span.column) for d in validate_catalog(catalog, "h", state_dir=tmp_path / "s")]
    assert found == [("host-mismatch", 1, 20)]


@pytest.mark.process
def test_a_missing_catalog_does_not_validate_clean(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-catalog"
    result = run_st2("validate", catalog=missing)
    assert result.stdout == f"<catalog>: error[catalog-unreadable]: there is no catalog directory at {missing}\n"
    assert result.returncode == 1


def test_a_driver_block_its_driver_cannot_expand_is_reported_at_the_block(catalog: Path, tmp_path: Path) -> None:
    write_seats(catalog, {"c": 'agent "c" {\n    claude { colour "blue" }\n}\n'})
    diagnostics = validate_catalog(catalog, "h", state_dir=tmp_path / "s")
    assert [(d.code, d.source, d.span.line, d.span.column) for d in diagnostics] == [
        ("driver-block-invalid", "agents/h/c/agent.kdl", 2, 5)]
    assert "unknown field `colour` in `claude`" in diagnostics[0].message


def test_a_driver_block_for_a_harness_without_a_driver_is_an_error_naming_it(catalog: Path, tmp_path: Path,
                                                                             monkeypatch) -> None:
    """Until a harness's driver lands (a row of st2.base.harnesses.DRIVERS) its typed block would be
    silently ignored at launch; validate refuses it at the block, naming the harness. Every
    harness the declaration model knows has landed now, so a registry without opencode's
    expansion stands in for one that has not."""
    import st2.drivers
    from st2.declarations.model import DRIVER_HARNESSES

    assert [harness for harness in DRIVER_HARNESSES if st2.drivers.expansion(harness) is None] == []
    landed = st2.drivers.expansion
    monkeypatch.setattr(st2.drivers, "expansion", lambda harness: None if harness == "opencode" else landed(harness))
    write_seats(catalog, {"o": 'agent "o" {\n    argv "opencode"\n    opencode { }\n}\n'})
    diagnostics = validate_catalog(catalog, "h", state_dir=tmp_path / "s")
    assert [(d.code, d.source, d.span.line, d.span.column) for d in diagnostics] == [
        ("driver-block-invalid", "agents/h/o/agent.kdl", 3, 5)]
    assert diagnostics[0].message == "st2 has no opencode driver yet: the `opencode { … }` block cannot be expanded"


def test_a_driver_block_that_expands_is_clean(catalog: Path, tmp_path: Path) -> None:
    write_seats(catalog, {"c": 'agent "c" {\n    claude { }\n}\n'})
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "s") == []


def test_a_missing_copy_source_is_reported_and_a_present_one_is_not(catalog: Path, tmp_path: Path) -> None:
    write_seats(catalog, {"c": 'agent "c" {\n    argv "true"\n    render { copy "persona.md" ".st2/PERSONA.md" }\n}\n'})
    diagnostics = validate_catalog(catalog, "h", state_dir=tmp_path / "s")
    assert [(d.code, d.span.line, d.span.column) for d in diagnostics] == [("render-invalid", 3, 5)]
    (catalog / "agents" / "h" / "c" / "persona.md").write_text("# persona\n")
    assert validate_catalog(catalog, "h", state_dir=tmp_path / "s") == []


@pytest.mark.parametrize("operation", [
    'ensure-line "/etc/hosts" "x"',
    'file "../outside.md" "x"',
    'git-exclude ".st2/" "../x"',
])
def test_a_render_target_outside_the_workspace_is_reported(catalog: Path, tmp_path: Path, operation: str) -> None:
    write_seats(catalog, {"c": f'agent "c" {{\n    argv "true"\n    render {{ {operation} }}\n}}\n'})
    diagnostics = validate_catalog(catalog, "h", state_dir=tmp_path / "s")
    assert [(d.code, d.span.line, d.span.column) for d in diagnostics] == [("render-invalid", 3, 5)]
    assert "must be a relative path inside the workspace" in diagnostics[0].message


def declare_pty_root(catalog: Path, value: str) -> None:
    (catalog / "catalog.kdl").write_text(f'catalog {{\n    pty-root "{value}"\n}}\n')


def test_the_socket_bound_is_judged_against_the_declared_pty_root(catalog: Path, tmp_path: Path) -> None:
    # A short state directory, but a pty root long enough that h.a's socket cannot be bound:
    # the bound follows the root the sockets really live under.
    state = long_state_dir(tmp_path, 20)
    root = tmp_path / ("r" * 80)
    declare_pty_root(catalog, str(root))
    write_seats(catalog, {"a": 'agent "a" { argv "true" }\n', "b": 'agent "b" {\n    exec "w" { argv "true" }\n}\n'})
    write_seats(catalog, {"c": 'agent "c" { argv "true" }\n'}, host="other")
    diagnostics = validate_catalog(catalog, "h", state_dir=state)
    assert [(d.code, d.source) for d in diagnostics] == [("socket-path-too-long", "agents/h/a/agent.kdl")]
    from st2.runtime.scope import SUN_PATH_BYTES, catalog_digest

    path = root / catalog_digest(catalog) / "h.a"
    overage = len(os.fsencode(str(path))) + 1 - SUN_PATH_BYTES
    assert f"session socket path {path} is" in diagnostics[0].message
    assert f"by {overage} bytes" in diagnostics[0].message and "shorten the catalog's pty-root" in diagnostics[0].message
    # The twin: a short declared root admits the same seat even under a long state directory.
    declare_pty_root(catalog, "pty")
    assert socket_codes(catalog, "h", long_state_dir(tmp_path, 100)) == []
