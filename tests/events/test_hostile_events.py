"""Hostile stamps, escapes, FIFOs and sequence numbers in what `st2 events`, `st2 top --once`,
`st2 doctor` and `st2 up` read: each ends in a clear line or a held state, never a traceback, a
hang, a write past the refusal or a raw escape (process tier)."""

from __future__ import annotations

import json
import os

import pytest

from events_support import (HOST, journal_directory, journal_lines, kinds, now_ms, publish, state, suspended_seat,
                            usage, wait_for_engine, wait_for_events)
from support import poll_for, run_st2

pytestmark = pytest.mark.process

PINNED = 1_788_000_100_000
FAR = 10**17  # year 3170843: no datetime renders it
CONTROL = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"


def no_traceback(completed) -> None:
    assert "Traceback" not in completed.stderr + completed.stdout, completed.stderr


def far_future_seat(fleet):
    """Seat h.a blocked on a human since FAR, with a compaction at FAR; seat h.b ordinary."""
    seat = suspended_seat(fleet, "a")
    state(seat, "human", written_at_ms=PINNED - 4000, since_ms=FAR)
    record = {"schema": "st2.harness-context.v1", "agent": "a", "harness": "codex", "usedTokens": 1000,
              "windowTokens": 258400, "usedPercent": 10.0, "model": None, "costUsd": None,
              "sessionTotalTokens": None, "rateLimits": {"fiveHour": None, "sevenDay": None}, "compactions": 3,
              "lastCompactionMs": FAR, "lastCompactionTrigger": "auto", "incarnation": "token-1",
              "observedAtMs": PINNED - 3000, "writtenAtMs": PINNED - 3000}
    publish(seat / "harness-context", json.dumps(record) + "\n")
    state(suspended_seat(fleet, "b"), "human", written_at_ms=PINNED - 4000, since_ms=PINNED - 9000)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(PINNED)


def test_a_far_future_stamp_in_a_seats_own_records_reads_as_malformed_in_every_view(fleet):
    far_future_seat(fleet)
    for arguments in (["--host", HOST, "events"], ["--host", HOST, "events", "--json"],
                      ["--host", "elsewhere", "events"], ["top", "--once", "--host", HOST]):
        completed = run_st2(*arguments, env=fleet.env)
        assert completed.returncode == 0, (arguments, completed.stderr)
        no_traceback(completed)
        assert str(FAR) not in completed.stdout, arguments
        # The records' readers refuse the stamp, each in one line naming the seat and the field.
        assert "h.a: not a readable record: field 'lastCompactionMs' is not a millisecond stamp" in completed.stderr
    human = run_st2("--host", HOST, "events", env=fleet.env).stdout
    assert "blocked h.b - -> human" in human and "blocked h.a" not in human and "compaction h.a" not in human
    once = run_st2("up", "--once", "--host", HOST, env=fleet.env)
    assert once.returncode == 0, once.stdout + once.stderr
    no_traceback(once)


def journal_of(fleet, *bodies: dict) -> None:
    directory = journal_directory(fleet)
    directory.mkdir(parents=True, exist_ok=True)
    line = {"schema": "st2.fleet-event.v1", "kind": "blocked", "seat": "h.a", "from": "none", "to": "human",
            "observedAtMs": PINNED - 9000, "evidence": {"state": "active", "ask": "permission", "since": PINNED - 9000}}
    (directory / "journal").write_text("".join(json.dumps({**line, **body}) + "\n" for body in bodies))


def test_journal_lines_with_far_future_stamps_or_sequence_numbers_are_skipped_as_malformed(fleet):
    state(suspended_seat(fleet, "a"), "human", written_at_ms=PINNED - 4000, since_ms=PINNED - 9000)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(PINNED)
    journal_of(fleet, {"seq": 1}, {"seq": 2, "observedAtMs": FAR}, {"seq": 10**23}, {"seq": 3, "to": "none"})
    printed = run_st2("--host", HOST, "events", env=fleet.env)
    assert printed.returncode == 0, printed.stderr
    no_traceback(printed)
    assert [line.split(" ", 2)[1:] for line in printed.stdout.splitlines()] == [
        ["#1", "blocked h.a none -> human (state=active ask=permission since=1788000091000)"],
        ["#3", "blocked h.a none -> none (state=active ask=permission since=1788000091000)"]]
    top = run_st2("top", "--once", "--host", HOST, env=fleet.env)
    assert top.returncode == 0, top.stderr
    no_traceback(top)
    assert top.stdout.splitlines()[-3:] == ["recent events:"] + ["  " + line for line in printed.stdout.splitlines()]


def test_control_characters_in_a_journal_lines_fields_are_escaped_in_every_printed_form(fleet):
    state(suspended_seat(fleet, "a"), "none", written_at_ms=PINNED - 4000)
    fleet.env["ST2_CLOCK_WALL_MS"] = str(PINNED)
    journal_of(fleet, {"seq": 1, "seat": "h.a" + CONTROL, "to": CONTROL,
                       "evidence": {"ask" + CONTROL: CONTROL, "since": PINNED - 9000}})
    human = run_st2("--host", HOST, "events", env=fleet.env)
    as_json = run_st2("--host", HOST, "events", "--json", env=fleet.env)
    top = run_st2("top", "--once", "--host", HOST, env=fleet.env)
    escaped = "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202e"
    for completed in (human, as_json, top):
        assert completed.returncode == 0, completed.stderr
        assert not any(not c.isprintable() for c in completed.stdout.replace("\n", "")), repr(completed.stdout)
    assert human.stdout == (f"2026-08-29T10:41:31.000Z #1 blocked h.a{escaped} none -> {escaped} "
                            f"(ask{escaped}={escaped} since=1788000091000)\n")
    assert top.stdout.endswith("  " + human.stdout)
    # The JSON line is the same JSON value, every non-printable character as its \u escape.
    assert json.loads(as_json.stdout)["to"] == CONTROL
    assert "\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u202e" in as_json.stdout


def test_a_fifo_in_place_of_the_journal_holds_the_events_names_the_path_and_doctor_fails(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    usage(fleet, "10")
    fleet.up("--interval", "1s")
    wait_for_engine(fleet)
    current = journal_directory(fleet) / "journal"
    os.mkfifo(current)
    state(seat, "human")
    refusal = (f"events: the event journal {current} is a FIFO, not a regular file; nothing is journaled "
               "(nor handed to a notify hook) until it is a regular file")
    poll_for(lambda: refusal in fleet.log(), lambda: f"the refusal; log:\n{fleet.log()}", timeout=20)
    doctor = run_st2("doctor", "--host", HOST, env=fleet.env)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert (f"failure: supervisor: event-journal: the event journal {current} is a FIFO, not a regular file; st2 up "
            "journals no event and runs no notify hook until it is removed") in doctor.stdout
    # Held: said once however many passes find it, and the transition is journaled once the
    # journal is a regular file again (no event lost, none numbered past a gap).
    state(seat, "human", state_word="child")
    current.unlink()
    wait_for_events(fleet, 1)
    assert kinds(fleet) == [("blocked", "h.a", "none", "human")]
    assert [line["seq"] for line in journal_lines(fleet)] == [1]
    # (said after the append returns: the line can land before the log has the words)
    resumed = "events: the event journal is a regular file again; journaling resumed at #1"
    poll_for(lambda: resumed in fleet.log(), lambda: f"the resumption; log:\n{fleet.log()}", timeout=20)
    assert fleet.log().count(refusal) == 1
    assert "event-journal" not in run_st2("doctor", "--host", HOST, env=fleet.env).stdout


def test_a_saved_state_with_a_sequence_number_out_of_range_is_refused_never_continued(fleet):
    seat = suspended_seat(fleet, "a")
    state(seat, "none")
    usage(fleet, "10")
    directory = journal_directory(fleet)
    directory.mkdir(parents=True)
    path = directory / "state.json"
    path.write_text(json.dumps({"schema": "st2.fleet-event-state.v1", "seq": 10**23, "groups": {}}) + "\n")
    doctor = run_st2("doctor", "--host", HOST, env=fleet.env)
    assert (f"advisory: supervisor: event-journal: the event state {path} has seq 100000000000000000000000, not an "
            f"integer from 0 to {2**53 - 1}; st2 up never continues from it (its next start takes the current "
            "records as a new baseline)") in doctor.stdout
    fleet.up("--interval", "1s")
    poll_for(lambda: json.loads(path.read_text())["seq"] == 0, lambda: f"a new baseline; log:\n{fleet.log()}")
    state(seat, "human")
    wait_for_events(fleet, 1)
    assert [line["seq"] for line in journal_lines(fleet)] == [1]
    assert (f"events: the event state {path} has seq 100000000000000000000000, not an integer from 0 to "
            f"{2**53 - 1}; not continued from: the current records are the new baseline after #0") in fleet.log()
    assert "Traceback" not in fleet.log()
