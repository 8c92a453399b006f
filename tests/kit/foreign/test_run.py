"""The foreign run's one-shot rows against a throwaway source repository and stand-in adapter
scripts: OK in both modes, REFUSED (committed, audit wrote) keeping the clone, FAILED (unknown
adapter, unreadable prompt, non-zero exit, timeout), the argv and the spawn's shape."""

from __future__ import annotations

import pytest

import subprocess

from foreign_support import git

pytestmark = pytest.mark.process  # every case spawns git or the real st2 CLI


def line(foreign, verdict: str, *, adapter="scout", mode="audit", budget="OFF", exit="0", report=True, patch="none", key="audit-7", cls="-") -> str:
    report_field = f"{foreign.run_dir(key)}/report.txt" if report else "none"
    return (f"foreign-run: adapter={adapter} mode={mode} class={cls} key={key} budget={budget} exit={exit} "
            f"report={report_field} patch={patch} -> {verdict}\n")


def test_ok_audit_returns_the_output_as_the_report_and_removes_the_clone(foreign) -> None:
    foreign.adapter("scout", foreign.script("scout", 'echo "read: $(cat)"; echo "argv: $*"; git remote | wc -l'), "--prompt=@PROMPT_FILE@")
    assert foreign.call("run", "scout", str(foreign.prompt)) == (0, line(foreign, "OK"), "")
    report = (foreign.run_dir() / "report.txt").read_text()
    assert report == f"read: Read app.py and report.\nargv: --prompt={foreign.prompt}\n0\n"
    assert not (foreign.run_dir() / "tree").exists()


def test_ok_sweep_yields_a_patch_the_source_repository_accepts(foreign) -> None:
    foreign.adapter("fixer", foreign.script("fixer", "echo 'print(2)' > app.py; printf 'new\\n' > added.txt; printf '\\x00\\x01' > blob.bin"))
    status, out, _ = foreign.call("run", "fixer", str(foreign.prompt), "--mode", "sweep")
    patch = foreign.run_dir() / "change.patch"
    assert (status, out) == (0, line(foreign, "OK", adapter="fixer", mode="sweep", patch=str(patch)))
    subprocess.run(["git", "-C", str(foreign.repo), "apply", "--check", str(patch)], check=True)
    assert "added.txt" in patch.read_text(errors="replace") and "GIT binary patch" in patch.read_text(errors="replace")


def test_an_empty_sweep_writes_no_patch(foreign) -> None:
    foreign.adapter("idle", "true")
    assert foreign.call("run", "idle", str(foreign.prompt), "--mode", "sweep")[1] == line(foreign, "OK", adapter="idle", mode="sweep")
    assert not (foreign.run_dir() / "change.patch").exists()


def test_a_committing_adapter_is_refused_in_both_modes_and_its_clone_kept(foreign) -> None:
    foreign.adapter("committer", foreign.script("committer", "git -c user.email=x@y -c user.name=x commit -q --allow-empty -m foreign"))
    for mode, key in (("audit", "a1"), ("sweep", "s1")):
        status, out, _ = foreign.call("run", "committer", str(foreign.prompt), "--mode", mode, "--key", key)
        tree = foreign.run_dir(key) / "tree"
        assert (status, out) == (1, line(foreign, f"REFUSED (committed) — clone kept at {tree}", adapter="committer", mode=mode, key=key))
        assert tree.is_dir()
    # the foreign commit is unreachable from this repository's refs
    assert git(foreign.repo, "rev-parse", "HEAD").strip() == foreign.head
    # a kept clone fails the next run under its key, before the budget read
    assert foreign.call("run", "committer", str(foreign.prompt), "--key", "a1") == (2, line(
        foreign, f"FAILED (key a1 holds a kept clone at {foreign.run_dir('a1') / 'tree'}: inspect and remove it)",
        adapter="committer", budget="-", exit="-", report=False, key="a1"), "")


def test_an_audit_that_wrote_is_refused(foreign) -> None:
    foreign.adapter("writer", foreign.script("writer", "echo oops > notes.txt"))
    tree = foreign.run_dir() / "tree"
    assert foreign.call("run", "writer", str(foreign.prompt))[0:2] == (1, line(foreign, f"REFUSED (audit wrote) — clone kept at {tree}", adapter="writer"))


def test_failed_rows(foreign) -> None:
    foreign.adapter("broken", foreign.script("broken", "echo partial; echo why >&2; exit 3"))
    foreign.adapter("slow", "bash", "-c", "exec sleep 30")
    foreign.knob("DELEGATION_KIT_FOREIGN_TIMEOUT = 1")
    assert foreign.call("run", "nope", str(foreign.prompt)) == (2, line(
        foreign, "FAILED (unknown adapter nope)", adapter="nope", budget="-", exit="-", report=False), "")
    assert foreign.call("run", "broken", str(foreign.root / "missing.md")) == (2, line(
        foreign, f"FAILED (cannot read the prompt file {foreign.root / 'missing.md'})", adapter="broken", budget="-", exit="-", report=False, key="missing"), "")
    assert foreign.call("run", "broken", str(foreign.prompt)) == (2, line(foreign, "FAILED (adapter exited 3)", adapter="broken", exit="3"), "")
    assert (foreign.run_dir() / "report.txt").read_text() == "partial\n"
    assert (foreign.run_dir() / "stderr.txt").read_text() == "why\n"
    assert not (foreign.run_dir() / "tree").exists()
    assert foreign.call("run", "slow", str(foreign.prompt)) == (2, line(foreign, "FAILED (timeout)", adapter="slow", exit="timeout"), "")


def test_a_spawn_that_cannot_start_fails(foreign) -> None:
    foreign.adapter("ghost", "/nonexistent/vendor-cli")
    assert foreign.call("run", "ghost", str(foreign.prompt)) == (2, line(
        foreign, "FAILED (spawn: No such file or directory)", adapter="ghost", exit="-", report=False), "")


def test_the_spawn_runs_in_the_clone_with_no_git_location_variables(foreign) -> None:
    foreign.adapter("probe", foreign.script("probe", 'pwd; git rev-parse HEAD; echo "dir=${GIT_DIR-unset}"; git status --porcelain | wc -l'))
    foreign.environ["GIT_DIR"] = str(foreign.repo / ".git")
    assert foreign.call("run", "probe", str(foreign.prompt))[0] == 0
    assert (foreign.run_dir() / "report.txt").read_text() == f"{foreign.run_dir() / 'tree'}\n{foreign.head}\ndir=unset\n0\n"


def test_shape_refusals(foreign) -> None:
    usage = ("usage: st2 foreign run <adapter> <prompt-file> [--mode audit|sweep] [--class <class>] [--key <key>]\n"
             "       st2 foreign run <adapter> --budget\n")
    assert foreign.call("run", "scout") == (2, "", "foreign-run: takes two operands (<adapter> <prompt-file>), not 1\n" + usage)
    assert foreign.call("run", "scout", "p.md", "--mode", "write") == (2, "", "foreign-run: --mode write: the mode is audit or sweep\n" + usage)
    assert foreign.call("run", "scout", "p.md", "--key", "a/b") == (2, "", "foreign-run: --key 'a/b' is not one path component\n" + usage)
    assert foreign.call("run", "scout", "p.md", "--force") == (2, "", "foreign-run: unrecognized option: --force\n" + usage)
    assert foreign.call("run", "scout", "--budget", "--mode", "sweep") == (2, "", "foreign-run: --budget takes no --mode\n" + usage)
    foreign.adapter("scout", "true")
    dashed = foreign.root / "-odd.md"
    dashed.write_text("x\n")
    assert foreign.call("run", "--", "scout", str(dashed))[0] == 0


def test_the_cli_runs_the_same_arm(foreign) -> None:
    foreign.adapter("scout", "cat")
    assert foreign.cli("run", "scout", str(foreign.prompt)) == (0, line(foreign, "OK"), "")
