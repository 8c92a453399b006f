"""Capture real Claude Code screens for DING's classifier fixtures (a tool, not a test).

Runs the pinned Claude Code TUI (tests/lab/harnesses.toml) in a private tmux server against the
lab's loopback fake model, drives it through the composer states DING must tell apart, and saves
each ``tmux capture-pane -p -e`` verbatim (plus ``cursor_x cursor_y pane_width`` on one line in
``<name>.cursor``) under ``captures/claude-code/<version>/screens/``:

    empty             a fresh idle composer (the "← for agents" hint below it)
    draft             a human's typed draft
    pasted            a DING notice pasted into the idle composer
    submitted         that notice after Return, answered, composer empty again
    busy              a turn in flight (a Bash ``sleep``), empty composer
    busy-pasted       a notice pasted while the turn runs
    queued            that notice after Return while the turn runs (queued; placeholder composer)
    queued-submitted  the turn over, the queued notice submitted
    permission        a permission prompt for a Bash call that is not allowed (blocked on a human)
    trust             (``--trust``, alone) the workspace trust dialog Claude shows before any hook
                      when ``.claude.json`` holds no trust for the workspace

Usage: ``.venv/bin/python tests/ding/capture_claude_screens.py [--trust]``
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.append(str(REPO / "tests" / "lab"))

from fake_model import FakeModel  # noqa: E402
from harnesses import install, load_manifest  # noqa: E402
from lab_config import Lab, configure_claude  # noqa: E402
from lab_drivers import ClaudeTui  # noqa: E402

FIRST = "[DING] new st2 message: [id:p3p3p3] build the parser (from demo.planner); check your inbox"
QUEUED = "[DING] new st2 message: [id:q2q2q2] review the diff (from demo.planner); check your inbox"


def capture_trust(harness, lab: Lab, fake: FakeModel, output: Path) -> None:
    """Only ``trust``: the lab's ``.claude.json`` with no project trusted, the dialog left unanswered."""
    environment = configure_claude(lab, harness, fake, hooks=False)
    state = json.loads((lab.home / ".claude.json").read_text())
    state["projects"] = {}
    (lab.home / ".claude.json").write_text(json.dumps(state, indent=2))
    tui = ClaudeTui(harness.executable, lab, environment)
    try:
        tui.wait_screen(lambda screen: "Yes, I trust this folder" in screen, 60, "the trust dialog")
        time.sleep(1)
        raw = tui._tmux("capture-pane", "-p", "-e", "-t", "lab")
        cursor = tui._tmux("display-message", "-p", "-t", "lab", "#{cursor_x} #{cursor_y} #{pane_width}")
        (output / "trust.ansi").write_text(raw)
        (output / "trust.cursor").write_text(cursor)
        print("saved trust")
    finally:
        tui.close()


def main() -> int:
    harness = load_manifest()["claude-code"]
    install(harness)
    output = REPO / "captures" / "claude-code" / harness.version / "screens"
    output.mkdir(parents=True, exist_ok=True)
    import tempfile

    lab = Lab.create(Path(tempfile.mkdtemp(prefix="st2-ding-capture-")))
    if "--trust" in sys.argv[1:]:
        with FakeModel() as fake:
            try:
                capture_trust(harness, lab, fake, output)
            finally:
                shutil.rmtree(lab.root, ignore_errors=True)
        return 0
    with FakeModel() as fake:
        environment = configure_claude(lab, harness, fake, hooks=False)
        settings_path = lab.workspace / ".claude" / "settings.local.json"
        settings = json.loads(settings_path.read_text())
        settings["permissions"] = {"allow": ["Bash(sleep:*)"]}  # a turn that stays busy, no modal
        settings_path.write_text(json.dumps(settings, indent=2))
        tui = ClaudeTui(harness.executable, lab, environment)
        try:
            def save(name: str) -> str:
                raw = tui._tmux("capture-pane", "-p", "-e", "-t", "lab")
                cursor = tui._tmux("display-message", "-p", "-t", "lab", "#{cursor_x} #{cursor_y} #{pane_width}")
                (output / f"{name}.ansi").write_text(raw)
                (output / f"{name}.cursor").write_text(cursor)
                print(f"saved {name}")
                return raw

            def paste(text: str) -> None:
                tui._tmux("set-buffer", "-b", "capture", "--", text)
                tui._tmux("paste-buffer", "-d", "-p", "-b", "capture", "-t", "lab")

            tui.wait_screen(lambda screen: "← for agents" in screen, 60, "an idle composer")
            time.sleep(1)
            save("empty")
            tui._tmux("send-keys", "-t", "lab", "-l", "half a thought about the parser")
            tui.wait_screen(lambda screen: "half a thought" in screen, 20, "the draft")
            save("draft")
            tui._tmux("send-keys", "-t", "lab", "C-u")
            tui.wait_screen(lambda screen: "half a thought" not in screen, 20, "the draft cleared")
            tui._tmux("send-keys", "-t", "lab", "Escape")
            tui.wait_screen(lambda screen: "← for agents" in screen, 20, "the idle hint back")
            paste(FIRST)
            tui.wait_screen(lambda screen: "[id:p3p3p3]" in screen, 20, "the pasted notice")
            time.sleep(0.5)
            save("pasted")
            tui._tmux("send-keys", "-t", "lab", "Enter")
            tui.wait_screen(lambda screen: "← for agents" in screen and "Hello from the fake model" in screen, 60,
                            "the answered notice")
            time.sleep(0.5)
            save("submitted")
            tui.type("FAKE_TOOL: sleep 12")
            tui.wait_screen(lambda screen: "Running…" in screen, 60, "the busy turn")
            time.sleep(1)
            save("busy")
            paste(QUEUED)
            tui.wait_screen(lambda screen: "[id:q2q2q2]" in screen, 20, "the notice pasted while busy")
            time.sleep(0.3)
            save("busy-pasted")
            tui._tmux("send-keys", "-t", "lab", "Enter")
            tui.wait_screen(lambda screen: "Press up to edit queued messages" in screen, 20, "the queued notice")
            save("queued")
            tui.wait_screen(lambda screen: "← for agents" in screen and screen.count("Hello from the fake model") >= 2,
                            60, "the queued notice submitted")
            time.sleep(0.5)
            save("queued-submitted")
            tui.type("FAKE_TOOL: touch st2-ding-denied.txt")
            tui.wait_screen(lambda screen: "Do you want to proceed?" in screen, 60, "the permission prompt")
            time.sleep(0.5)
            save("permission")
            tui._tmux("send-keys", "-t", "lab", "Escape")
            print(f"fake model answered {len(fake.model_requests())} requests")
        finally:
            tui.close()
            shutil.rmtree(lab.root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
