"""check-gate-tamper: the good/bad fixture pair through --fixture, and the live mode over real
git repositories (a real index, real object-store reads)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kit_support import REPO, git, hermetic_environment, new_repository, run_st2

pytestmark = pytest.mark.process  # every case spawns git or the real st2 CLI

FIXTURES = Path(__file__).resolve().parent / "gate-tamper"
DECLARATION = REPO / "st2" / "kit" / "checks" / "check-gate-tamper.gate"
HELP_A = (
    "help: split the gate change into its own commit: a commit touching a gate file "
    "(DELEGATION_KIT_GATE_FILES plus every registered gate and the gate library) may touch only "
    "meta-layer paths (DELEGATION_KIT_META_PATHS, root *.md, st2-kit.lock)\n"
)
HELP_B = (
    "help: an exemption never excuses the change it lands with: fix the staged file to fit the gate, "
    "or land the exemption alone and have it reviewed\n"
)


def gate(args, sandbox, cwd=None, **extra):
    result = run_st2(["check", "gate-tamper", *args], hermetic_environment(sandbox, **extra), cwd=cwd)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


# --- the fixture pair ---------------------------------------------------------------------

@pytest.mark.process
def test_good_fixture_is_clean(sandbox) -> None:
    assert gate(["--fixture", str(FIXTURES / "good")], sandbox) == (
        0, "check-gate-tamper: clean (5 staged path(s), 1 registered gate file(s) covered)\n", "")


@pytest.mark.process
def test_bad_fixture_reaches_both_assertions(sandbox) -> None:
    status, out, err = gate(["--fixture", str(FIXTURES / "bad")], sandbox)
    assert (status, err) == (1, "")
    assert out == (
        "check-gate-tamper: A: src/app.py is product code staged with gate file(s) checks/check-gate-tamper.gate\n"
        "check-gate-tamper: B: added exemption src/app.py matches src/app.py, staged in the same commit\n"
        + HELP_A + HELP_B
    )


@pytest.mark.process
def test_the_own_declaration_is_covered_whatever_the_globs_say(sandbox, tmp_path) -> None:
    # A consumer value naming no glob that reaches checks/ cannot clear the registered gate.
    knobs = sandbox / "delegation-config.knobs"
    knobs.write_text("DELEGATION_KIT_GATE_FILES[] = nowhere/*.sh\n")
    status, out, _ = gate(["--fixture", str(FIXTURES / "bad")], sandbox)
    assert status == 1 and "A: src/app.py is product code staged with gate file(s) checks/check-gate-tamper.gate" in out
    # Unregister it and set the globs away: the same lists read clean on A (the union is the cover).
    unregistered = tmp_path / "unregistered"
    shutil.copytree(FIXTURES / "bad", unregistered)
    (unregistered / "checks" / "gates.list").write_text("")
    (unregistered / "added-exemptions").write_text("legacy-rule\n")
    assert gate(["--fixture", str(unregistered)], sandbox)[0:2] == (
        0, "check-gate-tamper: clean (3 staged path(s), 0 registered gate file(s) covered)\n")


@pytest.mark.process
def test_a_trailing_fixture_flag_without_a_directory_is_refused(sandbox) -> None:
    assert gate(["--fixture"], sandbox) == (
        2, "", "check-gate-tamper: --fixture needs a directory\nusage: st2 check gate-tamper [--fixture <dir>]\n")
    assert gate(["--bogus"], sandbox) == (
        2, "", "check-gate-tamper: unexpected argument: --bogus\nusage: st2 check gate-tamper [--fixture <dir>]\n")


@pytest.mark.process
def test_an_unreadable_registry_is_exit_2(sandbox, tmp_path) -> None:
    fixture = tmp_path / "fixture"
    shutil.copytree(FIXTURES / "good", fixture)
    (fixture / "checks" / "gates.list").write_text("check-gate-tamper tier precommit\n")
    status, out, err = gate(["--fixture", str(fixture)], sandbox)
    assert (status, out) == (2, "")
    assert err == f"check-gate-tamper: {fixture}/checks/gates.list:1:19: expected 'tier: <tier>' after the gate name\n"


# --- the live mode over real git repositories ----------------------------------------------

@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = new_repository(tmp_path / "repo")
    (repo / "checks").mkdir()
    (repo / "checks" / "gates.list").write_text("check-gate-tamper tier: precommit\n")
    shutil.copy(DECLARATION, repo / "checks" / "check-gate-tamper.gate")
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\n# exception-list: ( old/legacy.py )\nexit 0\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print(1)\n")
    (repo / "old").mkdir()
    (repo / "old" / "legacy.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


@pytest.mark.process
def test_live_clean_product_commit(repo, sandbox) -> None:
    (repo / "src" / "app.py").write_text("print(2)\n")
    git(repo, "add", "src/app.py")
    assert gate([], sandbox, cwd=repo) == (
        0, "check-gate-tamper: clean (1 staged path(s), 1 registered gate file(s) covered)\n", "")


@pytest.mark.process
def test_live_a_gate_edit_co_staged_with_product_code_is_refused(repo, sandbox) -> None:
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\n# exception-list: ( old/legacy.py )\nexit 1\n")
    (repo / "src" / "app.py").write_text("print(2)\n")
    (repo / "NOTES.md").write_text("why\n")
    git(repo, "add", "-A")
    status, out, _ = gate([], sandbox, cwd=repo)
    assert (status, out) == (1, "check-gate-tamper: A: src/app.py is product code staged with gate file(s) checks/check-lint.sh\n" + HELP_A)


@pytest.mark.process
def test_live_the_gates_own_declaration_reads_its_own_bytes(repo, sandbox) -> None:
    (sandbox / "delegation-config.knobs").write_text("DELEGATION_KIT_GATE_FILES[] = nowhere/*\n")
    with (repo / "checks" / "check-gate-tamper.gate").open("a") as handle:
        handle.write("# weakened\n")
    (repo / "src" / "app.py").write_text("print(2)\n")
    git(repo, "add", "-A")
    status, out, _ = gate([], sandbox, cwd=repo)
    assert status == 1
    assert out.startswith("check-gate-tamper: A: src/app.py is product code staged with gate file(s) checks/check-gate-tamper.gate\n")


@pytest.mark.process
def test_live_a_head_resident_exemption_is_not_added_even_when_a_costaged_file_matches(repo, sandbox) -> None:
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\n# exception-list: ( old/legacy.py )\nexit 0\n# tidy\n")
    (repo / "old" / "legacy.py").write_text("x = 2\n")
    git(repo, "add", "-A")
    status, out, _ = gate([], sandbox, cwd=repo, DELEGATION_KIT_KNOB_FILE=str(meta_old(sandbox)))
    assert (status, out) == (0, "check-gate-tamper: clean (2 staged path(s), 1 registered gate file(s) covered)\n")


def meta_old(sandbox: Path) -> Path:
    """A knob file counting old/ as meta-layer, so assertion A stays quiet and B is isolated."""
    path = sandbox / "meta-old.knobs"
    path.write_text("DELEGATION_KIT_META_PATHS[] = checks/\nDELEGATION_KIT_META_PATHS[] = old/\n")
    return path


@pytest.mark.process
def test_live_a_newly_appended_exemption_matching_a_staged_file_is_refused(repo, sandbox) -> None:
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\n# exception-list: ( old/legacy.py old/*.txt rule-7 )\nexit 0\n")
    (repo / "old" / "notes.txt").write_text("n\n")
    git(repo, "add", "-A")
    status, out, _ = gate([], sandbox, cwd=repo, DELEGATION_KIT_KNOB_FILE=str(meta_old(sandbox)))
    assert (status, out) == (1, "check-gate-tamper: B: added exemption old/*.txt matches old/notes.txt, staged in the same commit\n" + HELP_B)


@pytest.mark.process
def test_live_an_added_exemption_matching_nothing_staged_stays_silent(repo, sandbox) -> None:
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\n# exception-list: ( old/legacy.py old/*.txt )\nexit 0\n")
    git(repo, "add", "-A")
    assert gate([], sandbox, cwd=repo)[0:2] == (
        0, "check-gate-tamper: clean (1 staged path(s), 1 registered gate file(s) covered)\n")


@pytest.mark.process
def test_live_a_staged_deletion_of_a_gate_file_reads_as_an_empty_set(repo, sandbox) -> None:
    git(repo, "rm", "-q", "checks/check-lint.sh")
    assert gate([], sandbox, cwd=repo) == (
        0, "check-gate-tamper: clean (1 staged path(s), 1 registered gate file(s) covered)\n", "")


@pytest.mark.process
def test_live_outside_a_repository_is_exit_2(sandbox, tmp_path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    status, out, err = gate([], sandbox, cwd=outside)
    assert (status, out) == (2, "")
    assert err == f"check-gate-tamper: {outside} is not inside a git work tree (live mode reads git diff --cached)\n"


def test_st2s_own_registry_covers_its_own_declaration(sandbox) -> None:
    from st2.kit import gate_registry

    files = gate_registry.registered_gate_files(str(REPO), {})
    assert files == ["st2/kit/checks/check-agent-tier-explicit.gate", "st2/kit/checks/check-gate-tamper.gate", "st2/kit/gate_output.py"]


@pytest.mark.process
def test_the_pre_commit_snippet_runs_the_gate(repo, sandbox) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    shutil.copy(REPO / "hooks" / "pre-commit.gate-tamper", hook)
    (repo / "checks" / "check-lint.sh").write_text("#!/bin/sh\nexit 1\n")
    (repo / "src" / "app.py").write_text("print(3)\n")
    git(repo, "add", "-A")
    import os, sys

    environ = hermetic_environment(sandbox)
    bin_dir = sandbox / "bin"
    bin_dir.mkdir()
    (bin_dir / "st2").write_text(f"#!/bin/sh\nexec {sys.executable} -m st2 \"$@\"\n")
    (bin_dir / "st2").chmod(0o755)
    environ["PATH"] = f"{bin_dir}:{environ['PATH']}"
    environ["PYTHONPATH"] = str(REPO)
    result = subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "mixed"], env=environ, capture_output=True, text=True)
    assert result.returncode == 1
    assert "check-gate-tamper: A: src/app.py is product code staged with gate file(s) checks/check-lint.sh" in result.stdout + result.stderr
