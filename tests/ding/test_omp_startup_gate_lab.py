"""Lab tier: omp 18.2.3 ignores a Return while its composer's bootstrap submit gate is up, and
DING's one bare retry Return on a retained composer is what delivers a notice pasted then.

omp draws its composer idle (``π``, the model, the ``╰─`` prompt) and takes keystrokes before its
start-up has finished: ``InteractiveMode.init()`` runs the ``session_start`` hooks (where st2's
channel extension reports ``idle``) and only then lifts ``editor.disableSubmit``. A Return in
that window does nothing and the text stays in the composer; on two loaded cores the window lasts
seconds. The lab extension ``tests/lab/extension/hold-startup.ts`` holds omp inside its
``session_start`` hooks until the test releases it, so the window is entered on purpose, not by
chance.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ding_support import Notifier, make_seat, ownership_record, poll_for, write_message
from st2.ding.notice import notice_text

LAB = Path(__file__).resolve().parents[1] / "lab"
if str(LAB) not in sys.path:
    sys.path.append(str(LAB))

from fake_model import FakeModel  # noqa: E402
from harnesses import InstallFailed, install, load_manifest, npm_available  # noqa: E402
from lab_config import Lab  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOLD = LAB / "extension" / "hold-startup.ts"
RETRY_BACKOFF_SECONDS = 15.0  # DING's default (st2.ding.notifier.DELIVERY_RETRY_BACKOFF_SECONDS)


def notice_counts(fake: FakeModel, notice: str) -> list[int]:
    """For each request the fake model received that carries ``notice``: how many of its user
    texts hold it (1 each when it was submitted once)."""
    counts = []
    for entry in fake.model_requests():
        texts = []
        for message in (entry.get("body") or {}).get("messages", []):
            content = message.get("content") if message.get("role") == "user" else None
            texts += [content] if isinstance(content, str) else [part.get("text", "") for part in content or []
                                                                 if isinstance(part, dict)]
        held = sum(text.count(notice) for text in texts)
        if held:
            counts.append(held)
    return counts


def test_omp_keeps_a_notice_returned_inside_its_startup_gate_and_ding_s_retry_return_delivers_it_once(
        tmp_path, catalog):
    from capture_omp_screens import IDLE_MARKERS, configure_omp, omp_launcher

    harness = load_manifest()["omp"]
    if not npm_available():
        pytest.skip("LAB TIER NOT RUN: npm is not on PATH")
    try:
        install(harness, retry_recorded_failure=False)
    except InstallFailed as failure:
        pytest.fail(f"lab harness omp is not installed:\n{failure}", pytrace=False)
    seat = make_seat(catalog, "omp", 'agent "omp" {\n    argv "omp"\n    ding\n    harness "omp"\n}\n')
    lab = Lab.create(tmp_path / "lab")
    release = lab.root / "release-startup"
    socket_directory = Path(tempfile.mkdtemp(prefix="st2dg-", dir="/tmp"))
    socket = str(socket_directory / "s")
    with FakeModel() as fake:
        environment = configure_omp(lab, harness, fake) | {"ST2_LAB_HOLD_STARTUP": str(release)}
        launcher = omp_launcher(lab, harness, environment, ("-e", str(HOLD)))
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2", "-x", "180",
                        "-y", "50", str(launcher)], check=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "TERM": "xterm-256color"})
        pane_pid = int(subprocess.run(["tmux", "-S", socket, "display-message", "-p", "-t", "st2", "#{pane_pid}"],
                                      capture_output=True, text=True, timeout=10).stdout)
        notifier = None
        try:
            def screen() -> str:
                return subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", "st2"],
                                      capture_output=True, text=True, timeout=10).stdout

            def head() -> dict:
                return json.loads(ownership_record(tmp_path / "state", catalog, "omp").read_text())["head"] or {}

            # Held inside session_start: the gate is up, yet the composer reads idle to DING.
            poll_for(lambda: Path(f"{release}.held").exists(), timeout=120, step=0.3,
                     what="omp's start-up held inside its session_start hooks")
            poll_for(lambda: all(marker in screen() for marker in IDLE_MARKERS), timeout=90, step=0.3,
                     what="omp's composer drawn idle while its start-up is held")
            notifier = Notifier(catalog, "omp", socket, tmp_path / "state", retry_backoff=RETRY_BACKOFF_SECONDS)
            notifier.wait_started(timeout=20)
            name = write_message(seat, "review the parser", sender="h.planner")
            notice = notice_text(name, "review the parser", "h.planner")

            # DING pastes and presses its Return; omp ignores it and keeps the notice.
            poll_for(lambda: head().get("returns") == 1, timeout=60, step=0.2, what="DING's first Return recorded")
            poll_for(lambda: "receipt retained-safe" in notifier.log.read_text(errors="replace"), timeout=30,
                     step=0.2, what="DING finding the notice retained after its Return")
            # ...and keeps it for as long as the start-up is held (DING goes on meanwhile).
            notifier.runs_on(passes=20, what="DING going on while omp's start-up is held")
            assert notice in screen()
            assert notice_counts(fake, notice) == []
            assert (head()["returns"], json.loads(notifier.ownership.read_text())["phase"]) == (1, "submitted")

            # The gate lifts; DING's one bare retry Return (after its backoff) submits the notice, once.
            release.write_text("go\n")
            poll_for(lambda: name in json.loads(notifier.ownership.read_text())["settled"],
                     timeout=RETRY_BACKOFF_SECONDS + 60, step=0.3, what="the notice settled by the retry Return")
            poll_for(lambda: notice_counts(fake, notice), timeout=60, step=0.3,
                     what="the notice in the fake model's request log")
            poll_for(lambda: "Hello from the fake model" in screen(), timeout=60, step=0.3, what="the reply")
            assert set(notice_counts(fake, notice)) == {1}, notice_counts(fake, notice)
            assert screen().count(notice) == 1  # one transcript row, nothing left in the composer
        finally:
            if notifier is not None:
                notifier.stop()
            subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
            try:
                os.killpg(pane_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            shutil.rmtree(socket_directory, ignore_errors=True)
