"""The foreign-vendor run with the real Codex binary as the adapter (``codex exec``, its
non-interactive mode, reading the prompt on stdin) against the fake model server: an audit
returns Codex's answer as the report, the session id Codex prints opens a session, and the
resume form (``codex exec resume <id> -``) continues it in the same clone."""

from __future__ import annotations

import io
import subprocess

import pytest

from lab_config import configure_codex
from lab_support import require_harness
from st2.kit.foreign import executor

pytestmark = pytest.mark.lab


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_codex_exec_runs_an_audit_and_a_resumed_turn(lab, fake_model, tmp_path) -> None:
    harness = require_harness("codex")
    env = configure_codex(lab, harness, fake_model, sandbox_mode="read-only")
    repo = lab.workspace / "source"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print(1)\n")
    (repo / ".gitignore").write_text(".tmp/\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "-m", "base")
    knobs = tmp_path / "delegation-config.knobs"
    open_form = [str(harness.executable), "exec", "--skip-git-repo-check", "-s", "read-only", "-"]
    resume_form = [str(harness.executable), "exec", "resume", "--skip-git-repo-check", "@SESSION_ID@", "-"]
    knobs.write_text("".join(f"DELEGATION_KIT_FOREIGN_ADAPTERS[] = codex={word}\n" for word in open_form)
                     + "".join(f"DELEGATION_KIT_FOREIGN_RESUME[] = codex={word}\n" for word in resume_form)
                     + "DELEGATION_KIT_FOREIGN_SESSION_MARKER[] = codex=session id:\n"
                     + "DELEGATION_KIT_FOREIGN_TIMEOUT = 120\n")
    prompt = tmp_path / "review-app.md"
    prompt.write_text("Read app.py and say what it prints.\n")
    environ = env | {"DELEGATION_KIT_KNOB_FILE": str(knobs)}
    # the adapter's environment is the caller's (``environ``), its GIT_* location variables removed
    out, err = io.StringIO(), io.StringIO()
    status = executor.run(["codex", str(prompt)], environ=environ, cwd=str(repo), out=out, err=err)
    run_dir = repo / ".tmp" / "foreign" / "review-app"
    stderr_text = (run_dir / "stderr.txt").read_text(errors="replace") if (run_dir / "stderr.txt").exists() else ""
    assert status == 0, (out.getvalue(), err.getvalue(), stderr_text)
    assert out.getvalue() == (
        f"foreign-run: adapter=codex mode=audit class=- key=review-app budget=OFF exit=0 report={run_dir}/report.txt "
        "patch=none -> OK — resumable: st2 foreign resume review-app <prompt-file>\n")
    assert "Hello from the fake model." in (run_dir / "report.txt").read_text()
    record = (run_dir / "session.txt").read_text()
    session_id = record.rsplit(" id=", 1)[1].strip()
    assert session_id != "-" and session_id in stderr_text
    first_requests = len(fake_model.model_requests())
    assert first_requests >= 1

    answer = tmp_path / "answer.md"
    answer.write_text("And now say it again.\n")
    out = io.StringIO()
    status = executor.resume(["review-app", str(answer)], environ=environ, cwd=str(repo), out=out, err=err)
    assert status == 0, (out.getvalue(), (run_dir / "stderr.txt").read_text(errors="replace"))
    assert " turn=2 " in out.getvalue() and (run_dir / "report.1.txt").exists()
    assert "Hello from the fake model." in (run_dir / "report.txt").read_text()
    assert len(fake_model.model_requests()) > first_requests
    # the resumed turn carried the earlier conversation (the vendor held it, not the kit)
    assert "Read app.py" in str(fake_model.model_requests()[-1])
    assert git(repo, "rev-parse", "HEAD") == git(run_dir / "tree", "rev-parse", "HEAD")
