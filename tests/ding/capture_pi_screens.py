"""Capture real pi / omp TUI screens for DING's classifier fixtures (a tool, not a test).

Runs the pinned harness (tests/lab/harnesses.toml; ``pi`` by default, ``omp`` with an argument)
interactively in a private tmux server against the lab's loopback fake model (provider
``fake-anthropic``; a ``sleep`` bash call keeps a turn busy), and saves each ``tmux capture-pane
-p -e`` verbatim (plus ``cursor_x cursor_y pane_width`` in ``<name>.cursor``) under
``captures/<harness>/<version>/screens/``: empty, draft, pasted, submitted, busy, busy-pasted,
queued (Return during the turn: a steering message), queued-submitted, and for pi compacted-empty
(after ``/compact``: the usage row reads ``?/200k``) and compacted-pasted.

Usage: ``.venv/bin/python tests/ding/capture_pi_screens.py [pi|omp]``
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


def main(name: str = "pi") -> int:
    harness = load_manifest()[name]
    install(harness)
    output = REPO / "captures" / name / harness.version / "screens"
    output.mkdir(parents=True, exist_ok=True)
    lab = Lab.create(Path(tempfile.mkdtemp(prefix="st2-ding-capture-")))
    sockets = Path(tempfile.mkdtemp(prefix="st2dp-", dir="/tmp"))
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

    def paste(text: str) -> None:
        tmux("set-buffer", "-b", "capture", "--", text)
        tmux("paste-buffer", "-d", "-p", "-b", "capture", "-t", "st2")

    with FakeModel() as fake:
        environment = configure_pi(lab, harness, fake)
        environment["PATH"] = environment_path(harness)
        launcher = lab.root / "pi.sh"
        exports = "".join(f"export {key}='{value}'\n" for key, value in environment.items())
        launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\n"
                            f"exec '{harness.executable}' --provider fake-anthropic --model fake-claude\n")
        launcher.chmod(0o755)
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2", "-x", "180",
                        "-y", "50", str(launcher)], check=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "TERM": "xterm-256color"})
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not ("fake-claude" in screen() and "%/" in screen()):
                if "Setup step" in screen():  # omp's first-run wizard: skip every step
                    tmux("send-keys", "-t", "st2", "Escape")
                time.sleep(0.5)
            wait(lambda text: "fake-claude" in text and "%/" in text, "an idle composer", 30)
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
            wait(lambda text: "Working" in text and "sleep 12" in text, "the busy turn")
            time.sleep(1)
            save("busy")
            paste(QUEUED)
            wait(lambda text: "[id:q2q2q2]" in text, "the notice pasted while busy")
            time.sleep(0.3)
            save("busy-pasted")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "queued" in text.lower() or "Steering" in text, "the queued notice")
            time.sleep(0.3)
            save("queued")
            wait(lambda text: text.count("Hello from the fake model") >= 2 and "Working" not in text,
                 "the queued notice submitted")
            time.sleep(1.0)
            save("queued-submitted")
            if name == "pi":
                compacted(tmux, wait, save, paste, screen)
        finally:
            tmux("kill-server")
            shutil.rmtree(sockets, ignore_errors=True)
            end_lab_processes(lab.root)
            shutil.rmtree(lab.root, ignore_errors=True)
    return 0


def compacted(tmux, wait, save, paste, screen) -> None:
    """``/compact`` the conversation, then the empty composer pi draws until its next reply, then a
    notice pasted into it."""
    tmux("send-keys", "-t", "st2", "-l", "/compact")
    wait(lambda text: "/compact" in text, "the /compact command typed")
    tmux("send-keys", "-t", "st2", "Enter")
    wait(lambda text: "Compacted from" in text and "?/" in text and "Working" not in text,
         "the compacted conversation", 90)
    time.sleep(1.5)
    save("compacted-empty")
    before = screen().count("[id:p3p3p3]")
    paste(FIRST)
    wait(lambda text: text.count("[id:p3p3p3]") > before, "the notice pasted after compaction")
    time.sleep(0.5)
    save("compacted-pasted")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
