"""Lab tier: the real Claude Code (pinned 2.1.197), pi (0.73.1) and omp (18.2.3) TUIs in tmux, against the
loopback fake model, receive a DING from the real ``st2 ding`` — and the notice reaches the model
as a submitted prompt, exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from ding_support import Notifier, make_seat, ownership_record, poll_for, return_gates, write_message
from st2.ding.notice import notice_text
from st2.ding.notifier import DELIVERY_RETRY_BACKOFF_SECONDS

LAB = Path(__file__).resolve().parents[1] / "lab"
if str(LAB) not in sys.path:
    sys.path.append(str(LAB))

from fake_model import FakeModel  # noqa: E402
from harnesses import InstallFailed, install, load_manifest, npm_available  # noqa: E402
from harnesses import environment_path  # noqa: E402
from lab_config import Lab, configure_claude, configure_pi  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.process]


def user_texts(entry: dict) -> list[str]:
    texts = []
    for message in (entry.get("body") or {}).get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [part.get("text", "") for part in content if isinstance(part, dict)]
    return texts


def waiting_for(what: str, screen, notifier: Notifier):
    """A timeout's description: ``what``, then the pane, the notifier's log and its ownership
    record as they are when the wait gives up."""
    def describe() -> str:
        log = notifier.log.read_text(errors="replace") if notifier.log.exists() else "<no log>"
        record = notifier.ownership.read_text() if notifier.ownership.exists() else "<no record>"
        return (f"{what}\n--- screen ---\n{screen()}\n--- notifier log (tail) ---\n{log[-3000:]}"
                f"\n--- ownership record ---\n{record}")
    return describe


def test_real_claude_code_submits_a_ding_notice_to_the_model_once(tmp_path, catalog):
    harness = load_manifest()["claude-code"]
    if not npm_available():
        pytest.skip("LAB TIER NOT RUN: npm is not on PATH")
    try:
        install(harness, retry_recorded_failure=False)
    except InstallFailed as failure:
        pytest.fail(f"lab harness claude-code is not installed:\n{failure}", pytrace=False)
    seat = make_seat(catalog, "claude", 'agent "claude" {\n    argv "claude"\n    ding\n    claude\n}\n')
    lab = Lab.create(tmp_path / "lab")
    socket_directory = Path(tempfile.mkdtemp(prefix="st2dl-", dir="/tmp"))
    socket = str(socket_directory / "s")
    with FakeModel() as fake:
        environment = configure_claude(lab, harness, fake, hooks=False)
        launcher = lab.root / "claude.sh"
        exports = "".join(f"export {name}='{value}'\n" for name, value in environment.items())
        launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\nexec '{harness.executable}'\n")
        launcher.chmod(0o755)
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

            poll_for(lambda: "← for agents" in screen(), timeout=90, step=0.3, what="Claude's idle composer")
            notifier = Notifier(catalog, "claude", socket, tmp_path / "state", retry_backoff=1.0)
            notifier.wait_started(timeout=20)
            before = len(fake.model_requests())
            name = write_message(seat, "review the parser", sender="h.planner")
            notice = notice_text(name, "review the parser", "h.planner")
            poll_for(lambda: any(notice in text for entry in fake.model_requests()[before:]
                                 for text in user_texts(entry)),
                     timeout=60, step=0.3,
                     what=waiting_for("the notice in the fake model's request log", screen, notifier))
            poll_for(lambda: "Hello from the fake model" in screen(), timeout=60, step=0.3, what='"Hello from the fake model" in screen()')
            poll_for(lambda: json.loads(ownership_record(tmp_path / "state", catalog, "claude").read_text())["settled"],
                     timeout=30, what="the notice settled")
            notifier.runs_on(passes=3)
            record = json.loads(ownership_record(tmp_path / "state", catalog, "claude").read_text())
            assert (record["phase"], record["settled"]) == ("idle", [name])
            prompts = [text for entry in fake.model_requests()[before:] for text in user_texts(entry)
                       if notice in text]
            # Each request replays the conversation; the notice is one user turn in it.
            assert all(text.count(notice) == 1 for text in prompts)
            assert screen().count(notice) == 1
            # One delivery: its first Return went only once two adjacent observations showed the
            # notice (the gate in place of a fixed 0.5 s), or Claude took it with no Return at all.
            [gate] = return_gates(notifier.log)
            print(f"claude-code: first Return {gate} ms after the paste (None: no Return needed)")
        finally:
            if notifier is not None:
                notifier.stop()
            subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
            try:
                os.killpg(pane_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            shutil.rmtree(socket_directory, ignore_errors=True)


@contextmanager
def real_pi(tmp_path, catalog):
    """The pinned real pi TUI in a private tmux server against the fake model, idle, with the
    ``pi`` seat declared; yields ``(seat, fake, socket, screen, keys)`` and ends what it started."""
    harness = load_manifest()["pi"]
    if not npm_available():
        pytest.skip("LAB TIER NOT RUN: npm is not on PATH")
    try:
        install(harness, retry_recorded_failure=False)
    except InstallFailed as failure:
        pytest.fail(f"lab harness pi is not installed:\n{failure}", pytrace=False)
    seat = make_seat(catalog, "pi", 'agent "pi" {\n    argv "pi"\n    ding\n    harness "pi"\n}\n')
    lab = Lab.create(tmp_path / "lab")
    socket_directory = Path(tempfile.mkdtemp(prefix="st2dl-", dir="/tmp"))
    socket = str(socket_directory / "s")
    with FakeModel() as fake:
        environment = configure_pi(lab, harness, fake)
        environment["PATH"] = environment_path(harness)
        launcher = lab.root / "pi.sh"
        exports = "".join(f"export {name}='{value}'\n" for name, value in environment.items())
        launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\n"
                            f"exec '{harness.executable}' --provider fake-anthropic --model fake-claude\n")
        launcher.chmod(0o755)
        subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2", "-x", "180",
                        "-y", "50", str(launcher)], check=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "TERM": "xterm-256color"})
        pane_pid = int(subprocess.run(["tmux", "-S", socket, "display-message", "-p", "-t", "st2", "#{pane_pid}"],
                                      capture_output=True, text=True, timeout=10).stdout)

        def screen() -> str:
            return subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", "st2"],
                                  capture_output=True, text=True, timeout=10).stdout

        def keys(*words: str) -> None:
            subprocess.run(["tmux", "-S", socket, "send-keys", "-t", "st2", *words], check=True, timeout=10)

        try:
            poll_for(lambda: "fake-claude" in screen() and "%/" in screen(), timeout=90, step=0.3,
                     what="pi's idle composer")
            yield seat, fake, socket, screen, keys
        finally:
            subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
            try:
                os.killpg(pane_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            shutil.rmtree(socket_directory, ignore_errors=True)


def pi_notice_settles(seat, fake, tmp_path, catalog) -> tuple[int, str, str]:
    """Write one message to the pi seat and wait until its notice is in a model request and
    settled; returns the request count before, the message name and the notice."""
    before = len(fake.model_requests())
    name = write_message(seat, "review the parser", sender="h.planner")
    notice = notice_text(name, "review the parser", "h.planner")
    poll_for(lambda: any(notice in text for entry in fake.model_requests()[before:] for text in user_texts(entry)),
             timeout=60, step=0.3, what="the notice in the fake model's request log")
    poll_for(lambda: json.loads(ownership_record(tmp_path / "state", catalog, "pi").read_text())["settled"],
             timeout=30, step=0.3, what="the notice settled")
    return before, name, notice


def test_real_pi_submits_a_ding_notice_to_the_model_once(tmp_path, catalog):
    with real_pi(tmp_path, catalog) as (seat, fake, socket, screen, keys):
        notifier = Notifier(catalog, "pi", socket, tmp_path / "state", retry_backoff=1.0)
        try:
            notifier.wait_started(timeout=20)
            before, name, notice = pi_notice_settles(seat, fake, tmp_path, catalog)
            record = json.loads(ownership_record(tmp_path / "state", catalog, "pi").read_text())
            assert (record["phase"], record["settled"]) == ("idle", [name])
            assert all(text.count(notice) == 1 for entry in fake.model_requests()[before:]
                       for text in user_texts(entry) if notice in text)
            # The delivery's log line follows its settled record: wait for the notifier to carry on.
            notifier.runs_on(passes=2)
            [gate] = return_gates(notifier.log)   # one delivery, by the gated first Return
            assert gate is not None
            print(f"pi: first Return {gate} ms after the paste")
        finally:
            notifier.stop()


def test_real_pi_submits_a_notice_that_arrives_after_compact_once(tmp_path, catalog):
    """After ``/compact`` pi's footer reads ``?/200k`` until its next reply
    (captures/pi/0.73.1/screens/compacted-empty); a notice written then is still pasted and
    submitted, and the model sees it in exactly one user turn."""
    with real_pi(tmp_path, catalog) as (seat, fake, socket, screen, keys):
        keys("-l", "hello there")
        keys("Enter")
        poll_for(lambda: "Hello from the fake model" in screen(), timeout=60, step=0.3, what="pi's first reply")
        keys("-l", "/compact")
        poll_for(lambda: "/compact" in screen(), timeout=10, step=0.2, what="/compact typed")
        keys("Enter")
        poll_for(lambda: "Compacted from" in screen() and "?/200k" in screen(), timeout=90, step=0.3,
                 what="the compacted conversation with the ?/200k footer")
        notifier = Notifier(catalog, "pi", socket, tmp_path / "state", retry_backoff=1.0)
        try:
            notifier.wait_started(timeout=20)
            before, name, notice = pi_notice_settles(seat, fake, tmp_path, catalog)
            poll_for(lambda: "%/200k" in screen(), timeout=60, step=0.3, what="pi's reply to the notice")
            notifier.runs_on(passes=3)
            record = json.loads(ownership_record(tmp_path / "state", catalog, "pi").read_text())
            assert (record["phase"], record["settled"]) == ("idle", [name])
            carrying = [entry for entry in fake.model_requests()[before:]
                        if any(notice in text for text in user_texts(entry))]
            # Each request replays the conversation; the notice is one user turn, pasted once.
            assert carrying and all([text.count(notice) for text in user_texts(entry) if notice in text] == [1]
                                    for entry in carrying)
            assert screen().count(notice) == 1
        finally:
            notifier.stop()


def test_real_omp_submits_a_ding_notice_to_the_model_once(tmp_path, catalog):
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
    socket_directory = Path(tempfile.mkdtemp(prefix="st2dl-", dir="/tmp"))
    socket = str(socket_directory / "s")
    with FakeModel() as fake:
        launcher = omp_launcher(lab, harness, configure_omp(lab, harness, fake))
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

            poll_for(lambda: all(marker in screen() for marker in IDLE_MARKERS), timeout=90, step=0.3,
                     what="omp's idle composer (the setup wizard skipped)")
            # The product's retry backoff, not a shortened one: omp ignores a Return until its
            # start-up lifts the composer's submit gate, seconds after the idle composer is drawn on
            # a loaded machine (tests/ding/test_omp_startup_gate_lab.py). A retry Return 1 s after
            # the first fell inside that gate too, and DING sends no third.
            notifier = Notifier(catalog, "omp", socket, tmp_path / "state",
                                retry_backoff=DELIVERY_RETRY_BACKOFF_SECONDS)
            notifier.wait_started(timeout=20)
            before = len(fake.model_requests())
            name = write_message(seat, "review the parser", sender="h.planner")
            notice = notice_text(name, "review the parser", "h.planner")
            poll_for(lambda: any(notice in text for entry in fake.model_requests()[before:]
                                 for text in user_texts(entry)),
                     timeout=60, step=0.3,
                     what=waiting_for("the notice in the fake model's request log", screen, notifier))
            poll_for(lambda: json.loads(ownership_record(tmp_path / "state", catalog, "omp").read_text())["settled"],
                     timeout=30, step=0.3, what="the notice settled")
            poll_for(lambda: "Hello from the fake model" in screen(), timeout=60, step=0.3, what='"Hello from the fake model" in screen()')
            record = json.loads(ownership_record(tmp_path / "state", catalog, "omp").read_text())
            assert (record["phase"], record["settled"]) == ("idle", [name])
            prompts = [text for entry in fake.model_requests()[before:] for text in user_texts(entry)
                       if notice in text]
            assert prompts and all(text.count(notice) == 1 for text in prompts)
            assert screen().count(notice) == 1  # one transcript row, nothing left in the composer
            # The delivery's log line follows its settled record: wait for the notifier to carry on.
            notifier.runs_on(passes=2)
            [gate] = return_gates(notifier.log)   # one delivery, by the gated first Return
            assert gate is not None
            print(f"omp: first Return {gate} ms after the paste")
        finally:
            if notifier is not None:
                notifier.stop()
            subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
            try:
                os.killpg(pane_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            shutil.rmtree(socket_directory, ignore_errors=True)
