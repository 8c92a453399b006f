"""The tmux transport fails closed: a hung or failing tmux client is "not proven", never success,
and every call is bounded by a real outer timeout."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from st2.ding import terminal as terminal_module
from st2.ding.terminal import COMMAND_TIMEOUT_SECONDS, Terminal


@pytest.fixture
def fake_tmux(tmp_path: Path, monkeypatch):
    """A `tmux` on PATH that behaves as $FAKE_TMUX says: `hang` sleeps far past any timeout,
    `fail` exits 1."""
    directory = tmp_path / "bin"
    directory.mkdir()
    script = directory / "tmux"
    script.write_text('#!/bin/sh\ncase "$FAKE_TMUX" in hang) exec sleep 30;; *) exit 1;; esac\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{directory}:{os.environ['PATH']}")
    return monkeypatch


def test_the_outer_timeout_is_two_seconds():
    assert COMMAND_TIMEOUT_SECONDS == 2.0
    assert Terminal("/nonexistent").timeout == 2.0


@pytest.mark.process
@pytest.mark.parametrize("mode", ["hang", "fail"])
def test_a_hung_or_failing_tmux_proves_nothing(fake_tmux, mode):
    fake_tmux.setenv("FAKE_TMUX", mode)
    terminal = Terminal("/tmp/unused-socket", timeout=0.3)
    assert terminal.capture() is None
    assert terminal.alive() is False
    assert terminal.current_server() is None
    assert terminal.buffer_exists("st2-ding-x") is None
    assert terminal.load_and_look("st2-ding-x", "[DING] n") == (False, None)
    assert terminal.paste_and_observe("st2-ding-x", 2, 0.01) == (False, [])
    assert terminal.return_and_observe(1, 0.01) == (False, [])
    assert terminal.probes == 7


@pytest.mark.process
@pytest.mark.parametrize("transport", ["spawned", "control", "refused"])
def test_a_real_server_answers(tmp_path, transport):
    """The same answers whether each list is a spawned client or goes through a kept
    control-mode client (the DING service's pool), or the pool can open none (each list is then
    spawned)."""
    import subprocess
    import tempfile

    from st2.ding.control_client import ControlPool
    from test_control_client import open_here

    directory = Path(tempfile.mkdtemp(prefix="st2dt-", dir="/tmp"))
    socket = str(directory / "s")
    subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", terminal_module.SESSION,
                    "-x", "100", "-y", "10", "sleep", "30"], check=True, timeout=10)
    try:
        pool = {"control": ControlPool(opener=open_here), "spawned": None,
                "refused": ControlPool(opener=lambda path, session, timeout: None)}[transport]
        terminal = Terminal(socket, pool=pool)
        screen = terminal.capture()
        assert terminal.alive() is True
        assert (screen.cursor_x, screen.cursor_y, screen.width) == (0, 0, 100)
        assert terminal.current_server() == terminal.server_pid and terminal.server_pid > 0
        assert terminal.buffer_exists("st2-ding-x") is False
        loaded, look = terminal.load_and_look("st2-ding-x", "[DING] n")
        assert loaded is True and look.lines == screen.lines  # the look is the screen, unpasted
        assert terminal.buffer_exists("st2-ding-x") is True
        probes = terminal.probes
        pasted, screens = terminal.paste_and_observe("st2-ding-x", 2, 0.05)
        assert terminal.probes == probes + 1  # the paste and both observations: one client
        assert pasted is True and len(screens) == 2
        assert screens[1].lines[0].startswith("[DING] n")  # the pane's echo, between the looks
        assert terminal.buffer_exists("st2-ding-x") is False  # pasted and deleted in one command
        # A list stops at its first failing command: no buffer, no paste, no observation.
        assert terminal.paste_and_observe("st2-ding-x", 2, 0.01) == (False, [])
        sent, screens = terminal.return_and_observe(1, 0.05)
        assert sent is True and len(screens) == 1 and screens[0].cursor_y == 1
        # With a pool the first look opens the seat's client and goes through it, as every later
        # list does: no client is spawned for a list.
        assert terminal.spawned == (0 if transport == "control" else terminal.probes)
        if pool:
            assert pool.opened == (1 if transport == "control" else 0)
            pool.close_all()
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=10)
        subprocess.run(["rm", "-rf", str(directory)])
