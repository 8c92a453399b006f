"""Carrying a pre-ledger delivery forward (st2.delivery.legacy_state, docs/delivery.md §Carrying a
pre-ledger delivery forward): the one ``delivery-state.json`` record an earlier release left per
native seat is translated exactly once, when no ledger exists, into an ``asserted`` ledger entry
that holds and authorizes no transport; the old file is never touched; a record that is not the
seat's is ignored and one that contradicts itself holds delivery, each with a log line and no
ledger."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.bus.envelope import render
from st2.delivery import ledger as L
from st2.delivery.legacy_state import Outcome, carry_legacy_record
from st2.drivers.codex.pump import Pump as CodexPump
from st2.drivers.opencode.pump import Pump as OpencodePump
from st2.drivers.opencode.session import OpencodeSession
from st2.drivers.seat import Seat
from st2.runtime.scope import RuntimeScope

AGENT = "h.coder"
FILE, LATER = "1786380000000-aaa111.md", "1786380000001-bbb222.md"
THREAD = "019a4f2e-7c1d-7e30-9b8a-3f6d2c1e0a55"
SESSION = "ses_dce8fcb34ffePeUUB0gxTbQvZC"

# What the last pre-ledger Codex release wrote after sending FILE and before any receipt.
CODEX_RECORD = (
    b'{"schema":"st2.codex-delivery-state.v1","agent":"h.coder","runtimeId":"h.coder",'
    b'"runtimeIncarnation":"5f0c2a9e4b7d1c3a8e6f","threadId":"019a4f2e-7c1d-7e30-9b8a-3f6d2c1e0a55",'
    b'"filename":"1786380000000-aaa111.md",'
    b'"clientId":"st2:95bd73c7ed3d470467e7f9db2fe0f999dfe69e10f6cd12f62df16959b2712fec","phase":"attempted"}')
CODEX_LEDGER = (
    b'{"schema":"st2.delivery-ledger.v1","harness":"codex","agent":"h.coder","runtimeId":"h.coder",'
    b'"entries":[{"filename":"1786380000000-aaa111.md","binding":"019a4f2e-7c1d-7e30-9b8a-3f6d2c1e0a55",'
    b'"correlation":"st2:1786380000000-aaa111:8861d0042f3d","phase":"attempted","attestation":"asserted",'
    b'"negative":null}]}\n')
# What the last pre-ledger opencode release wrote once the server read the message back.
OPENCODE_RECORD = (
    b'{"schema":"st2.opencode-delivery-state.v1","agent":"h.coder","runtimeId":"h.coder",'
    b'"sessionId":"ses_dce8fcb34ffePeUUB0gxTbQvZC","filename":"1786380000000-aaa111.md",'
    b'"messageId":"msgc19a0815d21447dd5b8b4cca48","phase":"accepted"}')
OPENCODE_LEDGER = (
    b'{"schema":"st2.delivery-ledger.v1","harness":"opencode","agent":"h.coder","runtimeId":"h.coder",'
    b'"entries":[{"filename":"1786380000000-aaa111.md","binding":"ses_dce8fcb34ffePeUUB0gxTbQvZC",'
    b'"correlation":"st2:1786380000000-aaa111:e2f51946211c","phase":"persisted","attestation":"asserted",'
    b'"negative":null}]}\n')


def old_path(state: Path, harness: str, catalog: Path, agent: str = AGENT) -> Path:
    """Where an old release filed it: <state>/<harness>/<SHA-256(len‖catalog‖len‖agent)[:24]>/."""
    key = hashlib.sha256()
    for value in (str(catalog.resolve()).encode(), agent.encode()):
        key.update(struct.pack(">Q", len(value)) + value)
    return state / harness / key.hexdigest()[:24] / "delivery-state.json"


def place(state: Path, harness: str, catalog: Path, data: bytes) -> Path:
    path = old_path(state, harness, catalog)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def scope_of(state: Path, catalog: Path) -> Path:
    return RuntimeScope(catalog, "h", state).directory


def carry(state: Path, catalog: Path, profile=L.CODEX):
    lines: list[str] = []
    result = carry_legacy_record(scope_of(state, catalog), catalog, profile, AGENT, AGENT, log=lines.append)
    return result, lines


def ledger_path(state: Path, catalog: Path) -> tuple[Path, Path]:
    return L.ledger_location(scope_of(state, catalog), AGENT)


@pytest.mark.parametrize("profile, record, expected", [(L.CODEX, CODEX_RECORD, CODEX_LEDGER),
                                                       (L.OPENCODE, OPENCODE_RECORD, OPENCODE_LEDGER)],
                         ids=["codex", "opencode"])
def test_a_left_behind_record_becomes_one_asserted_entry_and_stays_in_place(
        tmp_path: Path, catalog: Path, profile, record: bytes, expected: bytes) -> None:
    state = tmp_path / "state"
    old = place(state, profile.harness, catalog, record)
    (outcome, held), lines = carry(state, catalog, profile)
    path, staging = ledger_path(state, catalog)
    assert (outcome, held) == (Outcome.TRANSLATED, None)
    assert path.read_bytes() == expected
    assert old.read_bytes() == record
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and os.listdir(staging) == []
    assert len(lines) == 1 and "carried the pre-ledger delivery of 1786380000000-aaa111.md" in lines[0]


def test_an_absent_record_does_nothing_and_creates_nothing(tmp_path: Path, catalog: Path) -> None:
    state = tmp_path / "state"
    scope_of(state, catalog)
    for profile in (L.CODEX, L.OPENCODE):
        (outcome, held), lines = carry(state, catalog, profile)
        assert (outcome, held, lines) == (Outcome.ABSENT, None, [])
    assert not (state / "sessions").exists() and not (state / "codex").exists()


def test_translation_happens_once_and_a_ledger_present_wins(tmp_path: Path, catalog: Path) -> None:
    state = tmp_path / "state"
    place(state, "codex", catalog, CODEX_RECORD)
    carry(state, catalog)
    path, staging = ledger_path(state, catalog)
    ledger = L.Ledger.load(path, staging, L.CODEX, AGENT, AGENT)
    ledger.prune([])  # the recipient archived the message
    settled = path.read_bytes()
    (outcome, _), lines = carry(state, catalog)  # the next start
    assert outcome is Outcome.ABSENT and lines == []
    assert path.read_bytes() == settled and L.Ledger.load(path, staging, L.CODEX, AGENT, AGENT).entries == {}
    assert old_path(state, "codex", catalog, AGENT).read_bytes() == CODEX_RECORD


@pytest.mark.parametrize("record, why", [
    (b"{not json", "not JSON"),
    (OPENCODE_RECORD, "schema is not st2.codex-delivery-state.v1"),        # the other harness's record
    (CODEX_RECORD.replace(b'"agent":"h.coder"', b'"agent":"h.other"'), "agent 'h.other'"),
], ids=["not-json", "other-harness", "other-agent"])
def test_a_record_that_is_not_this_seats_is_ignored_with_a_log_line(tmp_path: Path, catalog: Path, record,
                                                                     why) -> None:
    state = tmp_path / "state"
    old = place(state, "codex", catalog, record)
    (outcome, held), lines = carry(state, catalog)
    assert (outcome, held) == (Outcome.IGNORED, None)
    assert len(lines) == 1 and "not this seat's" in lines[0] and why in lines[0]
    assert not ledger_path(state, catalog)[0].exists() and old.read_bytes() == record


@pytest.mark.parametrize("record, why", [
    (CODEX_RECORD.replace(b"st2:95bd73c7", b"st2:95bd73c8"), "clientId does not re-derive"),
    (CODEX_RECORD.replace(b'"phase":"attempted"', b'"phase":"delivered"'), "unknown phase 'delivered'"),
    (CODEX_RECORD.replace(b'"phase"', b'"extra":1,"phase"'), "fields are not"),
    (CODEX_RECORD.replace(b'"runtimeIncarnation":"5f0c2a9e4b7d1c3a8e6f",', b""), "fields are not"),
    (CODEX_RECORD.replace(b'1786380000000-aaa111.md', b'notes.txt'), "not a message filename"),
], ids=["forged-id", "unknown-phase", "extra-field", "missing-field", "bad-filename"])
def test_a_self_contradicting_record_holds_delivery_and_writes_no_ledger(tmp_path: Path, catalog: Path, record,
                                                                         why) -> None:
    state = tmp_path / "state"
    old = place(state, "codex", catalog, record)
    (outcome, held), lines = carry(state, catalog)
    assert outcome is Outcome.QUARANTINED and why in held
    assert len(lines) == 1 and why in lines[0] and "delivery holds" in lines[0]
    assert not ledger_path(state, catalog)[0].exists() and old.read_bytes() == record
    # No ledger was written, so the next start reaches the same verdict rather than guessing.
    assert carry(state, catalog)[0][0] is Outcome.QUARANTINED


def inbox(seat: Path, *names: str) -> None:
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    for name in names:
        (seat / "resources" / "inbox" / name).write_bytes(render("h.peer", "s", None, (), None, "hi"))


@pytest.mark.parametrize("phase", [b"attempted", b"accepted"])
def test_a_carried_forward_attempt_authorizes_no_transport(tmp_path: Path, catalog: Path, phase: bytes) -> None:
    state = tmp_path / "state"
    place(state, "codex", catalog, CODEX_RECORD.replace(b'"attempted"', b'"' + phase + b'"'))
    carry(state, catalog)
    seat = catalog / "agents" / "h" / "coder"
    inbox(seat, FILE, LATER)
    path, staging = ledger_path(state, catalog)
    pump = CodexPump(seat, path, staging, AGENT, AGENT)
    entry = pump.ledger.get(FILE)
    assert entry.attestation is L.Attestation.ASSERTED and pump.ledger.verdict(FILE) is L.Verdict.HOLD
    assert pump.ledger.deliverable([FILE, LATER]) == []
    with pytest.raises(L.Refused):
        pump.ledger.begin([FILE], THREAD)
    # A complete history of the old thread without this build's correlation is no receipt either:
    # nothing this build sent is missing, so no retry is authorized.
    pump.settle([{"items": [{"type": "userMessage", "content": [{"type": "text", "text": "earlier"}]}]}], THREAD)
    assert pump.unsettled and pump.next_batch(THREAD) is None
    assert pump.ledger.get(FILE) == entry and path.read_bytes().count(b'"attestation":"asserted"') == 1


def test_the_session_carries_the_record_before_its_pump_loads(tmp_path: Path, catalog: Path) -> None:
    state = tmp_path / "state"
    seat = catalog / "agents" / "h" / "coder"
    inbox(seat, FILE)

    def start() -> tuple[OpencodeSession, str]:
        stream = io.StringIO()
        made = OpencodeSession(Seat(seat, AGENT), AGENT, ["opencode", "serve"], FakeClock(), catalog,
                               model="fake/fake-model", state_dir=state, stdin_fd=None, stream=stream)
        return made, stream.getvalue()

    old = place(state, "opencode", catalog, OPENCODE_RECORD.replace(b"msgc19a", b"msgffff"))
    session, said = start()
    assert session.pump.ledger is None and "does not re-derive" in session.pump.quarantine
    assert "delivery holds" in said and not ledger_path(state, catalog)[0].exists()

    old.write_bytes(OPENCODE_RECORD)
    session, said = start()
    assert session.pump.quarantine is None and session.pump.ledger.verdict(FILE) is L.Verdict.HOLD
    assert "carried the pre-ledger delivery" in said
    assert ledger_path(state, catalog)[0].read_bytes() == OPENCODE_LEDGER


def test_seeding_refuses_an_entry_that_would_not_read_back(tmp_path: Path, catalog: Path) -> None:
    path, staging = ledger_path(tmp_path / "state", catalog)
    unobservable = L.Entry(FILE, THREAD, "st2:1786380000000-aaa111:8861d0042f3d", L.Phase.PERSISTED,
                           L.Attestation.ASSERTED)
    with pytest.raises(L.Quarantined):
        L.Ledger(path, staging, L.CODEX, AGENT, AGENT).seed([unobservable])
    assert not path.exists()


@pytest.mark.parametrize("profile, record", [(L.CODEX, CODEX_RECORD), (L.OPENCODE, OPENCODE_RECORD)],
                         ids=["codex", "opencode"])
def test_a_carried_forward_entry_holds_only_until_its_message_is_archived(tmp_path: Path, catalog: Path, profile,
                                                                          record: bytes) -> None:
    state = tmp_path / "state"
    place(state, profile.harness, catalog, record)
    carry(state, catalog, profile)
    seat = catalog / "agents" / "h" / "coder"
    inbox(seat, FILE, LATER)
    path, staging = ledger_path(state, catalog)
    pump = (CodexPump if profile is L.CODEX else OpencodePump)(seat, path, staging, AGENT, AGENT)
    binding = THREAD if profile is L.CODEX else SESSION
    if profile is L.CODEX:
        assert pump.still_unsettled()
    assert pump.next_batch(binding) is None
    # The recipient reads and archives the message the earlier release delivered.
    (seat / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    os.replace(seat / "resources" / "inbox" / FILE, seat / "resources" / "archive" / FILE)
    if profile is L.CODEX:
        assert not pump.still_unsettled()
    batch = pump.next_batch(binding)
    assert batch is not None and batch.filenames == (LATER,)
    assert pump.ledger.get(FILE) is None and pump.ledger.get(LATER).attestation is L.Attestation.OBSERVED
