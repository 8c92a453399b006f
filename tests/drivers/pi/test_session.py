"""The pi and omp wrappers (`st2 driver pi-session` / `omp-session`): the extension injected with
`-e`, the channel an inherited pipe (never a file in the catalog), frames applied to the seat's
records by the wrapper's own claimed writers, the last frames before `ended`, malformed frames a
bounded diagnostic, omp's minor-series gate — run as real processes around stand-in harnesses
that write frames to $ST2_CHANNEL_FD and marker files (tests poll for them; no bare sleeps)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from st2.bus.guide import guide_text
from support import poll_for
from support_channel import REPO, make_seat, record

from st2.drivers import lifecycle
from st2.drivers.pi.session import PiSession
from st2.records import status

POLL_TIMEOUT = 30.0
READING = '{"type":"context","event":"agent_end","reading":{"tokens":11442,"contextWindow":200000,' \
          '"percent":5.721,"model":"fake-claude","costUsd":0.0318},"compaction":null}'
IDLE = '{"type":"state","event":"agent_end","state":"idle","blockedOn":"none","ask":"none"}'
ACTIVE = '{"type":"state","event":"agent_start","state":"active","blockedOn":"none","ask":"none"}'


def stand_in(tmp_path: Path, name: str, body: str, version: str = "") -> Path:
    """A harness that records its argv, environment and open descriptors, then runs ``body``."""
    script = tmp_path / name
    script.write_text(
        "#!/bin/sh\n"
        + (f'if [ "$1" = --version ]; then echo "{version}"; exit 0; fi\n' if version else "")
        + f"printf '%s\\n' \"$@\" > '{tmp_path}/argv'\n"
        f"echo \"$ST2_CHANNEL_FD\" > '{tmp_path}/fd'\n"
        f"ls -l /proc/$$/fd/ > '{tmp_path}/descriptors'\n"
        "send() { printf '%s\\n' \"$1\" >&\"$ST2_CHANNEL_FD\"; }\n" + body)
    script.chmod(0o755)
    return script


def start_wrapper(catalog: Path, tmp_path: Path, verb: str, script: Path, *arguments: str) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST2_", "ST_AGENT"))}
    env |= {"ST_HOOKS": str(REPO / "hooks"), "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", verb, "--identity", "host.worker",
         "--runtime-id", "host.worker", "--", str(script), *arguments],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process: subprocess.Popen) -> int:
    try:
        return process.wait(timeout=POLL_TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def observed(seat):
    value = record(seat, "harness-state")
    return (value["state"], value.get("exit")) if value else None


@pytest.mark.process
def test_the_pi_wrapper_injects_the_extension_and_applies_the_channel_before_ended(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = stand_in(tmp_path, "pi", f"send '{ACTIVE}'\nsend '{READING}'\nsend '{IDLE}'\nexit 0\n")
    wrapper_process = start_wrapper(catalog, tmp_path, "pi-session", script, "--provider", "fake")
    assert finish(wrapper_process) == 0
    # The extension first, the declared arguments, then the bus guide in pi's system-prompt slot.
    assert (tmp_path / "argv").read_text() == "\n".join(
        ["-e", str(REPO / "hooks" / "pi-channel.ts"), "--provider", "fake", "--append-system-prompt", guide_text()]) + "\n"
    # The channel is an inherited pipe: nothing of it in the catalog, nothing on disk.
    descriptor = (tmp_path / "fd").read_text().strip()
    assert descriptor.isdigit()
    assert f" {descriptor} -> pipe:[" in (tmp_path / "descriptors").read_text()
    assert sorted(path.name for path in seat.directory.iterdir()) == [
        ".harness-context.lock", ".harness-state.lock", ".status.lock", "harness-context", "harness-state", "status"]
    context = record(seat, "harness-context")
    assert (context["harness"], context["usedTokens"], context["usedPercent"], context["model"]) == (
        "pi", 11442, 5.721, "fake-claude")
    final = record(seat, "harness-state")
    assert (final["state"], final["exit"], final["harness"], final["transitions"]) == ("ended", "exit 0", "pi", 3)
    assert context["incarnation"] == final["incarnation"]
    lines = (seat.directory / "status").read_text().splitlines()
    assert lines[0] == "available" and lines[1].startswith("v1 ")


@pytest.mark.process
def test_frames_follow_turns_while_the_harness_lives(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    go = tmp_path / "go"
    script = stand_in(tmp_path, "pi", f"send '{ACTIVE}'\nwhile [ ! -e '{go}' ]; do sleep 0.05; done\n"
                                      f"send '{IDLE}'\nwhile [ ! -e '{go}.2' ]; do sleep 0.05; done\n")
    process = start_wrapper(catalog, tmp_path, "pi-session", script)
    try:
        poll_for(lambda: observed(seat) == ("active", None), "active while the turn runs")
        go.touch()
        poll_for(lambda: observed(seat) == ("idle", None), "idle after the turn")
        Path(f"{go}.2").touch()
        assert finish(process) == 0
        assert observed(seat) == ("ended", "exit 0")
    finally:
        finish(process)


@pytest.mark.process
def test_a_malformed_frame_writes_nothing_and_leaves_one_bounded_diagnostic(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    flattened = READING.replace('"reading":{', "").replace('},"compaction"', ',"compaction"')
    script = stand_in(tmp_path, "pi", f"send '{READING}'\nsend '{flattened}'\nsend 'not json'\n"
                                      "printf 'a partial frame' >&\"$ST2_CHANNEL_FD\"\nexit 4\n")
    assert finish(start_wrapper(catalog, tmp_path, "pi-session", script)) == 4
    assert record(seat, "harness-context")["usedTokens"] == 11442
    log = tmp_path / "state" / "st2" / "channel" / "host.worker.log"
    reasons = [line.split(" ", 1)[1] for line in log.read_text().splitlines()]
    assert reasons == ["malformed frame dropped: a context frame carries reading and compaction",
                       "malformed frame dropped: not a JSON document",
                       "malformed frame dropped: a partial frame at the end of the channel"]
    assert observed(seat) == ("ended", "exit 4")


@pytest.mark.process
@pytest.mark.parametrize("version, admitted", [("omp/18.2.7", True), ("omp/18.3.0", False), ("no version", False)])
def test_the_omp_wrapper_launches_only_an_admitted_minor_series(catalog, tmp_path, version, admitted) -> None:
    """A refused build is the gate every gating driver has: the ``versionGate`` diagnostic, one
    PTY line naming both versions, exit 78, and omp never started."""
    seat = make_seat(catalog)
    script = stand_in(tmp_path, "omp", f"send '{READING}'\nexit 0\n", version=version)
    process = start_wrapper(catalog, tmp_path, "omp-session", script)
    code = finish(process)
    if admitted:
        assert code == 0
        assert (tmp_path / "argv").read_text().splitlines()[:2] == ["-e", str(REPO / "hooks" / "omp-channel.ts")]
        assert record(seat, "harness-context")["harness"] == "omp"
        assert observed(seat) == ("ended", "exit 0")
    else:
        assert code == 78
        assert not (tmp_path / "argv").exists()  # omp never started
        stderr = process.stderr.read().decode()
        diagnostic = record(seat, "driver-diagnostic")
        found = "18.3.0" if version == "omp/18.3.0" else None
        assert (diagnostic["driver"], diagnostic["stage"], diagnostic["reason"], diagnostic["source"],
                diagnostic.get("producerVersion"), diagnostic["support"]) == (
            "omp", "versionGate", "unsupportedVersion" if found else "versionProbeFailed", "versionProbe", found,
            "unsupported" if found else "unknown")
        if found:
            assert "st2 omp-session: omp 18.3.0 is not a supported version (supported: 18.2); refusing to drive it" \
                in stderr
        else:
            assert (f"st2 omp-session: {script} --version printed no omp version (exit 0); refusing to drive it "
                    "(supported: 18.2)") in stderr
        assert observed(seat) is None  # no claim: the gate refused before the session began
        assert record(seat, "harness-context") is None


@pytest.mark.process
def test_an_omp_build_admitted_unmeasured_runs_and_withholds_its_context(catalog, tmp_path) -> None:
    """The channel path of catalog.kdl's admit-unmeasured: an 18.3.0 omp outside the gate's series
    runs, its context frame publishes nothing, and the context stage names the build."""
    seat = make_seat(catalog)
    (catalog / "catalog.kdl").write_text('catalog {\n    admit-unmeasured "omp" "18.3.0"\n}\n')
    script = stand_in(tmp_path, "omp", f"send '{READING}'\nexit 0\n", version="omp/18.3.0")
    process = start_wrapper(catalog, tmp_path, "omp-session", script)
    assert finish(process) == 0
    assert ("st2 omp-session: omp 18.3.0 is not a measured build (measured: 18.2); admitted by catalog.kdl "
            "admit-unmeasured, so no context reading is published") in process.stderr.read().decode()
    assert record(seat, "harness-context") is None
    assert observed(seat) == ("ended", "exit 0")
    diagnostic = record(seat, "driver-diagnostic")
    assert (diagnostic["stage"], diagnostic["reason"], diagnostic["producerVersion"]) == (
        "context", "unmeasuredBuild", "18.3.0")


def test_presence_heartbeats_every_five_minutes_only_while_pi_lives(catalog, clock, monkeypatch) -> None:
    seat = make_seat(catalog)

    class Child:
        def __init__(self) -> None:
            self.polls = 0

        def poll(self):
            self.polls += 1
            return 0 if self.polls > 11 * 60 * 4 else None  # 11 simulated minutes of 0.25 s ticks

    run = PiSession(seat, seat.agent, ["pi"], clock, environment={"ST_HOOKS": str(REPO / "hooks")})
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: Child())
    stamps = []
    real_refresh = status.refresh
    monkeypatch.setattr(lifecycle.status, "refresh",
                        lambda directory, clock_: stamps.append(clock_.wall_ms()) or real_refresh(directory, clock_))
    start_ms = clock.wall_ms()
    assert run.run() == 0
    assert [round((stamp - start_ms) / 60000) for stamp in stamps] == [0, 5, 10]
    assert observed(seat) == ("ended", "exit 0")
    assert run.read_end is None and run.write_end is None  # both ends of the channel closed


def test_frames_left_in_the_pipe_when_the_harness_exits_land_before_ended(catalog, clock, monkeypatch) -> None:
    seat = make_seat(catalog)

    class ExitedAtOnce:
        """pi wrote its last frames and exited before the wrapper's loop first looked."""

        def __init__(self, argv, env, pass_fds):
            descriptor = os.dup(pass_fds[0])
            os.write(descriptor, f"{ACTIVE}\n{READING}\n{IDLE}\n".encode())
            os.close(descriptor)

        def poll(self):
            return 0

    run = PiSession(seat, seat.agent, ["pi"], clock, environment={"ST_HOOKS": str(REPO / "hooks")})
    monkeypatch.setattr(subprocess, "Popen", ExitedAtOnce)
    assert run.run() == 0
    assert record(seat, "harness-context")["usedTokens"] == 11442
    final = record(seat, "harness-state")
    assert (final["state"], final["exit"], final["transitions"]) == ("ended", "exit 0", 3)


@pytest.mark.process
def test_a_full_channel_drops_frames_and_never_stalls_the_harness(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = tmp_path / "pi"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, pathlib, sys, time\n"
        f"here = pathlib.Path('{tmp_path}')\n"
        "descriptor = int(os.environ['ST2_CHANNEL_FD'])\n"
        "(here / 'ready').touch()\n"
        "while not (here / 'go').exists(): time.sleep(0.02)\n"
        f"line = b'{ACTIVE}' + b'\\n'\n"
        "sent = dropped = 0\n"
        "for _ in range(5000):  # 500 KiB against a 64 KiB pipe nobody is reading\n"
        "    try:\n"
        "        os.write(descriptor, line); sent += 1\n"
        "    except BlockingIOError:\n"
        "        dropped += 1\n"
        "(here / 'done').write_text(f'{sent} {dropped}')\n"
        "while not (here / 'exit').exists(): time.sleep(0.02)\n")
    script.chmod(0o755)
    process = start_wrapper(catalog, tmp_path, "pi-session", script)
    try:
        poll_for(lambda: (tmp_path / "ready").exists(), "the stand-in")
        os.kill(process.pid, signal.SIGSTOP)  # the wrapper reads nothing while the harness writes
        try:
            (tmp_path / "go").touch()
            sent, dropped = map(int, poll_for(lambda: (tmp_path / "done").exists() and (tmp_path / "done").read_text(),
                                              "the harness to finish writing while the wrapper is stopped", 20).split())
        finally:
            os.kill(process.pid, signal.SIGCONT)
        assert dropped > 0 and sent + dropped == 5000 and sent * len(ACTIVE) < 128 * 1024
        poll_for(lambda: observed(seat) == ("active", None), "the frames that fit, applied")
        (tmp_path / "exit").touch()
        assert finish(process) == 0
        assert observed(seat) == ("ended", "exit 0")
    finally:
        finish(process)
