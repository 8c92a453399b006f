"""The worktree rule over real git repositories: from a linked worktree the hook reads (and
logs to) the main checkout's scratch dir and log; an absolute scratch dir is read as given."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from delegation_support import PAYLOAD, PAYLOAD_KEYS, assert_log_line, log_lines, run_hook
from st2.kit.delegation import checkout

GIT = ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repositories(tmp_path: Path) -> tuple[Path, Path]:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "commit", "-q", "--allow-empty", "-m", "root")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    return main, linked


@pytest.mark.process
def test_a_linked_worktree_names_its_main_checkout(repositories) -> None:
    main, linked = repositories
    (linked / "sub" / "dir").mkdir(parents=True)
    assert checkout.main_checkout_of_linked_worktree(str(linked / "sub" / "dir")) == str(main)
    assert checkout.resolve(".tmp", str(linked)) == str(main / ".tmp")


@pytest.mark.process
def test_a_main_checkout_or_no_repository_resolves_as_given(repositories, tmp_path: Path) -> None:
    main, _ = repositories
    assert checkout.main_checkout_of_linked_worktree(str(main)) is None
    (tmp_path / "plain").mkdir()
    assert checkout.main_checkout_of_linked_worktree(str(tmp_path / "plain")) is None
    assert checkout.resolve(".tmp", str(main)) == ".tmp"
    assert checkout.resolve("/abs/scratch", str(tmp_path)) == "/abs/scratch"


@pytest.mark.process
def test_a_linked_worktree_firing_reads_the_main_checkouts_records(repositories, children) -> None:
    main, linked = repositories
    producer = children.sleeper()
    (main / ".tmp").mkdir()
    (main / ".tmp" / "dispatcher-build.run").write_text(f"pid={producer.pid} run=dispatcher-build\n")
    result = run_hook("subagent-stop-liveness", linked, PAYLOAD)
    (line,) = log_lines(main / ".workflow" / "subagent-stop-liveness.log")
    assert result.returncode == 2, line
    assert_log_line(line, f"  event=SubagentStop  session=s-1  live=yes  verdict=red  spawn=-  records=1"
                          f"  runs=dispatcher-build  decision=refuse  keys={PAYLOAD_KEYS}")
    assert f"a launch record under {main / '.tmp'} names a live producer" in result.stderr
    assert not (linked / ".workflow").exists()


@pytest.mark.process
def test_a_linked_worktree_firing_does_not_read_its_own_scratch_dir(repositories, children) -> None:
    main, linked = repositories
    producer = children.sleeper()
    (linked / ".tmp").mkdir()
    (linked / ".tmp" / "stray.run").write_text(f"pid={producer.pid} run=stray\n")
    result = run_hook("subagent-stop-liveness", linked, PAYLOAD)
    (line,) = log_lines(main / ".workflow" / "subagent-stop-liveness.log")
    assert result.returncode == 0, line
    assert_log_line(line, f"  event=SubagentStop  session=s-1  live=no  verdict=green  spawn=-  records=0"
                          f"  runs=-  decision=allow  keys={PAYLOAD_KEYS}")


@pytest.mark.process
def test_an_absolute_scratch_dir_is_read_as_given_from_a_worktree(repositories, children, tmp_path: Path) -> None:
    main, linked = repositories
    producer = children.sleeper()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "job.run").write_text(f"pid={producer.pid} run=job\n")
    result = run_hook("subagent-stop-liveness", linked, PAYLOAD, GATE_SDK_TMP_DIR=str(elsewhere))
    (line,) = log_lines(main / ".workflow" / "subagent-stop-liveness.log")
    assert result.returncode == 2, line
    assert "runs=job  decision=refuse" in line
