"""Mail and logs are the owner's alone under umask 022, through the real CLI and a real `st2 up`
(process tier): an inbox message, its sent copy and its idempotency receipt, and the DING task's
log (which quotes the subject and sender), the DING service's and the seat host's logs — every
one 0600, in directories st2 creates 0700."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path

import pytest

from ding_support import poll_for
from seat_fleet_support import ding_pids, hello, standin_seats
from st2.ding import service_wire
from st2.seathost import wire
from supervisor_support import Fleet

pytestmark = pytest.mark.process


@pytest.fixture
def fleet():
    previous = os.umask(0o022)  # the common default: files 0644 unless st2 says otherwise
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2m-"))
    group = Fleet(base)
    try:
        yield group
    finally:
        group.cleanup()
        for path in (service_wire.socket_path(group.scope.directory), wire.socket_path(group.scope.directory)):
            answer = hello(path)
            if answer is not None:
                os.kill(answer["pid"], signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_mail_and_the_logs_that_quote_it_are_owner_only_under_umask_022(fleet):
    standin_seats(fleet, ["ann"])
    fleet.seat("bob", '    desired-state "suspended" reason="a sender"\n    argv "sleep" "600"')
    supervisor = fleet.up("--interval", "60s")
    try:
        poll_for(lambda: "ann" in ding_pids(fleet), timeout=60, what="ann's DING task")
        ding_log = fleet.catalog / "logs" / "h.ann.ding.log"
        # A first message, which DING may find at its start (a backlog notice quotes no subject);
        # once it has delivered, the next one is noticed on its own, subject and sender quoted.
        assert fleet.st2("message", "send", "h.ann", "--as", "h.bob", "-m", "first").returncode == 0
        poll_for(lambda: ding_log.exists() and "delivered" in ding_log.read_text(), timeout=60,
                 what="DING's first delivery")
        sent = fleet.st2("message", "send", "h.ann", "--as", "h.bob", "--subject", "private subject",
                         "-m", "a private body", "--idempotency-key", "k-1")
        assert sent.returncode == 0, sent.stderr
        poll_for(lambda: ding_log.exists() and "private subject" in ding_log.read_text(), timeout=60,
                 what=lambda: f"DING's log quoting the subject: {ding_log.read_text() if ding_log.exists() else ''}")
    finally:
        fleet.stop(supervisor)
    inbox = fleet.catalog / "agents" / "h" / "ann" / "resources" / "inbox"
    [message] = [path for path in inbox.iterdir() if "private body" in path.read_text()]
    [copy] = [path for path in (fleet.catalog / "agents" / "h" / "bob" / "resources" / "sent").iterdir()
              if path.name == message.name]
    receipts = [path for path in (fleet.catalog / "agents" / "h" / "ann" / "resources").rglob("*")
                if path.is_file() and "receipt" in str(path)]
    logs = fleet.catalog / "logs"
    files = {"message": message, "sent copy": copy, "DING log": ding_log, "seat host log": logs / "h.seat-host.log",
             "DING service log": logs / "h.ding-service.log", **{f"receipt {path.name}": path for path in receipts}}
    assert receipts, "the idempotency key's receipt"
    assert {name: oct(mode(path)) for name, path in files.items()} == {name: "0o600" for name in files}
    directories = {"logs": logs, "sent": copy.parent, "bus staging": fleet.catalog / ".st2" / "bus-staging"}
    assert {name: oct(mode(path)) for name, path in directories.items()} == {name: "0o700" for name in directories}
