"""The Claude wrapper's slim anchor (st2/drivers/anchor.py, st2/drivers/session_anchor.py): while
Claude lives the wrapper process is a bare ``python -S -I`` importing only built-in modules, and
every record it owes is still written — by the full wrapper it execs back into. Real processes
around a stand-in `claude`; tests poll for observable progress."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import make_seat, poll_for, without_guide
from test_session import finish, state   # the wrapper tests' own helpers (this folder is on sys.path)

from st2.drivers import session_anchor
from st2.drivers.session_anchor import ANCHOR_FILE, MalformedContinuation, decode, encode_state

PSS_BOUND_KIB = 5 * 1024   # measured 2.8 MiB (ten side by side); the resident wrapper is 11-12 MiB


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def anchored(pid: int) -> bool:
    words = cmdline(pid)
    return words[1:4] == ["-S", "-I", "-c"] and len(words) > 5 and words[5] == str(ANCHOR_FILE)


def pss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    raise AssertionError("no Pss line")


def stand_in(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n" f"echo $$ > '{tmp_path}/pid'\n" + body)
    script.chmod(0o755)
    return script


def start(catalog: Path, script: Path, tmp_path: Path, **extra: str) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST2_CLAUDE_", "ST_AGENT"))}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env.update(extra)
    return subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "claude-session", "--identity",
         "host.worker", "--runtime-id", "host.worker", "--", str(script)],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def presence_stamp(seat) -> str | None:
    try:
        return (seat.directory / "status").read_text().splitlines()[1]
    except (OSError, IndexError):
        return None


@pytest.mark.process
def test_while_claude_lives_the_wrapper_is_the_slim_anchor_and_its_exit_is_recorded(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = stand_in(tmp_path, f"echo up > '{tmp_path}/up'\nwhile [ ! -e '{tmp_path}/go' ]; do sleep 0.05; done\n"
                      "exit 3\n")
    wrapper = start(catalog, script, tmp_path)
    try:
        poll_for(lambda: anchored(wrapper.pid) and (tmp_path / "up").exists(),
                 lambda: f"the anchor (cmdline {cmdline(wrapper.pid)})")
        assert pss_kib(wrapper.pid) < PSS_BOUND_KIB
        assert state(seat)[1] is None   # the claim stands: no terminal record yet
        # Claude is still the wrapper's own child: the exec kept the PID, and the parent.
        harness = int((tmp_path / "pid").read_text())
        assert Path(f"/proc/{harness}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(wrapper.pid)
        (tmp_path / "go").touch()
        assert finish(wrapper) == 3
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
    assert state(seat) == ("ended", "exit 3")
    assert wrapper.stderr.read() == b""


@pytest.mark.process
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_while_anchored_ends_with_claudes_real_exit(catalog, tmp_path, number) -> None:
    seat = make_seat(catalog)
    wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path)
    poll_for(lambda: anchored(wrapper.pid), "the anchor")
    os.killpg(wrapper.pid, number)
    assert finish(wrapper) == 128 + number
    assert state(seat) == ("ended", f"signal {int(number)}")


@pytest.mark.process
def test_a_claude_ignoring_sigterm_while_anchored_gets_the_cover_then_sigkill(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    script = stand_in(tmp_path, f"trap '' TERM HUP\necho up > '{tmp_path}/up'\nwhile :; do sleep 0.2; done\n")
    wrapper = start(catalog, script, tmp_path)
    poll_for(lambda: anchored(wrapper.pid) and (tmp_path / "up").exists(), "the anchor and the stand-in's trap")
    os.killpg(wrapper.pid, signal.SIGTERM)
    assert finish(wrapper) == 128 + signal.SIGKILL
    assert state(seat) == ("ended", "signal 9")


@pytest.mark.process
def test_ctrl_c_never_ends_the_anchor(catalog, tmp_path) -> None:
    # SIGINT (2) is taken before SIGTERM (15): an anchor that ended on ^C would exit 130 with no
    # terminal record instead of running the stop.
    seat = make_seat(catalog)
    wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path)
    poll_for(lambda: anchored(wrapper.pid), "the anchor")
    os.kill(wrapper.pid, signal.SIGINT)
    os.killpg(wrapper.pid, signal.SIGTERM)
    assert finish(wrapper) == 128 + signal.SIGTERM
    assert state(seat) == ("ended", "signal 15")


@pytest.mark.process
def test_without_a_seat_host_the_refresh_goes_on_through_the_full_wrapper(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path,
                    **{session_anchor.REFRESH_TEST_ENV: "0.5"})
    try:
        poll_for(lambda: anchored(wrapper.pid), "the anchor")
        seen = {presence_stamp(seat)}
        for _ in range(3):   # each refresh is a new, strictly later stamp, and the anchor comes back
            seen.add(poll_for(lambda: presence_stamp(seat) not in seen and presence_stamp(seat),
                              "a presence refresh"))
            poll_for(lambda: anchored(wrapper.pid), "the anchor again")
        assert state(seat)[1] is None   # the claim stands: no terminal record yet
        os.killpg(wrapper.pid, signal.SIGTERM)
        assert finish(wrapper) == 128 + signal.SIGTERM
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
    assert state(seat) == ("ended", "signal 15")


@pytest.mark.process
def test_a_malformed_continuation_is_said_and_the_wrapper_stays_resident(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = start(catalog, stand_in(tmp_path, "exit 4\n"), tmp_path,
                    **{session_anchor.CONTINUATION_ENV: "reaped 0 {\"pid\":1}"})
    assert finish(wrapper) == 4
    assert state(seat) == ("ended", "exit 4")
    assert b"is not a continuation the anchor writes; starting as a new session and staying resident" in (
        wrapper.stderr.read())


def test_only_the_continuations_the_anchor_writes_are_accepted() -> None:
    state_words = encode_state(4242, "4242-1-abc", 3, "resuming", "s-1")
    assert state_words == '{"pid":4242,"token":"4242-1-abc","seq":3,"start":"resuming","resumeId":"s-1"}'
    assert decode("reaped -15 " + state_words)[:5] == ("reaped", -15, None, None, 4242)
    assert decode("stopping 1 12.5 " + state_words)[:4] == ("stopping", None, 1, 12.5)
    assert decode("refresh " + state_words)[5:] == ("4242-1-abc", 3, "resuming", "s-1")
    for raw in ("reaped x " + state_words, "stopping 9 1.0 " + state_words, "stopping 15 nan " + state_words,
                "refresh", "refresh {}", "exit 0 " + state_words, "reaped 0 not-json",
                "refresh " + encode_state(1, "t", 0, None, None), "refresh " + encode_state(9, "", 0, None, None),
                "refresh " + encode_state(9, "t", 0, "maybe", None)):
        with pytest.raises(MalformedContinuation):
            decode(raw)


def start_host(scope: Path) -> subprocess.Popen:
    from support import REPO

    with open(scope / "host.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "st2", "seat-host", "--scope-directory", str(scope)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
    poll_for(lambda: (hello(scope) or {}).get("pid") == process.pid, "the seat host to answer")
    return process


def hello(scope: Path) -> dict | None:
    from st2.seathost import wire

    try:
        return wire.request(wire.socket_path(scope), {"op": "hello"}, timeout=1.0)
    except OSError:
        return None


def kept(scope: Path) -> list[dict]:
    return (hello(scope) or {}).get("kept", [])


@pytest.mark.process
def test_the_seat_host_keeps_the_anchored_session_and_a_host_sigkill_never_stops_the_refresh(catalog, tmp_path):
    from st2.runtime.scope import RuntimeScope

    seat = make_seat(catalog)
    state_home = Path(tempfile.mkdtemp(prefix="st2a", dir="/tmp"))   # a socket path within sun_path
    scope = RuntimeScope(catalog, "host", state_home / "st2").directory
    scope.mkdir(parents=True)
    hosts = [start_host(scope)]
    wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path, XDG_STATE_HOME=str(state_home),
                    **{session_anchor.REFRESH_TEST_ENV: "0.5"})
    try:
        poll_for(lambda: anchored(wrapper.pid), "the anchor")
        # The host serves the refresh for the registrant (the wrapper's own PID)...
        poll_for(lambda: [(entry["pid"], entry["refreshes"] >= 2) for entry in kept(scope)] == [(wrapper.pid, True)],
                 lambda: f"the host to keep the session ({hello(scope)})")
        assert anchored(wrapper.pid)
        # ...and once the host is SIGKILLed and none answers, the refresh goes on without it.
        hosts[0].kill()
        hosts[0].wait()
        seen = {presence_stamp(seat)}
        for _ in range(2):
            seen.add(poll_for(lambda: presence_stamp(seat) not in seen and presence_stamp(seat), "a presence refresh"))
        poll_for(lambda: anchored(wrapper.pid), "the anchor again")
        # A new host: the anchor registers with it again.
        hosts.append(start_host(scope))
        poll_for(lambda: [(entry["pid"], entry["refreshes"] >= 1) for entry in kept(scope)] == [(wrapper.pid, True)],
                 lambda: f"the anchor to register again ({hello(scope)})")
        os.killpg(wrapper.pid, signal.SIGTERM)
        assert finish(wrapper) == 128 + signal.SIGTERM
        poll_for(lambda: kept(scope) == [], "the registration to end with the wrapper")
        assert state(seat) == ("ended", "signal 15")
        # A wrapper killed outright (no code of its own runs) ends its registration too.
        wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path, XDG_STATE_HOME=str(state_home))
        poll_for(lambda: [entry["pid"] for entry in kept(scope)] == [wrapper.pid], "the next wrapper kept")
        os.killpg(wrapper.pid, signal.SIGKILL)
        wrapper.wait()
        poll_for(lambda: kept(scope) == [], "the registration to end with the killed anchor")
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
            wrapper.wait()
        for host in hosts:
            if host.poll() is None:
                host.kill()
            host.wait()
        shutil.rmtree(state_home, ignore_errors=True)


UNTIL_ANCHORED = "while ! tr '\\0' ' ' < /proc/$PPID/cmdline | grep -q 'drivers/anchor.py'; do :; done\n"


@pytest.mark.process
def test_a_stop_arriving_as_the_wrapper_execs_into_the_anchor_is_not_lost(catalog, tmp_path) -> None:
    # The stand-in signals its parent the moment /proc shows the anchor's command line: inside the
    # exec, before the anchor's own first instruction. Only the mask the full wrapper set across
    # the exec keeps that TERM from killing the process with no terminal record.
    seat = make_seat(catalog)
    script = stand_in(tmp_path, "")
    script.write_text(  # bash builtins only: the signal lands within microseconds of the exec
        "#!/bin/bash\nwhile :; do { IFS= read -r -d '' a; IFS= read -r -d '' b; } < /proc/$PPID/cmdline\n"
        '  [ "$b" = "-S" ] && break\ndone\nkill -TERM $PPID\nexec sleep 60\n')
    wrapper = start(catalog, script, tmp_path)
    assert finish(wrapper) == 128 + signal.SIGTERM
    assert state(seat) == ("ended", "signal 15")


@pytest.mark.process
def test_a_resume_refused_while_anchored_falls_back_once_in_the_same_incarnation(catalog, tmp_path) -> None:
    import json

    from support import record
    from test_session_resume import DEAD, FRESH, HOOK_PAYLOAD, declare

    from st2.runtime import resumable_session

    seat = make_seat(catalog)
    declare(seat)
    script = stand_in(tmp_path, UNTIL_ANCHORED + (
        f"echo \"argv:$*\" >> '{tmp_path}/argv'\n"
        f'id=$(printf "%s%012d" {FRESH} $$)\n'
        f'for word; do case "$word" in --resume=*) id="${{word#--resume=}}";; esac; done\n'
        f'[ "$id" = "{DEAD}" ] && exit 1\n'
        f"printf '{HOOK_PAYLOAD}' \"$id\" | st2 driver claude-observe --catalog '{catalog}' --identity host.worker "
        "--event SessionStart\n"))
    store = resumable_session.SessionStore.of(catalog, "host", tmp_path / "state" / "st2")
    store.ensure()
    store.record("host.worker").write_bytes(resumable_session.SessionRecord(
        runtime_id="host.worker", agent="host.worker", harness="claude", incarnation="before",
        start="fresh", session_id=DEAD).to_json())
    wrapper = start(catalog, script, tmp_path)
    assert finish(wrapper) == 0
    # Both spawns ran under the anchor: the refusal was seen by the full wrapper it exec'd back into.
    assert without_guide((tmp_path / "argv").read_text()).splitlines() == [f"argv:--resume={DEAD}", "argv:"]
    fallback = json.loads(store.record("host.worker").read_text())
    assert (fallback["start"], fallback["resumedFrom"], [lost["sessionId"] for lost in fallback["lost"]]) == (
        "fallback", DEAD, [DEAD])
    assert fallback["incarnation"] == record(seat, "harness-state")["incarnation"]
    assert (record(seat, "driver-diagnostic")["stage"], record(seat, "harness-state")["exit"]) == ("resume", "exit 0")


@pytest.mark.process
def test_an_anchor_registers_itself_with_a_host_that_comes_up_after_it(catalog, tmp_path) -> None:
    # A 20 s refresh: the anchor checks for a host every 2 s and has no refresh to exec back for,
    # so the registration the host sees is the anchor's own (its image then maps _socket, which
    # the full wrapper's fresh anchor never loads).
    from st2.runtime.scope import RuntimeScope

    make_seat(catalog)
    state_home = Path(tempfile.mkdtemp(prefix="st2a", dir="/tmp"))
    scope = RuntimeScope(catalog, "host", state_home / "st2").directory
    scope.mkdir(parents=True)
    wrapper = start(catalog, stand_in(tmp_path, "exec sleep 60\n"), tmp_path, XDG_STATE_HOME=str(state_home),
                    **{session_anchor.REFRESH_TEST_ENV: "20"})
    host = None
    try:
        poll_for(lambda: anchored(wrapper.pid), "the anchor")
        assert "_socket" not in Path(f"/proc/{wrapper.pid}/maps").read_text()
        host = start_host(scope)
        poll_for(lambda: [entry["pid"] for entry in kept(scope)] == [wrapper.pid], "the anchor to register",
                 timeout=10)
        assert anchored(wrapper.pid) and "_socket" in Path(f"/proc/{wrapper.pid}/maps").read_text()
        os.killpg(wrapper.pid, signal.SIGTERM)
        assert finish(wrapper) == 128 + signal.SIGTERM
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
            wrapper.wait()
        if host is not None:
            host.kill()
            host.wait()
        shutil.rmtree(state_home, ignore_errors=True)
