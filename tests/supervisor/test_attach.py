from __future__ import annotations

import pytest

pytestmark = pytest.mark.process


def test_attach_without_a_running_pty_task_says_so(fleet):
    fleet.seat("one", '    argv "sleep" "600"')
    result = fleet.st2("attach", "one")
    assert result.returncode == 1
    assert "no running PTY task h.one" in result.stderr


def test_attach_execs_tmux_on_the_seats_own_socket(fleet):
    fleet.seat("one", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    # Without a terminal tmux refuses to attach, which shows it was exec'd against the socket
    # that answers for this seat (a wrong socket would report "no server running").
    result = fleet.st2("attach", "one")
    assert "not a terminal" in result.stderr, result.stderr
