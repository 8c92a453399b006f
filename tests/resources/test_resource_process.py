"""Resource observation under a real `st2 up`: real provider runtimes as host tasks (the built-in
ones forked by the seat host, or spawned with ``ST2_SEAT_HOST=off``), a real git repository, real
signals (process tier)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from support import exits_within
from supervisor_support import poll_for
from st2.resources import demand, state
from st2.runtime import layout
from st2.seathost import wire

pytestmark = pytest.mark.process

SEAT = 'command "sleep 1000"\n'


def git(directory: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-C", str(directory), *arguments], check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "st2", "GIT_AUTHOR_EMAIL": "st2@example.invalid",
                               "GIT_COMMITTER_NAME": "st2", "GIT_COMMITTER_EMAIL": "st2@example.invalid"}).stdout


def record(fleet, binding: str):
    return state.read_file(fleet.catalog / "agents" / "h" / "w", "h.w", binding)


def refresh(fleet, binding: str, wait: str = "15s") -> dict:
    result = fleet.st2("agent", "resource", "refresh", "w", binding, "--wait", wait, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_git_binding_follows_real_commits_through_demanded_refreshes(fleet) -> None:
    repository = fleet.base / "repo"
    git(fleet.base, "init", "-q", "-b", "main", str(repository))
    git(repository, "commit", "-q", "--allow-empty", "-m", "one")
    (fleet.catalog / "catalog.kdl").write_text('catalog {\n    resource-provider "git" { interval "1h" }\n}\n')
    fleet.seat("w", SEAT + f'resource "repo" uri="git://{repository}"')
    fleet.up()
    first = poll_for(lambda: record(fleet, "repo"), "the first observation")
    assert first.facts["head"] == git(repository, "rev-parse", "HEAD").strip() and first.revision == 1
    tasks = {task["runtimeId"]: task for task in fleet.tasks()["tasks"]}
    assert tasks["h.w.resource-git"]["runtime"]["state"] == "running"
    for message in ("two", "three"):
        git(repository, "commit", "-q", "--allow-empty", "-m", message)
        receipt = refresh(fleet, "repo")
        head = git(repository, "rev-parse", "HEAD").strip()
        assert (receipt["state"], receipt["result"]) == ("closed", "Published")
        assert record(fleet, "repo").facts["head"] == head and record(fleet, "repo").revision == receipt["revision"]
    assert record(fleet, "repo").revision == 3
    unchanged = refresh(fleet, "repo")
    assert (unchanged["result"], unchanged["revision"]) == ("Unchanged", 3)


def test_a_provider_killed_mid_observation_settles_failed_and_its_successor_publishes(fleet) -> None:
    flag, marker = fleet.base / "slow", fleet.base / "marker"
    command = f"if [ -e {flag} ]; then echo $$ > {marker}; sleep 60; fi; echo ok"
    (fleet.catalog / "catalog.kdl").write_text(
        'catalog {\n    resource-provider "cmd" { interval "1h"; timeout "50s" }\n'
        f'    resource-command "probe" {{ argv "sh" "-c" "{command}" }}\n}}\n')
    fleet.seat("w", SEAT + 'resource "probe" uri="cmd:probe"')
    fleet.up()
    poll_for(lambda: record(fleet, "probe"), "the first observation")
    flag.write_text("")
    pending = refresh(fleet, "probe", wait="0s")
    assert pending["state"] == "pending"
    poll_for(marker.exists, "the command to start")
    runtime = fleet.record("h.w.resource-cmd")
    os.kill(runtime.pid, signal.SIGKILL)
    try:
        os.killpg(int(marker.read_text()), signal.SIGKILL)   # the orphaned command's own group
    except ProcessLookupError:
        pass
    flag.unlink()
    queue = layout.resource_demand(fleet.scope.directory, "h.w", "probe")
    closed = poll_for(lambda: (receipt := demand.read_receipt(queue, "h.w", "probe", pending["demand"])).state
                      == "closed" and receipt, "the demand's receipt")
    assert (closed.result, closed.generation) == ("Failed", 1)
    assert "went away" in closed.reason
    failing = record(fleet, "probe")
    assert failing.last_failure.kind == "provider-exited" and failing.facts == {"exitCode": 0, "stdout": "ok\n"}
    poll_for(lambda: fleet.record("h.w.resource-cmd").pid != runtime.pid, "the restarted runtime")
    receipt = refresh(fleet, "probe")
    assert (receipt["result"], receipt["generation"]) == ("Published", 2)   # a new runtime remembers nothing
    assert record(fleet, "probe").generation == 2 and record(fleet, "probe").last_failure is None


def test_a_supervisor_sigkill_keeps_the_runtime_and_its_generation_and_queued_demand(fleet) -> None:
    document = fleet.base / "now.md"
    document.write_text("one\n")
    (fleet.catalog / "catalog.kdl").write_text('catalog {\n    resource-provider "file" { interval "1h" }\n}\n')
    fleet.seat("w", SEAT + f'resource "now" uri="file://{document}"')
    supervisor = fleet.up()
    poll_for(lambda: record(fleet, "now"), "the first observation")
    runtime = fleet.record("h.w.resource-file")
    fleet.stop(supervisor, signal.SIGKILL)
    document.write_text("two\n")
    pending = refresh(fleet, "now", wait="0s")                  # queued while no supervisor runs
    assert pending["state"] == "pending"
    fleet.up()
    queue = layout.resource_demand(fleet.scope.directory, "h.w", "now")
    closed = poll_for(lambda: (receipt := demand.read_receipt(queue, "h.w", "now", pending["demand"])).state
                      == "closed" and receipt, "the queued demand's receipt")
    assert (closed.result, closed.generation, closed.revision) == ("Published", 1, 2)
    assert fleet.record("h.w.resource-file").pid == runtime.pid   # adopted, not relaunched
    assert "adopted h.w.resource-file" in fleet.log()
    assert record(fleet, "now").facts["content"] == "two\n"


LIAR = '''
import os, socket, sys
sys.path.insert(0, {repo!r})
from st2.resources import protocol
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
path = os.environ["ST2_RESOURCE_SOCKET"]
os.makedirs(os.path.dirname(path), exist_ok=True)
listener.bind(path); listener.listen(1)
count = 0
while True:
    connection, _ = listener.accept()
    connection.sendall(protocol.encode_hello(protocol.Hello("lie", "liar-%d" % os.getpid(), ("demand",))))
    for line in connection.makefile("rb"):
        observe = protocol.decode_observe(line)
        count += 1
        def result(kind, facts=None, watermark=observe.watermark):
            return protocol.encode_result(protocol.Result(kind, watermark, observe.owner, observe.binding,
                                                          observe.registration, facts, None))
        if count == 1:
            connection.sendall(result("Published", {{"n": 1}})[:-2] + b',"hostDigest":"sha256:' + b"0" * 64 + b'"}}\\n')
        elif count == 2:
            connection.sendall(result("Published", {{"n": 2}}) + result("Published", {{"n": 666}}))
        else:
            connection.sendall(result("Published", {{"n": 777}}, watermark=observe.watermark + 1)
                               + result("Published", {{"n": 3}}))
'''


def test_a_lying_external_provider_is_refused_and_logged_under_st2_up(fleet) -> None:
    script = fleet.base / "liar.py"
    script.write_text(LIAR.format(repo=str(Path(__file__).resolve().parents[2])))
    (fleet.catalog / "catalog.kdl").write_text(
        f'catalog {{\n    resource-provider "lie" {{ argv "{sys.executable}" "{script}"; capability "demand"; '
        'interval "1h" }\n}\n')
    fleet.seat("w", SEAT + 'resource "x" uri="lie:anything"')
    fleet.up()
    first = poll_for(lambda: (current := record(fleet, "x")) and current.last_failure and current, "the refusal")
    assert first.last_failure.kind == "refused-output" and first.revision == 0
    second = refresh(fleet, "x")
    assert (second["result"], record(fleet, "x").facts) == ("Published", {"n": 2})
    third = refresh(fleet, "x")
    assert (third["result"], record(fleet, "x").facts, record(fleet, "x").revision) == ("Published", {"n": 3}, 2)
    log = fleet.log()
    assert "carries fields it may not: hostDigest" in log
    assert log.count("no such open observation") == 2, log   # the second result, the wrong watermark


def test_a_crash_looping_provider_runtime_is_parked_and_its_binding_says_unavailable(fleet) -> None:
    (fleet.catalog / "catalog.kdl").write_text(
        'catalog {\n    resource-provider "broken" { argv "sh" "-c" "exit 3"; timeout "2s" }\n}\n')
    fleet.seat("w", 'restart { attempts 2; interval "60s"; mode "fail"; }\n' + SEAT
               + 'resource "x" uri="broken:thing"')
    fleet.up("--interval", "1s")
    parked = poll_for(lambda: next((row for row in fleet.tasks()["tasks"]
                                    if row["runtimeId"] == "h.w.resource-broken" and row["parked"]), None),
                      "the provider runtime to be parked", timeout=30)
    assert parked["parked"]["recovery"][-1] == "h.w.resource-broken"
    failing = poll_for(lambda: (current := record(fleet, "x")) and current.last_failure and current,
                       "the unavailable record", timeout=30)
    assert failing.last_failure.kind == "unavailable" and failing.revision == 0
    assert "h.w" in fleet.running()                                   # the agent itself keeps running


def observes_an_edit(fleet, document: Path) -> None:
    """The ``now`` binding's runtime publishes the document's first content, then an edit on demand."""
    first = poll_for(lambda: record(fleet, "now"), "the first observation", timeout=30)
    assert (first.facts["content"], first.revision) == ("one\n", 1)
    document.write_text("two\n")
    receipt = refresh(fleet, "now")
    assert (receipt["state"], receipt["result"], receipt["revision"]) == ("closed", "Published", 2)
    assert record(fleet, "now").facts["content"] == "two\n"


def file_seat(fleet) -> Path:
    document = fleet.base / "now.md"
    document.write_text("one\n")
    (fleet.catalog / "catalog.kdl").write_text('catalog {\n    resource-provider "file" { interval "1h" }\n}\n')
    fleet.seat("w", SEAT + f'resource "now" uri="file://{document}"')
    return document


def test_a_built_in_runtime_is_forked_by_the_seat_host_and_observes_a_file_binding(fleet) -> None:
    document = file_seat(fleet)
    supervisor = fleet.up()
    try:
        observes_an_edit(fleet, document)
        runtime = fleet.record("h.w.resource-file")
        process = psutil.Process(runtime.pid)
        host = wire.request(wire.socket_path(fleet.scope.directory), {"op": "hello"}, timeout=5.0)
        # The seat host's zygote forked it: its parent, and it still runs the host's command line.
        assert process.ppid() == host["zygote"] != supervisor.pid
        assert "seat-host" in process.cmdline() and "resource-runtime" not in process.cmdline()
        assert os.getpgid(runtime.pid) == os.getsid(runtime.pid) == runtime.pid   # its own session and group
        listening = layout.resource_socket(fleet.scope.directory, "h.w.resource-file")
        assert f"resource runtime file listening on {listening}" in Path(runtime.log).read_text()
    finally:
        try:
            wire.request(wire.socket_path(fleet.scope.directory), {"op": "retire"}, timeout=5.0)
        except OSError:
            pass


def test_without_a_seat_host_a_built_in_runtime_is_spawned_and_observes_a_file_binding(fleet) -> None:
    document = file_seat(fleet)
    supervisor = fleet.up(env={**fleet.env, "ST2_SEAT_HOST": "off"})
    observes_an_edit(fleet, document)
    process = psutil.Process(fleet.record("h.w.resource-file").pid)
    assert process.ppid() == supervisor.pid
    assert process.cmdline()[-2:] == ["resource-runtime", "file"]
    assert not wire.socket_path(fleet.scope.directory).exists()   # no seat host was started


BUILD = '''
import os, socket, sys, time
sys.path.insert(0, {repo!r})
from st2.resources import protocol
build, hold = {build}, {hold!r}
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
path = os.environ["ST2_RESOURCE_SOCKET"]
os.makedirs(os.path.dirname(path), exist_ok=True)
try:
    os.unlink(path)
except FileNotFoundError:
    pass
listener.bind(path); listener.listen(1)
while True:
    connection, _ = listener.accept()
    connection.sendall(protocol.encode_hello(protocol.Hello("prov", "build%d-%d" % (build, os.getpid()), ("demand",))))
    for line in connection.makefile("rb"):
        observe = protocol.decode_observe(line)
        if os.path.exists(hold):
            with open(hold + ".held", "w") as held:
                held.write(str(os.getpid()))
            time.sleep(120)   # this build holds the observation open when it is replaced
        connection.sendall(protocol.encode_result(protocol.Result(
            "Published", observe.watermark, observe.owner, observe.binding, observe.registration,
            {{"build": build}}, None)))
'''


def test_a_replaced_provider_build_is_replaced_in_one_pass_and_only_the_new_build_answers_after_it(fleet) -> None:
    hold = fleet.base / "hold"
    for build in (1, 2):
        (fleet.base / f"build{build}.py").write_text(
            BUILD.format(repo=str(Path(__file__).resolve().parents[2]), build=build, hold=str(hold)))

    def declare(build: int) -> None:
        (fleet.catalog / "catalog.kdl").write_text(
            f'catalog {{\n    resource-provider "prov" {{ argv "{sys.executable}" "{fleet.base}/build{build}.py"; '
            'capability "demand"; interval "1h"; timeout "100s" }\n}\n')

    declare(1)
    fleet.seat("w", SEAT + 'resource "x" uri="prov:thing"')
    fleet.up()
    first = poll_for(lambda: record(fleet, "x"), "the first observation")
    assert (first.facts, first.generation, first.revision) == ({"build": 1}, 1, 1)
    old = fleet.record("h.w.resource-prov")
    hold.write_text("")
    pending = refresh(fleet, "x", wait="0s")
    assert pending["state"] == "pending"
    poll_for((fleet.base / "hold.held").exists, "build 1 to hold the observation open")
    hold.unlink()
    declare(2)                                         # the operator installs build 2
    queue = layout.resource_demand(fleet.scope.directory, "h.w", "x")
    closed = poll_for(lambda: (receipt := demand.read_receipt(queue, "h.w", "x", pending["demand"])).state
                      == "closed" and receipt, "the held demand's receipt")
    # Either honest settlement: the old build's observation fails with it, or (when the pass that
    # replaces it briefly drops the binding's open observation) the queued demand is answered by
    # the new build. Never an answer from build 1 after its replacement.
    assert ((closed.result, closed.generation) == ("Failed", 1) and "went away" in closed.reason
            or (closed.result, closed.generation) == ("Published", 2)), closed
    new = poll_for(lambda: (current := fleet.record("h.w.resource-prov")) and current.pid != old.pid and current,
                   "the replacement")
    assert new.argv_digest != old.argv_digest and exits_within(old.pid, 10.0)   # ended (its parent may not have reaped it yet)
    receipt = refresh(fleet, "x")
    assert (receipt["result"], receipt["generation"]) in (("Published", 2), ("Unchanged", 2))
    final = record(fleet, "x")
    assert (final.facts, final.generation, final.revision, final.last_failure) == ({"build": 2}, 2, 2, None)
    assert f"replacing h.w.resource-prov[{old.pid}]: its declared argv changed" in fleet.log()
    assert refresh(fleet, "x")["generation"] == 2 and record(fleet, "x").revision == 2   # no second transition
