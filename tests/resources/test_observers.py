"""The built-in observations against real files, a real git repository and real commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from st2.resources import observers
from st2.resources.observers import ObservationFailed


def git(directory: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-C", str(directory), *arguments], check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "st2", "GIT_AUTHOR_EMAIL": "st2@example.invalid",
                               "GIT_COMMITTER_NAME": "st2", "GIT_COMMITTER_EMAIL": "st2@example.invalid"}).stdout


def test_a_file_is_observed_with_its_content_and_digest(tmp_path: Path) -> None:
    document = tmp_path / "now.md"
    assert observers.observe_file({"path": str(document)}) == {
        "exists": False, "size": None, "contentSha256": None, "content": None}
    document.write_text("working on issue 34\n")
    facts = observers.observe_file({"path": str(document)})
    assert facts["content"] == "working on issue 34\n" and facts["size"] == 20
    assert facts["contentSha256"] == __import__("hashlib").sha256(b"working on issue 34\n").hexdigest()
    document.write_bytes(b"x" * (observers.CONTENT_LIMIT + 1))
    with pytest.raises(ObservationFailed, match="larger than the bound"):
        observers.observe_file({"path": str(document)})
    document.unlink()
    os.mkfifo(document)
    with pytest.raises(ObservationFailed, match="not a regular file"):
        observers.observe_file({"path": str(document)})


@pytest.mark.process
def test_a_repository_is_observed_head_dirty_and_ahead_behind_its_upstream(tmp_path: Path) -> None:
    upstream, clone = tmp_path / "upstream", tmp_path / "clone"
    git(tmp_path, "init", "-q", "-b", "main", str(upstream))
    git(upstream, "commit", "-q", "--allow-empty", "-m", "one")
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    facts = observers.observe_git({"path": str(clone)})
    head = git(clone, "rev-parse", "HEAD").strip()
    assert facts == {"branch": "main", "head": head, "detached": False, "dirty": False, "upstream": "origin/main",
                     "ahead": 0, "behind": 0}
    git(clone, "commit", "-q", "--allow-empty", "-m", "two")
    git(upstream, "commit", "-q", "--allow-empty", "-m", "three")
    git(clone, "fetch", "-q")
    (clone / "scratch").write_text("x")
    facts = observers.observe_git({"path": str(clone)})
    assert (facts["ahead"], facts["behind"], facts["dirty"], facts["head"]) == (
        1, 1, True, git(clone, "rev-parse", "HEAD").strip())
    with pytest.raises(ObservationFailed, match="not a git repository"):
        observers.observe_git({"path": str(tmp_path)})


@pytest.mark.process
def test_a_command_is_bounded_in_output_and_time(tmp_path: Path) -> None:
    python = sys.executable
    assert observers.observe_command({"argv": [python, "-c", "print('ok')"], "timeoutSeconds": 10}) == {
        "exitCode": 0, "stdout": "ok\n"}
    with pytest.raises(ObservationFailed, match="more than the bound"):
        observers.observe_command({"argv": [python, "-c", "import sys; sys.stdout.write('x' * 10**6)"],
                                   "timeoutSeconds": 10})
    with pytest.raises(ObservationFailed, match="ran past its timeout of 0.5s"):
        observers.observe_command({"argv": ["sleep", "30"], "timeoutSeconds": 0.5})
    with pytest.raises(ObservationFailed, match="exited 3: boom"):
        observers.observe_command({"argv": [python, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
                                   "timeoutSeconds": 10})
    with pytest.raises(ObservationFailed, match="no command"):
        observers.observe_command({"argv": None, "timeoutSeconds": 1})
