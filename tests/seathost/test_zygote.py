"""The zygote's protocol (st2.seathost.zygote): a malformed request gets one clear error line,
never a traceback, and the zygote keeps serving; a well-formed one forks the child and answers
its PID and start ticks; the zygote ends when the host's end of its socketpair closes."""

from __future__ import annotations

import json
import os
import time

import pytest

from st2.process import proc_stat
from st2.seathost import wire
from st2.seathost.zygote import Link

pytestmark = pytest.mark.process


def ran(words: list[str]) -> int:
    os.write(1, ("ran " + " ".join(words) + "\n").encode())   # fd 1 is the log the request carried
    return 0


def raw(link: Link, data: bytes, descriptors: tuple[int, ...] = ()) -> dict:
    import socket

    if descriptors:
        socket.send_fds(link.connection, [data], list(descriptors))
    else:
        link.connection.sendall(data)
    answer, _ = wire.receive(link.connection)
    return answer


def ended(pid: int, timeout: float = 10.0) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    return None


def test_malformed_requests_are_refused_with_one_line_and_a_fork_still_works(capfd):
    link = Link(ran, None)
    pid = link.start()
    try:
        link.connection.settimeout(10)
        assert raw(link, b"not json\n")["error"].startswith(
            "malformed zygote request: the seat host connection carried a line that is not JSON")
        assert raw(link, b"[1, 2]\n") == {
            "error": "malformed zygote request: the seat host connection carried a line that is not a JSON object"}
        assert raw(link, b'{"op": "spawn"}\n') == {"error": "unknown zygote request 'spawn'"}
        assert raw(link, b'{"op": "fork"}\n') == {"error": "a fork request carries 1 descriptor"}
        read_end, write_end = os.pipe()
        build = wire.build_id()
        bad = json.dumps({"op": "fork", "argv": "ding", "env": {}, "cwd": "/", "build": build}).encode() + b"\n"
        assert raw(link, bad, (write_end,)) == {"error": "malformed fork request"}
        other = json.dumps({"op": "fork", "argv": ["x"], "env": {}, "cwd": "/", "build": "other"}).encode() + b"\n"
        assert raw(link, other, (write_end,)) == {"error": "build", "build": build}
        session = json.dumps({"op": "fork-session", "argv": ["x"], "build": build}).encode() + b"\n"
        assert raw(link, session) == {"error": "this seat host forks no session wrappers"}

        answer = link.request({"op": "fork", "argv": ["ding", "h.ann"], "env": {"A": "1"}, "cwd": "/",
                               "build": build}, [write_end])
        os.close(write_end)
        assert sorted(answer) == ["pid", "startTicks"]
        stat = proc_stat.read(answer["pid"])
        assert stat is None or stat.start_ticks == answer["startTicks"]
        with os.fdopen(read_end, "rb") as log:
            assert log.read() == b"ran ding h.ann\n"   # the child ran and ended (the zygote reaped it)
    finally:
        link.lost()
    assert ended(pid) == 0, "the zygote must end when the host's end of its socketpair closes"
    assert "Traceback" not in capfd.readouterr().err


def test_when_no_zygote_can_be_forked_the_host_forks_the_child_itself_and_says_so(capfd, tmp_path):
    """The host's fallback (st2.seathost.server.SeatHost._fork): a zygote that is gone and cannot
    be forked again (its fork fails, EAGAIN) makes the host fork the child directly, as its own
    child (tracked and reaped by the host), and say both steps in its log."""
    import errno

    from st2.seathost.server import SeatHost

    host = SeatHost(tmp_path, ran)

    def unforkable() -> int:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    host.zygote.start = unforkable   # the zygote's own fork fails; the host's next fork does not
    read_end, write_end = os.pipe()
    try:
        answer = host._fork({"op": "fork", "argv": ["ding", "h.ann"], "env": {}, "cwd": "/",
                             "build": wire.build_id()}, [write_end])
    finally:
        os.close(write_end)
    assert sorted(answer) == ["pid", "startTicks"]
    assert host.children == {answer["pid"]} and host.remote == {}
    with os.fdopen(read_end, "rb") as log:
        assert log.read() == b"ran ding h.ann\n"
    deadline = time.monotonic() + 10
    while host.children and time.monotonic() < deadline:
        host._reap()   # the host, not a zygote, waits for it
        time.sleep(0.02)
    assert host.children == set()
    err = capfd.readouterr().err
    assert err == ("st2 seat-host: the zygote is gone; forking a new one\n"
                   "st2 seat-host: cannot fork a zygote ([Errno 11] Resource temporarily unavailable); "
                   "forking per-seat processes here\n"), err
