"""Fleet events end to end: a real `st2 up` journals each transition of its seats' records once,
a restatement or heartbeat never, and `st2 events` reads the journal (process tier)."""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest

from events_support import (EventsReader, publish, supervised_seat, context, diagnostic, journal_directory, journal_lines, kinds, now_ms,
                            state, suspended_seat, usage, wait_for_engine, wait_for_events, MINUTE_MS, HOST)
from support import poll_for, run_st2

pytestmark = pytest.mark.process


def test_each_kind_fires_once_for_its_transition_and_never_for_a_restatement_or_heartbeat(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    context(seat, 40.0, compactions=1)
    usage(fleet, "10")
    fleet.up("--interval", "30s")
    wait_for_engine(fleet)
    assert journal_lines(fleet) == []  # the first start is a baseline: no history invented

    expected = []

    def step(action, *events):
        action()
        expected.extend(events)
        wait_for_events(fleet, len(expected))
        assert kinds(fleet) == expected

    step(lambda: state(seat, "human"), ("blocked", "h.a", "none", "human"))
    # A heartbeat (same observation, new stamp) and a restatement are no event: the next
    # transition is the very next line.
    state(seat, "human")
    state(seat, "human", state_word="child")
    step(lambda: state(seat, "none"), ("blocked", "h.a", "human", "none"))
    step(lambda: context(seat, 85.0, compactions=1), ("context", "h.a", 40.0, 85.0))
    context(seat, 85.0, compactions=1)  # heartbeat
    context(seat, 91.0, compactions=1)  # still past the threshold
    # (The seat's next record write is read after these two: any event they caused comes first.)
    step(lambda: diagnostic(seat), ("diagnostic", "h.a", "absent", "failure"))
    diagnostic(seat)  # restated with a new observedAt
    step(lambda: (seat / "driver-diagnostic").unlink(), ("diagnostic", "h.a", "failure", "absent"))
    step(lambda: context(seat, 20.0, compactions=2),
         ("compaction", "h.a", 1, 2), ("context", "h.a", 91.0, 20.0))
    step(lambda: usage(fleet, "85"), ("pause", None, "OK", "PAUSE"))
    usage(fleet, "90")  # still PAUSE
    step(lambda: usage(fleet, "20"), ("pause", None, "PAUSE", "OK"))
    assert [line["seq"] for line in journal_lines(fleet)] == list(range(1, len(expected) + 1))

    blocked = journal_lines(fleet)[0]
    assert json.dumps(blocked, separators=(",", ":")) == (
        '{"schema":"st2.fleet-event.v1","seq":1,"kind":"blocked","seat":"h.a","from":"none","to":"human",'
        f'"observedAtMs":{blocked["observedAtMs"]},"evidence":{{"state":"active","ask":"permission",'
        f'"since":{blocked["evidence"]["since"]}}}}}')
    # `st2 events --json` prints the journal's lines as they are; the human form one per line.
    printed = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    assert printed.returncode == 0, printed.stderr
    assert [json.loads(line) for line in printed.stdout.splitlines()] == journal_lines(fleet)
    human = run_st2("--host", HOST, "events", "--since", str(journal_lines(fleet)[-2]["observedAtMs"]), env=fleet.env)
    assert [line.split(" ", 1)[1] for line in human.stdout.splitlines()][-2:] == [
        f"#{len(expected) - 1} pause fleet OK -> PAUSE (verdict={journal_lines(fleet)[-2]['evidence']['verdict']})",
        f"#{len(expected)} pause fleet PAUSE -> OK (verdict={journal_lines(fleet)[-1]['evidence']['verdict']})"]


def test_a_stale_record_is_one_stale_event_however_many_passes_see_it(fleet, listener):
    seat = suspended_seat(fleet, "a")
    fresh = suspended_seat(fleet, "b")
    state(seat, "none")
    state(fresh, "none")
    usage(fleet, "10")
    fleet.up("--interval", "1s")
    wait_for_engine(fleet)
    # Only once the baseline (every record fresh) is taken: a record written 15 minutes minus two
    # seconds ago, fresh for two more seconds. Written before the supervisor starts, a start-up
    # slower than those two seconds (a loaded machine) took it stale into the baseline, and a
    # baseline is no event.
    state(seat, "none", written_at_ms=now_ms() - 15 * MINUTE_MS + 2000)
    wait_for_events(fleet, 1)
    assert kinds(fleet) == [("stale", "h.a", "fresh", "stale")]
    assert journal_lines(fleet)[0]["evidence"] == {"record": "harness-state"}
    # Several more timer passes re-project the stale record; none repeats the event. The next
    # transition (seat b) is the very next line.
    # Re-reading the stale record — republished unchanged (each a re-projection of the seat),
    # and over four more timer passes — repeats nothing.
    stale_bytes = (seat / "harness-state").read_text()
    for _ in range(3):
        publish(seat / "harness-state", stale_bytes)
    seen = listener.passes()
    poll_for(lambda: listener.passes() >= seen + 4, "four more timer passes", timeout=30)
    assert kinds(fleet) == [("stale", "h.a", "fresh", "stale")]
    state(fresh, "human")
    wait_for_events(fleet, 2)
    assert kinds(fleet) == [("stale", "h.a", "fresh", "stale"), ("blocked", "h.b", "none", "human")]
    # A fresh record is the one transition back.
    state(seat, "none")
    wait_for_events(fleet, 3)
    assert kinds(fleet)[2] == ("stale", "h.a", "stale", "fresh")


def test_a_sigkilled_supervisor_resumes_the_journal_without_a_gap_or_a_duplicate(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    usage(fleet, "10")
    first = fleet.up()
    wait_for_engine(fleet)
    baseline = (journal_directory(fleet) / "state.json").read_bytes()
    state(seat, "human")
    wait_for_events(fleet, 1)
    context(seat, 90.0)
    wait_for_events(fleet, 2)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    # Killed between the journal append and the projection's publication: the state on disk
    # still is the baseline (seq 0) while the journal holds #1 and #2.
    (journal_directory(fleet) / "state.json").write_bytes(baseline)
    # A transition while no supervisor runs is observed by the next one, once.
    state(seat, "none")
    fleet.up()
    wait_for_events(fleet, 3)
    state(seat, "human")
    wait_for_events(fleet, 4)
    assert kinds(fleet) == [("blocked", "h.a", "none", "human"), ("context", "h.a", None, 90.0),
                            ("blocked", "h.a", "human", "none"), ("blocked", "h.a", "none", "human")]
    assert [line["seq"] for line in journal_lines(fleet)] == [1, 2, 3, 4]
    assert "events: journal resumed at #2 (2 line(s) past the saved projection replayed)" in fleet.log()


def test_two_followers_see_the_same_sequence(fleet):
    seats = [suspended_seat(fleet, name) for name in ("a", "b", "c")]
    for seat in seats:
        state(seat, "none")
    usage(fleet, "10")
    fleet.up()
    wait_for_engine(fleet)
    # --since before the first transition: a reader that starts after it still prints it (the
    # backlog), then follows; the second reader starts once the first transitions are journaled.
    since = now_ms()
    readers = [EventsReader(fleet, "--since", str(since))]
    try:
        state(seats[0], "human")
        wait_for_events(fleet, 1)
        readers.append(EventsReader(fleet, "--since", str(since)))
        for reader in readers:
            poll_for(lambda: reader.lines(), "the first followed event")
        # Each write is waited for: two writes of one record read in one pass are one state
        # (coalesced), which is the engine's contract, not what this test is about.
        for round_number in range(3):
            for seat in seats:
                state(seat, "none" if (round_number % 2 == 0) == (seat is seats[0]) else "human")
                wait_for_events(fleet, 2 + round_number * 3 + seats.index(seat))
        for reader in readers:
            poll_for(lambda: len(reader.lines()) >= 10, lambda: f"ten lines, have {reader.lines()}")
        journaled = [json.dumps(line, separators=(",", ":"), ensure_ascii=False) for line in journal_lines(fleet)]
        assert readers[0].lines() == readers[1].lines() == journaled
        assert [json.loads(line)["seq"] for line in journaled] == list(range(1, 11))
    finally:
        for reader in readers:
            reader.stop()


def test_a_torn_journal_tail_is_ignored_and_cut_before_the_next_append(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    usage(fleet, "10")
    supervisor = fleet.up()
    wait_for_engine(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    fleet.stop(supervisor)
    current = journal_directory(fleet) / "journal"
    whole = current.read_bytes()
    with open(current, "ab") as handle:  # a write cut short: no newline
        handle.write(b'{"schema":"st2.fleet-event.v1","seq":2,"kind":"blocked","seat":"h.a","fr')
    printed = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    assert printed.stdout == whole.decode()
    fleet.up()
    wait_for_engine(fleet)
    state(seat, "none")
    wait_for_events(fleet, 2)
    assert current.read_bytes().startswith(whole) and current.read_bytes().count(b"\n") == 2
    assert kinds(fleet) == [("blocked", "h.a", "none", "human"), ("blocked", "h.a", "human", "none")]
    assert [line["seq"] for line in journal_lines(fleet)] == [1, 2]


def test_without_a_journal_only_what_the_current_records_prove_is_printed(fleet):
    pinned = 1_788_000_100_000
    seat = suspended_seat(fleet, "a")
    quiet = suspended_seat(fleet, "b")
    state(seat, "human", written_at_ms=pinned - 4000, since_ms=pinned - 9000)
    context(seat, 85.5, compactions=2, observed_at_ms=pinned - 3000)
    state(quiet, "none", written_at_ms=pinned - 16 * MINUTE_MS)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(pinned)
    printed = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    assert printed.returncode == 0
    assert printed.stderr == ("st2 events: no event journal for h (`st2 up` writes it); "
                              "showing only what the current records prove\n")
    assert printed.stdout.splitlines() == [
        '{"schema":"st2.fleet-event.v1","seq":null,"kind":"blocked","seat":"h.a","from":null,"to":"human",'
        '"observedAtMs":1788000091000,"evidence":{"state":"active","ask":"permission","since":1788000091000}}',
        '{"schema":"st2.fleet-event.v1","seq":null,"kind":"compaction","seat":"h.a","from":null,"to":2,'
        '"observedAtMs":1788000096990,"evidence":{"lastCompactionMs":1788000096990,"lastCompactionTrigger":"auto"}}',
        '{"schema":"st2.fleet-event.v1","seq":null,"kind":"context","seat":"h.a","from":null,"to":85.5,'
        '"observedAtMs":1788000097000,"evidence":{"warnPercent":80.0,"recordObservedAtMs":1788000097000}}',
        '{"schema":"st2.fleet-event.v1","seq":null,"kind":"stale","seat":"h.b","from":null,"to":"stale",'
        '"observedAtMs":1788000100000,"evidence":{"record":"harness-state"}}',
        '{"schema":"st2.fleet-event.v1","seq":null,"kind":"usage-stale","seat":null,"from":null,"to":"STALE",'
        '"observedAtMs":1788000100000,"evidence":{"verdict":"usage-verdict: cannot read '
        f'{fleet.base}/usage/usage.txt width=2 -> STALE (never blocks delegation — re-read or refresh before '
        'trusting the number)"}}']
    since = run_st2("--host", HOST, "events", "--since", "1788000096000", env=fleet.env)
    assert [line.split(" ", 2)[2] for line in since.stdout.splitlines()] == [
        "compaction h.a - -> 2 (lastCompactionMs=1788000096990 lastCompactionTrigger=auto)",
        "context h.a - -> 85.5 (warnPercent=80 recordObservedAtMs=1788000097000)",
        "stale h.b - -> stale (record=harness-state)",
        f"usage-stale fleet - -> STALE (verdict=usage-verdict: cannot read {fleet.base}/usage/usage.txt width=2 -> "
        "STALE (never blocks delegation — re-read or refresh before trusting the number))"]


EVENT_LINE = ('{"schema":"st2.fleet-event.v1","seq":7,"kind":"blocked","seat":"h.a","from":"none","to":"human",'
              '"observedAtMs":1788000091000,"evidence":{"state":"active","ask":"permission","since":1788000091000}}\n')


def hostile_journal_run(fleet, plant) -> tuple:
    """`st2 events --json` without a journal, then with ``plant(journal path)`` done: both runs."""
    pinned = 1_788_000_100_000
    state(suspended_seat(fleet, "a"), "human", written_at_ms=pinned - 4000, since_ms=pinned - 9000)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(pinned)
    without = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    current = journal_directory(fleet) / "journal"
    current.parent.mkdir(parents=True, exist_ok=True)
    plant(current)
    return without, run_st2("--host", HOST, "events", "--json", env=fleet.env), current


def test_a_fifo_journal_is_named_never_waited_on_and_reads_as_no_journal(fleet):
    without, printed, current = hostile_journal_run(fleet, os.mkfifo)  # run_st2 times out on a wait
    assert printed.returncode == 0
    assert printed.stderr == (f"st2 events: the event journal {current} is a FIFO, not a regular file; it is not read\n"
                              "st2 events: no readable event journal for h; showing only what the current records prove\n")
    assert printed.stdout == without.stdout and '"kind":"blocked"' in printed.stdout


@pytest.mark.parametrize("target", ["/etc/passwd", "event-line"])
def test_a_symlinked_journal_is_named_and_never_followed(fleet, tmp_path, target):
    if target == "event-line":  # a well-formed journal elsewhere: followed, its event would print
        target = tmp_path / "elsewhere"
        target.write_text(EVENT_LINE)
    without, printed, current = hostile_journal_run(fleet, lambda path: path.symlink_to(target))
    assert printed.returncode == 0
    assert printed.stderr == (f"st2 events: the event journal {current} is a symlink; it is not read\n"
                              "st2 events: no readable event journal for h; showing only what the current records prove\n")
    assert printed.stdout == without.stdout and '"seq":7' not in printed.stdout


def test_a_refused_segment_beside_a_readable_one_is_named_and_the_readable_one_printed(fleet):
    def plant(current):
        (current.parent / "journal.1").write_text(EVENT_LINE)
        os.mkfifo(current)

    _, printed, current = hostile_journal_run(fleet, plant)
    assert printed.returncode == 0
    assert printed.stderr == f"st2 events: the event journal {current} is a FIFO, not a regular file; it is not read\n"
    assert printed.stdout == EVENT_LINE


def test_host_narrows_to_that_hosts_seats_as_st2_agents_does(fleet):
    pinned = 1_788_000_100_000
    local = suspended_seat(fleet, "a")
    remote = fleet.seat("r1", '    argv "sleep" "600"', host="r")
    state(local, "human", written_at_ms=pinned - 4000)
    state(remote, "human", written_at_ms=pinned - 2000)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(pinned)
    every = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    narrowed = run_st2("events", "--host", HOST, "--json", env=fleet.env)
    assert [(line["kind"], line["seat"]) for line in map(json.loads, every.stdout.splitlines())] == [
        ("blocked", "h.a"), ("blocked", "r.r1"), ("usage-stale", None)]
    assert [(line["kind"], line["seat"]) for line in map(json.loads, narrowed.stdout.splitlines())] == [
        ("blocked", "h.a"), ("usage-stale", None)]


def test_a_crash_looping_task_parks_once_and_unparking_clears_it_once(fleet):
    fixed, go = fleet.base / "fixed", fleet.base / "go"
    # The job crashes only once the engine has its baseline (a park before it would be history).
    fleet.seat("a", f'''    restart {{ attempts 1; interval "60s"; mode "fail"; }}
    argv "sleep" "600"
    exec "job" {{ argv "sh" "-c" "test -f {fixed} && exec sleep 600; while ! test -f {go}; do sleep 0.05; done; exit 3"; }}''')
    usage(fleet, "10")
    fleet.up("--interval", "1s")
    wait_for_engine(fleet)
    go.write_text("")
    [parked] = wait_for_events(fleet, 1)
    assert (parked["kind"], parked["seat"], parked["from"], parked["to"]) == ("parked", "h.a", None, "crash-loop")
    assert parked["evidence"] == {"task": "h.a.job", "reason": "exited 2 times within 60s (restart mode fail)",
                                  "parkedAtMs": parked["evidence"]["parkedAtMs"], "attempts": 2}
    fixed.write_text("")
    assert run_st2("--host", HOST, "unpark", "h.a.job", env=fleet.env).returncode == 0
    wait_for_events(fleet, 2)
    assert kinds(fleet) == [("parked", "h.a", None, "crash-loop"), ("parked", "h.a", "crash-loop", None)]
    assert journal_lines(fleet)[1]["evidence"] == {"task": "h.a.job", "reason": None, "parkedAtMs": None,
                                                   "attempts": None}


def test_a_follower_started_before_any_supervisor_says_so_and_follows_once_one_journals(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    usage(fleet, "10")
    reader = EventsReader(fleet)
    try:
        poll_for(lambda: "no st2 up is journaling events for h; following the journal anyway"
                 in reader.output.read_text(), "the follower's notice")
        fleet.up()
        wait_for_engine(fleet)
        state(seat, "human")
        poll_for(lambda: reader.lines(), "the first followed event")
        assert [json.loads(line)["seq"] for line in reader.lines()] == [1]
        assert reader.lines() == [json.dumps(journal_lines(fleet)[0], separators=(",", ":"))]
    finally:
        reader.stop()


def test_a_session_stopped_under_a_blocked_seat_is_one_event_with_no_record_written(fleet):
    seat = fleet.seat("a", '    argv "sleep" "600"')
    usage(fleet, "10")
    state(seat, "none")   # before the engine's baseline, so it is part of it (a later write may coalesce)
    fleet.up()
    poll_for(lambda: fleet.record("h.a") is not None, "the seat's launch record")
    wait_for_engine(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    record = (seat / "harness-state").read_bytes()
    # st2 down ends the session and removes its launch record; the harness-state record is
    # untouched, yet it now reads unknown (session-dead): the seat is no longer blocked on a human.
    assert run_st2("--host", HOST, "down", "a", env=fleet.env).returncode == 0
    wait_for_events(fleet, 2)
    assert (seat / "harness-state").read_bytes() == record
    assert kinds(fleet) == [("blocked", "h.a", "none", "human"), ("blocked", "h.a", "human", "unknown")]
    assert journal_lines(fleet)[1]["evidence"] == {"state": "unknown", "ask": "unknown", "since": None}
