"""The built-in provider runtime as a real process (``st2 resource-runtime file``): Hello with a
fresh registration, one result per Observe, Unchanged only for facts it published itself, an
Observe for another registration ignored, a new connection replacing the old."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from st2.resources import protocol
from support import REPO, poll_for, st2_env

pytestmark = pytest.mark.process


@pytest.fixture
def runtime(tmp_path: Path):
    path = tmp_path / "r" / "h.w.resource-file"
    process = subprocess.Popen([sys.executable, "-m", "st2", "resource-runtime", "file"], cwd=REPO,
                               env=st2_env(ST2_RESOURCE_SOCKET=str(path)), stderr=subprocess.PIPE,
                               start_new_session=True)
    poll_for(path.exists, "the runtime's socket")
    yield path
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def connect(path: Path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(path))
    reader = sock.makefile("rb")
    return sock, reader, protocol.decode_hello(reader.readline())


def test_the_runtime_answers_each_observe_once_and_remembers_what_it_published(runtime, tmp_path: Path) -> None:
    document = tmp_path / "now.md"
    document.write_text("one\n")
    sock, reader, hello = connect(runtime)
    assert (hello.scheme, hello.capabilities) == ("file", ("demand",))

    def observe(watermark: int, registration: str = hello.registration) -> None:
        sock.sendall(protocol.encode_observe(protocol.Observe(watermark, "h.w", "now", registration,
                                                              f"file://{document}", {"path": str(document)})))

    observe(1)
    first = protocol.decode_result(reader.readline())
    assert (first.kind, first.watermark, first.facts["content"]) == ("Published", 1, "one\n")
    observe(2, registration="someone-else")                     # ignored: no answer
    observe(3)
    assert protocol.decode_result(reader.readline())[:2] == ("Unchanged", 3)
    document.write_text("two\n")
    observe(4)
    assert protocol.decode_result(reader.readline()).facts["content"] == "two\n"
    replacement, replacement_reader, again = connect(runtime)   # a restarted supervisor's connection
    assert again.registration == hello.registration
    assert reader.readline() == b""                             # the old connection was closed
    replacement.sendall(protocol.encode_observe(protocol.Observe(5, "h.w", "now", again.registration,
                                                                 f"file://{document}", {"path": str(document)})))
    assert protocol.decode_result(replacement_reader.readline())[:2] == ("Unchanged", 5)
    sock.close()
    replacement.close()
