"""`st2 kit init` into a real project repository: what it installs, that a second run is
idempotent, that a conflict writes nothing, and that the installed kit works there (the knob
file resolves, the registered tamper gate reds a mixed commit). Plus the templates' own
consistency: every rule a checklist cites is a lead-in of the protocol template, and the knob
file names every knob of the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit_support import REPO, git, hermetic_environment, new_repository, run_st2
from st2.kit import knobs

pytestmark = pytest.mark.process  # every case spawns git or the real st2 CLI
TEMPLATES = REPO / "st2" / "kit" / "templates"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = new_repository(tmp_path / "project")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    (repo / ".gitignore").write_text("__pycache__/")  # no final newline: the merge must add one
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def test_init_installs_the_kit_and_a_second_run_is_current(project, sandbox) -> None:
    environ = hermetic_environment(sandbox)
    result = run_st2(["kit", "init", str(project / "src")], environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().splitlines()[:9] == [
        "kit-init: installed .claude/delegation/agent-execution.md",
        "kit-init: installed .claude/delegation/dispatch-checklists.md",
        "kit-init: installed .claude/delegation/pre-commit",
        "kit-init: installed .claude/delegation/settings-snippet.json",
        "kit-init: installed checks/check-agent-tier-explicit.gate",
        "kit-init: installed checks/check-gate-tamper.gate",
        "kit-init: installed checks/delegation-config.knobs",
        "kit-init: merged 2 line(s) into checks/gates.list",
        "kit-init: merged 3 line(s) into .gitignore",
    ]
    assert (project / ".gitignore").read_text() == "__pycache__/\nchecks/delegation-config.local.knobs\n.tmp/\n.workflow/\n"
    assert (project / "checks" / "gates.list").read_text() == "check-gate-tamper tier: precommit\ncheck-agent-tier-explicit tier: precommit\n"
    assert (project / ".claude" / "delegation" / "agent-execution.md").read_bytes() == (TEMPLATES / "agent-execution.md").read_bytes()
    lock = (project / "st2-kit.lock").read_text().splitlines()
    assert [line.split("  ")[1] for line in lock] == sorted(line.split("  ")[1] for line in lock) and len(lock) == 7
    again = run_st2(["kit", "init", str(project)], environ)
    assert again.returncode == 0 and "installed" not in again.stdout.decode() and "merged" not in again.stdout.decode()


def test_a_conflict_writes_nothing_and_names_every_conflict(project, sandbox) -> None:
    (project / "checks").mkdir()
    (project / "checks" / "check-gate-tamper.gate").write_text("mine\n")
    (project / ".claude" / "delegation").mkdir(parents=True)
    (project / ".claude" / "delegation" / "agent-execution.md").write_text("mine\n")
    result = run_st2(["kit", "init", str(project)], hermetic_environment(sandbox))
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == (
        f"kit-init: {project}/.claude/delegation/agent-execution.md: exists and differs from the kit's copy; move it aside or merge it by hand\n"
        f"kit-init: {project}/checks/check-gate-tamper.gate: exists and differs from the kit's copy; move it aside or merge it by hand\n"
        "kit-init: nothing written (2 conflict(s))\n")
    assert not (project / "st2-kit.lock").exists() and not (project / "checks" / "gates.list").exists()


@pytest.mark.parametrize("name", [".gitignore", ".claude/delegation/pre-commit", "checks/gates.list"])
def test_a_fifo_where_the_kit_reads_is_refused_in_one_line_and_nothing_is_written(project, sandbox, name) -> None:
    import os

    (project / name).unlink(missing_ok=True)
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(project / name)
    result = run_st2(["kit", "init", str(project)], hermetic_environment(sandbox), timeout=20)
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == (f"kit-init: {project / name}: is a FIFO, not a regular file; move it aside\n"
                                      "kit-init: nothing written (1 conflict(s))\n")
    assert not (project / "st2-kit.lock").exists() and not (project / ".claude" / "delegation" / "agent-execution.md").exists()


def test_the_installed_kit_works_in_the_project(project, sandbox) -> None:
    run_st2(["kit", "init", str(project)], hermetic_environment(sandbox))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "kit")  # the install itself is a meta-layer-only commit
    environ = hermetic_environment(sandbox)
    del environ["DELEGATION_KIT_KNOB_FILE"]               # the resolver finds what init installed
    values = run_st2(["emit", "knob-values", "DELEGATION_KIT_PAUSE_PCT"], environ, cwd=project / "src")
    assert (values.returncode, values.stdout) == (0, b"80\n")  # the comment-only file resolves to the defaults
    with (project / "checks" / "delegation-config.knobs").open("a") as handle:
        handle.write("DELEGATION_KIT_PAUSE_PCT = 70\nDELEGATION_KIT_READONLY_TYPES[] = reviewer\n")
    for name, value in (("DELEGATION_KIT_PAUSE_PCT", b"70\n"), ("DELEGATION_KIT_READONLY_TYPES", b"reviewer\n")):
        read = run_st2(["emit", "knob-values", name], environ, cwd=project / "src")
        assert (read.returncode, read.stdout, read.stderr) == (0, value, b"")
    (project / "checks" / "delegation-config.knobs").write_text((TEMPLATES / "delegation-config.knobs").read_text())
    # the violation smoke: a registered gate edited beside product code reds assertion A
    with (project / "checks" / "check-gate-tamper.gate").open("a") as handle:
        handle.write("# exception-list: ( src/app.py )\n")
    (project / "src" / "app.py").write_text("print(2)\n")
    git(project, "add", "-A")
    gate = run_st2(["check", "gate-tamper"], environ, cwd=project)
    assert gate.returncode == 1
    assert gate.stdout.decode().splitlines()[:2] == [
        "check-gate-tamper: A: src/app.py is product code staged with gate file(s) checks/check-gate-tamper.gate",
        "check-gate-tamper: B: added exemption src/app.py matches src/app.py, staged in the same commit",
    ]
    snippet = (project / ".claude" / "delegation" / "settings-snippet.json").read_text()
    assert '"command": "st2 hook budget-guard"' in snippet and "DELEGATION_KIT_KNOB_FILE" not in snippet


def test_every_rule_a_template_cites_is_a_lead_in_of_the_protocol() -> None:
    protocol = (TEMPLATES / "agent-execution.md").read_text()
    lead_ins = {" ".join(name.split()) for name in re.findall(r"^- \*\*(.+?)\.\*\*", protocol, re.M | re.S)}
    assert len(lead_ins) >= 15
    checklists = " ".join((TEMPLATES / "dispatch-checklists.md").read_text().split())
    cited = set(re.findall(r"the template's \*\*(.+?)\*\* rule", checklists))
    assert cited and cited <= lead_ins, cited - lead_ins


def test_the_knob_template_names_every_knob_commented() -> None:
    text = (TEMPLATES / "delegation-config.knobs").read_text()
    assert all(line.startswith("#") or not line for line in text.splitlines())
    named = {re.match(r"# (DELEGATION_KIT_\w+)", line).group(1) for line in text.splitlines() if line.startswith("# DELEGATION_KIT_")}
    assert named == set(knobs.TABLE)
