"""omp's rejected credential over the channel (st2/drivers/channel/frames.py, the turn frame): only
the typed ``credentialRejected`` publishes ``providerAuth`` through the wrapper's one driver-diagnostic
publisher (the launch gate's), only an ``ordinary`` end clears it, a ``failed`` run touches nothing,
and a malformed turn frame writes nothing."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from support_channel import REPO, Session, make_seat, record

from st2.drivers.channel.frames import Malformed, TurnFrame, decode
from st2.drivers.omp.session import OmpSession
from st2.records import driver_diagnostic

REJECTED = b'{"type":"turn","event":"agent_end","result":"credentialRejected"}'
ORDINARY = b'{"type":"turn","event":"agent_end","result":"ordinary"}'
FAILED = b'{"type":"turn","event":"agent_end","result":"failed"}'


def test_the_three_turn_results_decode_from_their_whole_wire_strings() -> None:
    assert [decode(line) for line in (REJECTED, ORDINARY, FAILED)] == [
        TurnFrame("agent_end", "credentialRejected"), TurnFrame("agent_end", "ordinary"),
        TurnFrame("agent_end", "failed")]


def gated(seat, clock, version: str = "18.2.3") -> Session:
    """A channel session whose consumer publishes through the publisher omp's gate keeps."""
    session = Session(seat, "omp", clock)
    session.consumer.diagnostics = driver_diagnostic.Publisher(seat.directory, "omp", clock, producer_version=version,
                                                               support="supported")
    return session


def test_a_rejected_credential_reads_provider_auth_until_an_ordinary_end(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = gated(seat, clock)
    assert session.feed(FAILED + b"\n") == [[]]  # a 429's run: nothing published
    assert record(seat, "driver-diagnostic") is None
    clock.advance(3)
    assert session.feed(REJECTED + b"\n") == [["driver-diagnostic"]]
    written = (seat.directory / "driver-diagnostic").read_bytes()
    assert written == (
        b'{"schema":"st2.driver-diagnostic.v1","driver":"omp","stage":"providerAuth","reason":"providerAuthRejected",'
        b'"source":"turnResult","producerVersion":"18.2.3","support":"supported","observedAt":'
        + str(clock.wall_ms()).encode() + b',"recovery":"clearsOnStageRecovery"}\n')
    clock.advance(1)
    # The same failure again is no second write; a failed run after it neither clears nor rewrites.
    assert session.feed(REJECTED + b"\n" + FAILED + b"\n") == [[], []]
    assert (seat.directory / "driver-diagnostic").read_bytes() == written
    assert session.feed(ORDINARY + b"\n") == [["driver-diagnostic"]]
    assert record(seat, "driver-diagnostic") is None
    assert session.feed(ORDINARY + b"\n") == [[]]  # nothing held, nothing written
    assert session.diagnostics == []


MALFORMED_TURNS = {
    "an unknown result": b'{"type":"turn","event":"agent_end","result":"authFailed"}',
    "the result's prose": b'{"type":"turn","event":"agent_end","result":"401 Unauthorized"}',
    "a numeric class": b'{"type":"turn","event":"agent_end","result":16781312}',
    "no result": b'{"type":"turn","event":"agent_end"}',
    "a null result": b'{"type":"turn","event":"agent_end","result":null}',
    "a result in another case": b'{"type":"turn","event":"agent_end","result":"CredentialRejected"}',
}


@pytest.mark.parametrize("case", sorted(MALFORMED_TURNS))
def test_a_malformed_turn_frame_is_malformed_and_writes_nothing(catalog, clock, case) -> None:
    with pytest.raises(Malformed, match="^result must be one of ordinary, credentialRejected, failed$"):
        decode(MALFORMED_TURNS[case])
    seat = make_seat(catalog)
    session = gated(seat, clock)
    session.feed(REJECTED + b"\n")
    held = (seat.directory / "driver-diagnostic").read_bytes()
    clock.advance(1)
    assert session.feed(MALFORMED_TURNS[case] + b"\n") == [[]]
    assert (seat.directory / "driver-diagnostic").read_bytes() == held  # neither cleared nor rewritten
    assert session.diagnostics == ["malformed frame dropped: result must be one of ordinary, credentialRejected, failed"]
    fresh = make_seat(catalog, identity="fresh")
    assert gated(fresh, clock).feed(MALFORMED_TURNS[case] + b"\n") == [[]]
    assert not (fresh.directory / "driver-diagnostic").exists()


def run_omp(seat, clock, monkeypatch, *frames: bytes) -> int:
    """The real omp wrapper, its gate admitting 18.2.3, around a child that left ``frames`` in the
    channel and exited."""

    class Exited:
        def __init__(self, argv, env, pass_fds):
            descriptor = os.dup(pass_fds[0])
            os.write(descriptor, b"".join(frame + b"\n" for frame in frames))
            os.close(descriptor)

        def poll(self):
            return 0

    run = OmpSession(seat, seat.agent, ["omp"], clock, environment={"ST_HOOKS": str(REPO / "hooks")})
    monkeypatch.setattr(run, "probe_version", lambda: ("18.2.3", None))
    monkeypatch.setattr(subprocess, "Popen", Exited)
    return run.run()


def test_the_wrapper_publishes_through_its_gates_publisher_and_a_predecessors_failure_stands(catalog, clock,
                                                                                               monkeypatch) -> None:
    seat = make_seat(catalog)
    assert run_omp(seat, clock, monkeypatch, REJECTED) == 0
    published = record(seat, "driver-diagnostic")
    assert (published["driver"], published["stage"], published["producerVersion"], published["support"]) == (
        "omp", "providerAuth", "18.2.3", "supported")
    # The next incarnation adopts it: a failed run does not clear it, an ordinary end does.
    clock.advance(5)
    assert run_omp(seat, clock, monkeypatch, FAILED) == 0
    assert record(seat, "driver-diagnostic") == published
    assert run_omp(seat, clock, monkeypatch, ORDINARY) == 0
    assert record(seat, "driver-diagnostic") is None


@pytest.mark.process
def test_roster_and_doctor_read_a_rejected_omp_credential(catalog, clock) -> None:
    """Through the real CLI: the roster's driverDiagnostic and Doctor's advisory with no remedy
    text, and an ordinary end silences both."""
    from support import run_st2, st2_env

    seat = make_seat(catalog)
    (seat.directory / "agent.kdl").write_text('agent "worker" {\n    argv "sh" "-c" "true"\n}\n')
    session = gated(seat, clock)
    session.feed(REJECTED + b"\n")
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(clock.wall_ms() + 2000))
    roster = json.loads(run_st2("agents", "--json", "--host", "host", env=env).stdout)
    [row] = [row for row in roster if row["identity"] == "host.worker"]
    assert row["driverDiagnostic"] == {
        "status": "failure", "driver": "omp", "stage": "providerAuth", "reason": "providerAuthRejected",
        "source": "turnResult", "producerVersion": "18.2.3", "support": "supported", "observedAt": clock.wall_ms(),
        "evidenceAgeMs": 2000, "recovery": "clearsOnStageRecovery"}
    advised = run_st2("doctor", "--host", "host", env=env)
    assert (f"advisory: {seat.agent}: driver-diagnostic: omp driver failed at stage providerAuth: "
            "providerAuthRejected (source turnResult, evidence 2s old); recovery: clearsOnStageRecovery") in (
        advised.stdout.splitlines())
    session.feed(ORDINARY + b"\n")
    quiet = run_st2("doctor", "--host", "host", env=env)
    assert "driver-diagnostic" not in quiet.stdout and quiet.returncode == advised.returncode
