"""Capture real Codex TUI screens for DING's classifier fixtures (a tool, not a test).

Runs the pinned Codex (tests/lab/harnesses.toml) interactive TUI in a private tmux server
against the lab's loopback fake model (``approval_policy = "never"``, full-access sandbox, so a
``sleep`` tool call keeps a turn busy without a modal) and saves each ``tmux capture-pane -p -e``
verbatim (plus ``cursor_x cursor_y pane_width`` in ``<name>.cursor``) under
``captures/codex/<version>/screens/`` — the same states as the Claude tool: empty, draft,
pasted, submitted, busy, busy-pasted, queued, queued-submitted.

``--context-left`` instead runs one session with ``model_context_window = 200000`` and, per
turn, the fake model scripted to report a known usage above Codex's 12,000-token baseline
(``CONTEXT_TURNS``; ``last.totalTokens`` = input + output on the Responses wire), and saves the
screen after each answer as ``captures/codex/<version>/context-left/<name>.ansi`` with the
scripted usage in ``turns.json``: the TUI's own "% context left" footer, which the fixture test
``tests/drivers/codex/test_context_left_screens.py`` compares with st2's mirrored percent.

Usage: ``.venv/bin/python tests/ding/capture_codex_screens.py [--context-left] [--build VERSION]``
(``--build``: one of the measured builds of tests/lab/harnesses.toml instead of the pin).
"""

from __future__ import annotations

import datetime
import json
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

from fake_model import FakeModel  # noqa: E402
from harnesses import install, load_manifest  # noqa: E402
from lab_config import Lab, configure_codex  # noqa: E402

FIRST = "[DING] new st2 message: [id:p3p3p3] build the parser (from demo.planner); check your inbox"
CONTEXT_WINDOW = 200_000
# (name, last.totalTokens) per turn. Codex reports 95 % of the configured window (190,000), so the
# effective window is 178,000: 50,270 leaves 78.5 % and 125,030 leaves 36.5 %, exact halves where
# Rust's half-away-from-zero (79, 37) and Python's half-to-even (78, 36) differ; 92,283 is the
# measured reading in docs/drivers.md §Codex.
CONTEXT_TURNS = (("half-78.5", 50_270), ("seed-92283", 92_283), ("half-36.5", 125_030))
# 0.171.0's footer prints no context figure by default; these ``[tui] status_line`` items do.
CONTEXT_STATUS_LINE = ("model-with-reasoning", "context-remaining", "context-used", "used-tokens")
CONTEXT_OUTPUT = 300
CONTEXT_CACHE_READ = 1_200
QUEUED = "[DING] new st2 message: [id:q2q2q2] review the diff (from demo.planner); check your inbox"


def end_lab_processes(root: Path) -> None:
    """Codex starts a managed app-server daemon that outlives the TUI; end every process whose
    command line names this run's own temp lab directory (by PID)."""
    import signal

    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(root) in command:
            try:
                os.kill(int(entry.name), signal.SIGTERM)
            except ProcessLookupError:
                pass


def main(argv: list[str]) -> int:
    build = argv[argv.index("--build") + 1] if "--build" in argv[:-1] else None
    rest = [word for word in argv if word not in ("--build", build)]
    context_left = rest == ["--context-left"]
    if rest and not context_left:
        print("usage: capture_codex_screens.py [--context-left] [--build VERSION]", file=sys.stderr)
        return 2
    harness = load_manifest()["codex"]
    harness = harness.build(build) if build else harness
    install(harness)
    output = REPO / "captures" / "codex" / harness.version / ("context-left" if context_left else "screens")
    output.mkdir(parents=True, exist_ok=True)
    lab = Lab.create(Path(tempfile.mkdtemp(prefix="st2-ding-capture-")))
    sockets = Path(tempfile.mkdtemp(prefix="st2dc-", dir="/tmp"))
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

    def save(name: str) -> None:
        (output / f"{name}.ansi").write_text(tmux("capture-pane", "-p", "-e", "-t", "st2"))
        (output / f"{name}.cursor").write_text(tmux("display-message", "-p", "-t", "st2",
                                                    "#{cursor_x} #{cursor_y} #{pane_width}"))
        print(f"saved {name}")

    def paste(text: str) -> None:
        tmux("set-buffer", "-b", "capture", "--", text)
        tmux("paste-buffer", "-d", "-p", "-b", "capture", "-t", "st2")

    with FakeModel() as fake:
        environment = configure_codex(lab, harness, fake,
                                      context_window=CONTEXT_WINDOW if context_left else None)
        if context_left:  # the footer items that print Codex's own context arithmetic
            with (Path(environment["CODEX_HOME"]) / "config.toml").open("a") as config:
                config.write(f"[tui]\nstatus_line = {json.dumps(list(CONTEXT_STATUS_LINE))}\n")
                # 0.151.0 asks whether to trust the workspace before its composer shows; 0.171.0 does not.
                config.write(f"[projects.{json.dumps(str(lab.workspace))}]\ntrust_level = \"trusted\"\n")
        launcher = lab.root / "codex.sh"
        exports = "".join(f"export {name}='{value}'\n" for name, value in environment.items())
        launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\nexec '{harness.executable}'\n")
        launcher.chmod(0o755)
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2", "-x", "180",
                        "-y", "50", str(launcher)], check=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "TERM": "xterm-256color"})
        try:
            # 0.151.0 prints no "? for shortcuts" under its composer.
            wait(lambda text: ("? for shortcuts" in text or "Ask Codex to do anything" in text) and "gpt-" in text,
                 "an idle composer")
            time.sleep(1)
            if context_left:
                capture_context_left(harness.version, fake, tmux, wait, save, output,
                                     Path(environment["CODEX_HOME"]))
                return 0
            save("empty")
            tmux("send-keys", "-t", "st2", "-l", "half a thought about the parser")
            wait(lambda text: "half a thought" in text, "the draft")
            save("draft")
            tmux("send-keys", "-t", "st2", "C-u")
            wait(lambda text: "Ask Codex to do anything" in text, "the draft cleared")
            paste(FIRST)
            wait(lambda text: "[id:p3p3p3]" in text, "the pasted notice")
            time.sleep(0.5)
            save("pasted")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "Hello from the fake model" in text and "Ask Codex to do anything" in text, "the answer")
            time.sleep(0.5)
            save("submitted")
            tmux("send-keys", "-t", "st2", "-l", "FAKE_TOOL: sleep 12")
            wait(lambda text: "FAKE_TOOL: sleep 12" in text, "the tool prompt")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "esc to interrupt" in text, "the busy turn")
            time.sleep(1)
            save("busy")
            paste(QUEUED)
            wait(lambda text: "[id:q2q2q2]" in text, "the notice pasted while busy")
            time.sleep(0.3)
            save("busy-pasted")
            tmux("send-keys", "-t", "st2", "Enter")
            wait(lambda text: "Messages to be submitted after next tool call" in text, "the queued notice")
            save("queued")
            wait(lambda text: text.count("Hello from the fake model") >= 2 and "esc to interrupt" not in text,
                 "the queued notice submitted")
            time.sleep(0.5)
            save("queued-submitted")
        finally:
            tmux("kill-server")
            shutil.rmtree(sockets, ignore_errors=True)
            end_lab_processes(lab.root)
            shutil.rmtree(lab.root, ignore_errors=True)
    return 0


def capture_context_left(version: str, fake, tmux, wait, save, output: Path, codex_home: Path) -> None:
    """One turn per ``CONTEXT_TURNS`` entry; the screen after each answer, ``turns.json``, and
    the session rollout's ``token_count`` events verbatim (``token_count.jsonl``: the TUI's own
    ``last_token_usage`` and ``model_context_window``)."""
    turns = []
    for index, (name, last_total) in enumerate(CONTEXT_TURNS, start=1):
        fake.set_usage(input=last_total - CONTEXT_OUTPUT, output=CONTEXT_OUTPUT, cache_read=CONTEXT_CACHE_READ,
                       cache_creation=0, reasoning=0)
        tmux("send-keys", "-t", "st2", "-l", f"turn {index}: {name}")
        wait(lambda text: f"turn {index}: {name}" in text, f"turn {index} typed")
        tmux("send-keys", "-t", "st2", "Enter")
        wait(lambda text: text.count("Hello from the fake model") >= index and "Ask Codex to do anything" in text
             and "esc to interrupt" not in text, f"turn {index} answered")
        time.sleep(1)
        save(name)
        turns.append({"name": name, "input": last_total - CONTEXT_OUTPUT, "output": CONTEXT_OUTPUT,
                      "cacheRead": CONTEXT_CACHE_READ, "lastTotalTokens": last_total})
    (output / "turns.json").write_text(json.dumps({
        "harness": "codex", "version": version, "configuredContextWindow": CONTEXT_WINDOW,
        "date": datetime.date.today().isoformat(), "turns": turns}, indent=2) + "\n")
    events = [line for rollout in sorted((codex_home / "sessions").rglob("rollout-*.jsonl"))
              for line in rollout.read_text().splitlines()
              if '"type":"token_count"' in line.replace(" ", "") and '"info":null' not in line.replace(" ", "")]
    (output / "token_count.jsonl").write_text("".join(f"{line}\n" for line in events))
    print(f"saved {len(events)} token_count events")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
