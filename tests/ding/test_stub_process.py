"""A DING stub (st2.ding.stub) as a real process: with no service to be had at start (no seat
host, or a socket path past the sun_path bound) it serves its seat itself and says so once; a
DING service of another build is retired, never used, and a service of this build is started
through the real seat host and serves the seat."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from ding_support import REPO, make_seat, poll_for
from st2.ding import service_wire
from st2.seathost import wire

pytestmark = pytest.mark.process

STUB = """
import sys
from pathlib import Path
from st2.seathost import fork
fork.FORKED = True                     # what the seat host's fork sets in its child
fork.HOST_SCOPE = Path(sys.argv[1])
from st2.front.table import FORKED, route
sys.exit(route(["ding", "h.ann", "--socket", sys.argv[2], "--poll-interval", "0.2", "--trace-progress"], FORKED))
"""


def start_stub(base: Path, scope: Path) -> tuple[subprocess.Popen, Path]:
    catalog = base / "catalog"
    make_seat(catalog, "ann")
    log = base / "stub.log"
    environment = dict(os.environ, CATALOG=str(catalog), XDG_STATE_HOME=str(base / "state"))
    environment.pop("ST2_DING_TRACE_PROGRESS", None)
    with open(log, "ab") as handle:
        process = subprocess.Popen([sys.executable, "-c", STUB, str(scope), str(base / "no-terminal")],
                                   stdout=handle, stderr=subprocess.STDOUT, env=environment, cwd=REPO,
                                   start_new_session=True)
    return process, log


def stop(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=30)


def text(log: Path) -> str:
    return log.read_text() if log.exists() else ""


def test_with_no_seat_host_the_stub_serves_its_seat_itself_and_says_so_once(tmp_path):
    scope = tmp_path / "scope"
    scope.mkdir()
    process, log = start_stub(tmp_path, scope)
    try:
        poll_for(lambda: "st2 ding: progress passes=" in text(log), "the stub's own notifier loop", timeout=30)
        lines = text(log).splitlines()
        said = [line for line in lines if "no DING service can be had" in line]
        assert said == [f"st2 ding: no DING service can be had (the seat host on {scope}/seat-host.sock does not "
                        "answer ([Errno 2] No such file or directory)); SERVING h.ann MYSELF, in this process "
                        f"(pid {process.pid}), from its ownership record: delivery goes on, and this task now "
                        "costs a whole notifier's memory until it is restarted (`st2 doctor` names it: "
                        "ding-serves-itself)"], lines
        assert any(line.startswith("st2 ding: watching ") for line in lines)
    finally:
        assert stop(process) == 0
    assert "Traceback" not in text(log)


def test_a_socket_path_past_the_sun_path_bound_serves_itself(tmp_path):
    scope = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2stub-")) / ("s" * 100)
    scope.mkdir()
    process, log = start_stub(tmp_path, scope)
    try:
        poll_for(lambda: "st2 ding: progress passes=" in text(log), "the stub's own notifier loop", timeout=30)
        assert (f"st2 ding: no DING service can be had: its socket path {scope}/ding-service.sock exceeds the "
                f"108-byte sun_path bound; SERVING h.ann MYSELF") in text(log)
    finally:
        assert stop(process) == 0
        shutil.rmtree(scope.parent)


class OldService:
    """A DING service of another build on the scope's socket: it refuses this build's
    registrations and records a retire."""

    def __init__(self, scope: Path) -> None:
        self.path = service_wire.socket_path(scope)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen(8)
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            connection, _ = self.listener.accept()
            with connection:
                body, descriptors = wire.receive(connection)
                for descriptor in descriptors:
                    os.close(descriptor)
                self.requests.append(body.get("op"))
                if body.get("op") == "hello":
                    wire.send(connection, {"protocol": service_wire.PROTOCOL, "build": "sha256:old",
                                           "pid": os.getpid(), "listening": True, "serving": []})
                elif body.get("op") == "serve":
                    wire.send(connection, {"error": "build", "build": "sha256:old"})
                elif body.get("op") == "retire":
                    # Let go of the socket before answering: a real service holds its lifetime lock
                    # until it has, so its successor never binds first. Unlinked after the answer,
                    # a successor that bound meanwhile lost its socket (seen once at load 15).
                    self.path.unlink()
                    self.listener.close()
                    wire.send(connection, {"ok": True})
                    return


def test_a_service_of_another_build_is_retired_and_never_used(tmp_path):
    scope = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2stub-"))
    host_log = open(scope / "host.log", "ab")
    host = subprocess.Popen([sys.executable, "-m", "st2", "seat-host", "--scope-directory", str(scope)],
                            stdout=host_log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    host_log.close()
    service_pid = process = None
    try:
        poll_for(lambda: os.path.exists(wire.socket_path(scope)), "the seat host to listen", timeout=30)
        old = OldService(scope)
        process, log = start_stub(tmp_path, scope)

        def serving() -> dict | None:
            try:
                answer = wire.request(service_wire.socket_path(scope), {"op": "hello"}, timeout=2.0)
            except OSError:
                return None
            rows = answer.get("serving") or []
            return answer if answer.get("build") == wire.build_id() and rows and rows[0]["watch"] else None

        answer = poll_for(serving, lambda: (f"a service of this build serving the seat (old service saw "
                                            f"{old.requests}; the stub's log: {text(log)!r}; the seat host's: "
                                            f"{text(scope / 'host.log')!r})"), timeout=30)
        service_pid = answer["pid"]
        assert answer["serving"] == [{"target": "h.ann", "stub": process.pid, "watch": True}]
        assert old.requests[-1] == "retire" and "serve" in old.requests
        assert f"st2 ding: the DING service pid {os.getpid()} runs another build; retiring it" in text(log)
        assert "SERVING" not in text(log)
        assert stop(process) == 0
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=10)
        if service_pid is not None:
            os.kill(service_pid, signal.SIGKILL)
        host.kill()
        host.wait(timeout=10)
        shutil.rmtree(scope, ignore_errors=True)
