"""Operator hooks cannot outgrow their bounds under a real `st2 up` (process tier): a hook's
stderr is read through a pipe and only its tail kept (no temp file, escapes escaped), a hook's
process group ends with the hook, with its timeout, with `st2 down` and with a SIGKILLed
supervisor, and a flapping seat's suppressed runs are one summary line."""

from __future__ import annotations

import os
import signal

import pytest

from events_support import HOST, journal_directory, state, supervised_seat, wait_for_events
from support import poll_for, run_st2

pytestmark = pytest.mark.process


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def notify_log(fleet) -> str:
    path = journal_directory(fleet) / "notify.log"
    return path.read_text() if path.exists() else ""


def hooks(fleet, *blocks: str) -> None:
    body = "".join(f'    notify {{\n        on "blocked"\n{block}    }}\n' for block in blocks)
    (fleet.catalog / "catalog.kdl").write_text(f"catalog {{\n{body}}}\n")
    validate = run_st2("--host", HOST, "validate", env=fleet.env)
    assert validate.returncode == 0, validate.stdout + validate.stderr


def files_open_under(pid: int, directory) -> list[str]:
    """What ``pid`` holds open under ``directory`` (an unlinked temp file reads ``… (deleted)``)."""
    found = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except FileNotFoundError:
            continue
        if target.startswith(str(directory)):
            found.append(target)
    return found


def private_tmp(fleet):
    """The supervisor's TMPDIR, empty: where a temp file of its hooks' stderr would land."""
    directory = fleet.base / "tmp"
    directory.mkdir()
    fleet.env["TMPDIR"] = str(directory)
    return directory


def test_a_hooks_stderr_is_drained_through_a_pipe_and_only_its_escaped_tail_is_logged(fleet):
    tmp = private_tmp(fleet)
    base = fleet.base
    # 64 MiB of stderr, then an escape sequence and a last line; then a hook that writes forever.
    hooks(fleet,
          '        command "head -c 67108864 /dev/zero >&2; printf \'\\\\033[2J\\\\033]0;owned\\\\007 red\\\\nlast words\\\\n\' >&2; '
          'exit 4"\n',
          f'        command "touch {base}/yes.started; exec yes st2 >&2"\n        timeout "3s"\n')
    seat = supervised_seat(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    poll_for(lambda: (base / "yes.started").exists(), "the endless writer's start")
    supervisor = fleet.supervisors[-1].pid
    assert files_open_under(supervisor, tmp) == [], "a hook's stderr went to a temp file"
    poll_for(lambda: "timed out" in notify_log(fleet), lambda: f"the timeout; log: {notify_log(fleet)}", timeout=20)
    assert list(tmp.iterdir()) == [] and files_open_under(supervisor, tmp) == []
    [failed, timed_out] = [line.split(" ", 1)[1] for line in notify_log(fleet).splitlines()]
    assert failed.startswith("catalog.kdl:2:5 (sh) for blocked h.a #1: failed (exit 4): …")
    assert failed.endswith("\\x1b[2J\\x1b]0;owned\\x07 red | last words [67108894 bytes of stderr; the last 200 characters shown]")
    assert timed_out == "catalog.kdl:6:5 (sh) for blocked h.a #1: timed out after 3s; killed its process group"
    for text in (notify_log(fleet), fleet.log()):
        assert "\x1b" not in text and "\x07" not in text
    assert f"notify: {failed}" in fleet.log()
    # The supervisor kept no more of it than the tail: its peak resident memory stayed small.
    with open(f"/proc/{supervisor}/status") as handle:
        peak_kib = int(next(line for line in handle if line.startswith("VmHWM:")).split()[1])
    assert peak_kib < 120 * 1024


def test_a_hooks_background_child_ends_with_the_hook(fleet):
    base = fleet.base
    hooks(fleet, f'        command "sleep 600 & echo $! > {base}/child.pid"\n')
    seat = supervised_seat(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    child = int(poll_for(lambda: (base / "child.pid").exists() and (base / "child.pid").read_text().strip(),
                         "the background child's pid"))
    poll_for(lambda: not alive(child), "the background child killed with its hook's group", timeout=10)
    assert notify_log(fleet) == ""  # the hook itself exited 0


@pytest.mark.parametrize("ending", ["st2 down", "SIGKILL"])
def test_a_running_hooks_group_ends_with_st2_down_and_with_a_killed_supervisor(fleet, ending):
    base = fleet.base
    hooks(fleet, f'        command "sleep 600 & echo $! > {base}/child.pid; echo $$ > {base}/hook.pid; wait"\n'
                 '        timeout "1h"\n')
    seat = supervised_seat(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    hook = int(poll_for(lambda: (base / "hook.pid").exists() and (base / "hook.pid").read_text().strip(), "the hook"))
    child = int((base / "child.pid").read_text())
    assert alive(hook) and alive(child)
    if ending == "st2 down":
        down = run_st2("--host", HOST, "down", env=fleet.env)
        assert down.returncode == 0, down.stderr
    else:
        supervisor = fleet.supervisors[-1]
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait(timeout=10)
    poll_for(lambda: not alive(hook) and not alive(child), f"the hook's group ended by {ending}", timeout=10)


def test_a_flapping_seat_journals_its_budget_and_its_suppressed_runs_are_one_summary_line(fleet):
    from events_support import journal_lines, suspended_seat

    base = fleet.base
    hooks(fleet, f'        command "echo $ST2_EVENT_SEAT $ST2_EVENT_SEQ >> {base}/runs"\n        rate-limit "1h"\n')
    other = suspended_seat(fleet, "b")
    state(other, "none")
    seat = supervised_seat(fleet)
    for number in range(20):
        state(seat, "human" if number % 2 == 0 else "none")
        wait_for_events(fleet, number + 1)
    held = "events: h.a blocked changed 20 times within 60s; its further changes are held"
    for number in range(200):  # as fast as this test can write them
        state(seat, "none" if number % 2 == 0 else "human")
    poll_for(lambda: held in fleet.log(), lambda: f"the held line; log:\n{fleet.log()}")
    state(other, "human")  # read after every write above: the other seat's event comes next
    poll_for(lambda: [line["seat"] for line in journal_lines(fleet)][20:] == ["h.b"],
             lambda: f"the other seat's event as #21; journal {[line['seq'] for line in journal_lines(fleet)]}")
    assert fleet.log().count(held) == 1
    poll_for(lambda: (base / "runs").exists() and len((base / "runs").read_text().splitlines()) == 2, "the two runs")
    assert notify_log(fleet) == ""  # nothing per suppressed run
    assert fleet.stop(fleet.supervisors[-1]) == 0
    assert (base / "runs").read_text() == "h.a 1\nh.b 21\n"
    [line] = notify_log(fleet).splitlines()
    assert line.split(" ", 1)[1] == "catalog.kdl:2:5: blocked h.a: 19 runs suppressed (#2-#20; rate-limit 3600s per seat and kind)"
    assert fleet.log().count("notify:") == 1
