"""Capture real omp TUI screens for DING's classifier fixtures (a tool, not a test).

Runs the pinned omp (``@oh-my-pi/pi-coding-agent``, tests/lab/harnesses.toml) interactively in a
private tmux server against the lab's loopback fake model (provider ``fake-anthropic``; a
``sleep`` bash call keeps a turn busy), and saves each ``tmux capture-pane -p -e`` verbatim (plus
``cursor_x cursor_y pane_width`` in ``<name>.cursor``) under
``captures/omp/<version>/screens/``: empty, draft, pasted, submitted, busy, busy-pasted, queued
(Return during the turn), queued-submitted, compacted-empty (after ``/compact``; unlike pi, the
status band keeps its ``<n>%`` gauge).

omp's first-run setup wizard is passed offline by omp's own switches, read from its source
(``src/modes/setup-wizard/index.ts`` ``selectSetupScenes``): ``OMP_SKIP_SETUP=1`` and the
setting ``startup.setupWizard: false``; ``startup.checkUpdate: false`` keeps it off the network.

Usage: ``.venv/bin/python tests/ding/capture_omp_screens.py``
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.append(str(REPO / "tests" / "lab"))
sys.path.append(str(HERE))

from capture_codex_screens import FIRST, QUEUED, end_lab_processes  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from harnesses import environment_path, install, load_manifest  # noqa: E402
from lab_config import Lab, configure_pi  # noqa: E402

IDLE_STATUS = " π > "  # the status band's idle glyph; a spinner and elapsed time while busy
IDLE_MARKERS = ("fake-claude", "╰─", IDLE_STATUS)
OMP_OFFLINE_SETTINGS = "startup:\n  setupWizard: false\n  checkUpdate: false\n"


def configure_omp(lab: Lab, harness, fake: FakeModel) -> dict[str, str]:
    """The lab's omp configuration (models on the loopback fake) with the setup wizard and the
    update check switched off; returns the environment to run omp in."""
    environment = configure_pi(lab, harness, fake)
    config = lab.home / ".omp" / "agent" / "config.yml"
    config.write_text(config.read_text() + OMP_OFFLINE_SETTINGS)
    environment["PATH"] = environment_path(harness)
    environment["OMP_SKIP_SETUP"] = "1"
    return environment


def omp_launcher(lab: Lab, harness, environment: dict[str, str], arguments: tuple[str, ...] = ()) -> Path:
    """A shell script that runs omp on the fake model in the lab's workspace, ``arguments`` first."""
    launcher = lab.root / "omp.sh"
    exports = "".join(f"export {key}='{value}'\n" for key, value in environment.items())
    words = "".join(f"'{word}' " for word in arguments)
    launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\n"
                        f"exec '{harness.executable}' {words}--provider fake-anthropic --model fake-claude\n")
    launcher.chmod(0o755)
    return launcher


def wait_for_exit(pid: int, timeout: float = 10) -> None:
    """Poll until ``pid`` is gone (or the timeout passes), so its last writes land before cleanup."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def main() -> int:
    harness = load_manifest()["omp"]
    install(harness)
    output = REPO / "captures" / "omp" / harness.version / "screens"
    output.mkdir(parents=True, exist_ok=True)
    lab = Lab.create(Path(tempfile.mkdtemp(prefix="st2-ding-capture-")))
    sockets = Path(tempfile.mkdtemp(prefix="st2do-", dir="/tmp"))
    socket = str(sockets / "s")

    def tmux(*words: str) -> str:
        return subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", *words], capture_output=True, text=True,
                              timeout=30).stdout

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "st2")

    def wait(predicate, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(screen()):
            if time.monotonic() > deadline:
                raise SystemExit(f"never saw {what}:\n{screen()}")
            time.sleep(0.2)

    def save(state: str) -> None:
        (output / f"{state}.ansi").write_text(tmux("capture-pane", "-p", "-e", "-t", "st2"))
        (output / f"{state}.cursor").write_text(tmux("display-message", "-p", "-t", "st2",
                                                     "#{cursor_x} #{cursor_y} #{pane_width}"))
        print(f"saved {state}")
        print(screen())

    def paste(text: str) -> None:
        tmux("set-buffer", "-b", "capture", "--", text)
        tmux("paste-buffer", "-d", "-p", "-b", "capture", "-t", "st2")

    with FakeModel() as fake:
        launcher = omp_launcher(lab, harness, configure_omp(lab, harness, fake))
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2", "-x", "180",
                        "-y", "50", str(launcher)], check=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "TERM": "xterm-256color"})
        pane_pid = int(tmux("display-message", "-p", "-t", "st2", "#{pane_pid}"))
        try:
            wait(lambda text: all(marker in text for marker in IDLE_MARKERS), "an idle composer", 60)
            time.sleep(1.5)
            save("empty")
            tmux("send-keys", "-t", "st2", "-l", "half a thought about the parser")
            wait(lambda text: "half a thought" in text, "the draft")
            save("draft")
            tmux("send-keys", "-t", "st2", "C-u")
            wait(lambda text: "half a thought" not in text, "the draft cleared")
            paste(FIRST)
            wait(lambda text: "[id:p3p3p3]" in text, "the pasted notice")
            time.sleep(0.5)
            save("pasted")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "Hello from the fake model" in text, "the answer")
            time.sleep(1.0)
            save("submitted")
            tmux("send-keys", "-t", "st2", "-l", "FAKE_TOOL: sleep 12")
            wait(lambda text: "FAKE_TOOL: sleep 12" in text, "the tool prompt")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: text.count("sleep 12") >= 2, "the busy turn")
            time.sleep(1.5)
            save("busy")
            paste(QUEUED)
            wait(lambda text: "[id:q2q2q2]" in text, "the notice pasted while busy")
            time.sleep(0.3)
            save("busy-pasted")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "╰─ [DING]" not in text, "the notice leaving the composer")
            save("queued")
            wait(lambda text: text.count("Hello from the fake model") >= 2 and IDLE_STATUS in text,
                 "the queued notice answered and the turn over", 90)
            time.sleep(1.5)
            save("queued-submitted")
            before = screen()
            tmux("send-keys", "-t", "st2", "-l", "/compact")
            wait(lambda text: "/compact" in text, "the /compact command typed")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: text != before and "/compact" not in text.split("╰─")[-1] and IDLE_STATUS in text
                 and "ompact" in text, "the compacted conversation", 120)
            time.sleep(2.0)
            save("compacted-empty")
        finally:
            tmux("kill-server")
            shutil.rmtree(sockets, ignore_errors=True)
            end_lab_processes(lab.root)
            wait_for_exit(pane_pid)  # omp writes its session file on the way out
            shutil.rmtree(lab.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
