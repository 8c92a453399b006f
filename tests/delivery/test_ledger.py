"""The durable delivery ledger: every clause of docs/delivery.md §Native delivery ledger."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from st2.delivery import ledger as L
from st2.delivery.ledger import CODEX, OPENCODE, Event, Ledger, Phase, Quarantined, Refused, Verdict

AGENT = "h.coder"
A, B, C = "1788000000000-aaaaaa.md", "1788000000001-bbbbbb.md", "1788000000002-cccccc.md"


def open_ledger(tmp_path: Path, profile=CODEX) -> Ledger:
    return Ledger.load(tmp_path / "scope" / "delivery" / AGENT / L.RECORD_NAME, tmp_path / "scope" / "staging",
                       profile, AGENT, AGENT)


def on_disk(ledger: Ledger) -> dict:
    return json.loads(ledger.path.read_bytes())


def test_the_wire_shape_is_pinned(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    [entry] = ledger.begin([A], "thread-1")
    assert ledger.path.read_text() == (
        '{"schema":"st2.delivery-ledger.v1","harness":"codex","agent":"h.coder","runtimeId":"h.coder",'
        f'"entries":[{{"filename":"{A}","binding":"thread-1","correlation":"{entry.correlation}",'
        '"phase":"attempted","attestation":"observed","negative":null}]}\n')
    assert L.correlation_names(entry.correlation, A) and not L.correlation_names(entry.correlation, B)


def test_begin_persists_attempted_before_the_transport_call(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    seen_by_transport = []

    def transport(entries):  # what a crash right now would leave behind
        seen_by_transport.append(on_disk(ledger)["entries"])

    entries = ledger.begin([A, B], "thread-1")
    transport(entries)
    assert [(row["filename"], row["phase"]) for row in seen_by_transport[0]] == [(A, "attempted"), (B, "attempted")]
    # The reopened ledger (a restarted pump) holds the ambiguous attempt instead of re-sending it.
    reopened = open_ledger(tmp_path)
    assert reopened.verdict(A) is Verdict.HOLD and reopened.deliverable([A, B, C]) == []
    with pytest.raises(Refused):
        reopened.begin([A], "thread-1")


def test_a_refused_begin_writes_nothing(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A], "thread-1")
    before = ledger.path.read_bytes()
    with pytest.raises(Refused):
        ledger.begin([B, A], "thread-1")  # A is still owned: the whole batch is refused
    assert ledger.path.read_bytes() == before and B not in ledger.entries


def test_positive_evidence_never_downgrades(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A], "thread-1")
    assert ledger.apply(A, Event.CONSUMED).phase is Phase.CONSUMED
    saves = ledger.saves
    assert ledger.apply(A, Event.TRANSPORT_ACCEPTED).phase is Phase.CONSUMED  # late reply, no downgrade
    assert ledger.apply(A, Event.CONSUMED).phase is Phase.CONSUMED
    assert ledger.saves == saves  # nothing changed, nothing written
    assert open_ledger(tmp_path).get(A).phase is Phase.CONSUMED


def test_profiles_accept_only_evidence_their_harness_can_produce(tmp_path: Path) -> None:
    codex = open_ledger(tmp_path / "c", CODEX)
    codex.begin([A], "thread-1")
    with pytest.raises(Refused, match="cannot observe persisted"):
        codex.apply(A, Event.PERSISTED)
    opencode = open_ledger(tmp_path / "o", OPENCODE)
    opencode.begin([A], "session-1")
    with pytest.raises(Refused, match="cannot observe consumed"):
        opencode.apply(A, Event.CONSUMED)
    assert opencode.apply(A, Event.PERSISTED).phase is Phase.PERSISTED
    # A persisted record claiming a phase its profile cannot observe is refused on load.
    record = on_disk(codex)
    record["entries"][0]["phase"] = "persisted"
    codex.path.write_text(json.dumps(record))
    with pytest.raises(Quarantined, match="cannot observe persisted"):
        open_ledger(tmp_path / "c", CODEX)


def test_codex_releases_at_consumed_and_opencode_never_releases(tmp_path: Path) -> None:
    codex = open_ledger(tmp_path / "c", CODEX)
    codex.begin([A], "thread-1")
    codex.apply(A, Event.TRANSPORT_ACCEPTED)
    assert codex.verdict(A) is Verdict.HOLD and codex.deliverable([A, B]) == []
    codex.apply(A, Event.CONSUMED)
    assert codex.verdict(A) is Verdict.RELEASED
    assert codex.deliverable([A, B]) == [B]  # released: FIFO moves on, A is never sent again
    opencode = open_ledger(tmp_path / "o", OPENCODE)
    opencode.begin([A], "session-1")
    opencode.apply(A, Event.PERSISTED)
    assert opencode.verdict(A) is Verdict.HELD_UNTIL_SETTLED
    assert opencode.deliverable([A, B]) == []  # durable read-back holds until the recipient archives
    opencode.prune([B])                        # A was archived
    assert opencode.deliverable([B]) == [B]


def test_negative_receipt_is_the_only_retry_authority(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    [first] = ledger.begin([A], "thread-1")
    for event in (Event.TRANSPORT_ACCEPTED,):
        ledger.apply(A, event)
        with pytest.raises(Refused):
            ledger.begin([A], "thread-1")   # positive-but-incomplete evidence authorizes nothing
    ledger.apply(A, Event.ABSENT)
    assert ledger.verdict(A) is Verdict.RETRY and ledger.deliverable([A]) == [A]
    [second] = ledger.begin([A], "thread-2")   # exactly one retry, with a fresh correlation
    assert second.correlation != first.correlation and second.negative is None
    with pytest.raises(Refused):
        ledger.begin([A], "thread-2")        # and no second one without a new receipt
    ledger.apply(A, Event.REJECTED)
    assert ledger.verdict(A) is Verdict.RETRY
    # A negative against durable positive evidence is refused: consumption stands.
    ledger.begin([A], "thread-2")
    ledger.apply(A, Event.CONSUMED)
    with pytest.raises(Refused, match="stands against"):
        ledger.apply(A, Event.ABSENT)
    # Positive evidence after a negative receipt is refused too (the receipt is authoritative).
    ledger.begin([B], "thread-2")
    ledger.apply(B, Event.REJECTED)
    with pytest.raises(Refused, match="after a rejected receipt"):
        ledger.apply(B, Event.CONSUMED)


def test_evidence_without_ownership_is_refused(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    for event in (Event.TRANSPORT_ACCEPTED, Event.CONSUMED, Event.ABSENT):
        with pytest.raises(Refused, match="without an owned attempt"):
            ledger.apply(A, event)
    assert not ledger.path.exists()


def test_an_asserted_phase_suppresses_a_duplicate_and_authorizes_no_transport(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    [entry] = ledger.begin([A], "thread-1")
    record = on_disk(ledger)
    record["entries"][0].update(phase="transportAccepted", attestation="asserted")
    ledger.path.write_text(json.dumps(record))
    reopened = open_ledger(tmp_path)
    assert reopened.verdict(A) is Verdict.HOLD and reopened.deliverable([A, B]) == []
    with pytest.raises(Refused):
        reopened.begin([A], "thread-1")
    # Our own evidence of the same phase confirms it; of consumption releases it.
    assert reopened.apply(A, Event.TRANSPORT_ACCEPTED).attestation is L.Attestation.OBSERVED
    reopened.apply(A, Event.CONSUMED)
    assert reopened.verdict(A) is Verdict.RELEASED and reopened.get(A).correlation == entry.correlation


@pytest.mark.parametrize("mutate, reason", [
    (lambda raw: b"{not json", "not JSON"),
    (lambda raw: b"[" * 20_000, "not JSON"),           # nested past the interpreter's recursion limit
    (lambda raw: raw.replace(b"st2.delivery-ledger.v1", b"st2.delivery-ledger.v2"), "schema"),
    (lambda raw: raw.replace(b'"harness":"codex"', b'"harness":"opencode"'), "foreign"),
    (lambda raw: raw.replace(b'"agent":"h.coder"', b'"agent":"h.other"'), "foreign"),
    (lambda raw: raw.replace(b'"runtimeId":"h.coder"', b'"runtimeId":"h.coder.x"'), "foreign"),
    (lambda raw: raw.replace(b'"phase":"attempted"', b'"phase":"delivered"'), "unknown phase"),
    (lambda raw: raw.replace(b'"negative":null', b'"negative":"maybe"'), "unknown attestation"),
    (lambda raw: raw.replace(b'"attestation":"observed"', b'"attestation":"asserted","extra":1'), "entry shape"),
])
def test_foreign_or_malformed_state_quarantines_without_rewriting(tmp_path: Path, mutate, reason) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A], "thread-1")
    bad = mutate(ledger.path.read_bytes())
    ledger.path.write_bytes(bad)
    with pytest.raises(Quarantined, match=reason):
        open_ledger(tmp_path)
    assert ledger.path.read_bytes() == bad  # never rewritten


def test_every_entry_must_validate_its_own_correlation(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A, B], "thread-1")
    record = on_disk(ledger)
    record["entries"][0]["correlation"] = record["entries"][1]["correlation"]  # B's token on A
    bad = json.dumps(record).encode()
    ledger.path.write_bytes(bad)
    with pytest.raises(Quarantined, match="does not name its own filename"):
        open_ledger(tmp_path)
    record = json.loads(bad)
    record["entries"][0] = dict(record["entries"][1])  # two entries for one filename
    ledger.path.write_text(json.dumps(record))
    with pytest.raises(Quarantined, match="two entries for one filename"):
        open_ledger(tmp_path)
    record["entries"] = [dict(record["entries"][1], phase="consumed", negative="absent")]
    ledger.path.write_text(json.dumps(record))
    with pytest.raises(Quarantined, match="absent receipt beside consumed"):
        open_ledger(tmp_path)
    with pytest.raises(Refused):
        L.transition(CODEX, None, Event.BEGIN, filename=A, binding="t", correlation=L.new_correlation(B))


def test_the_persisted_ledger_is_owner_only_and_leaves_no_temp_residue(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A], "thread-1")
    ledger.apply(A, Event.CONSUMED)
    assert stat.S_IMODE(os.stat(ledger.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(ledger.path.parent).st_mode) == 0o700
    assert os.listdir(ledger.staging) == []
    assert os.listdir(ledger.path.parent) == [L.RECORD_NAME]
    # A publication that fails (the target is a directory now) leaves the old state and no temp.
    ledger.path.unlink()
    ledger.path.mkdir()
    with pytest.raises(OSError):
        ledger.begin([B], "thread-1")
    assert os.listdir(ledger.staging) == [] and B not in ledger.entries


def test_prune_on_leaving_the_unread_set(tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path)
    ledger.begin([A], "thread-1")
    ledger.apply(A, Event.CONSUMED)
    ledger.begin([B], "thread-1")
    assert ledger.prune([A, B, C]) == []          # everything still unread: nothing pruned
    assert ledger.prune([B, C]) == [A]            # the recipient archived A
    assert [row["filename"] for row in on_disk(ledger)["entries"]] == [B]
    # A held (ambiguous) entry whose message was settled by the recipient stops holding.
    assert ledger.deliverable([B, C]) == []
    ledger.prune([C])
    assert ledger.deliverable([C]) == [C] and on_disk(ledger)["entries"] == []

