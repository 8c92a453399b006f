"""Every surface that renders a roster row, pinned as full strings over the fixture catalog (one
seat per reader arm, :mod:`roster_fixture`): the ``--json`` roster with and without
``--enrich``, the text table, Doctor's record advisories, the fleet-event facets and their
staleness deadlines, and ``st2 top``'s cells and detail lines. The rows are built in process by
the roster's own :func:`st2.roster.build.build_roster`; the expected bytes are what the CLI
prints, so a change to how a row carries its readings must leave every one of them unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, build
from st2.catalog.location import CatalogLocation
from st2.doctor.records import record_findings
from st2.events import facets
from st2.roster.build import build_roster
from st2.roster.human import format_rows
from st2.roster.wire import to_json
from st2.runtime import resumable_session
from st2.top.actions import detail_lines
from st2.top.model import Filters, SeatView

ROWS = [
    '{"identity":"alpha.a-fresh","status":"busy","name":"Fresh","description":null,"retired":false,"resources":[{"name":"spec","uri":"file:///srv/spec.md","reason":"the contract"}],{enrich}"desiredState":"running","desiredStateReason":null,"observedState":{"state":"idle","blockedOn":"none","inputBuffer":"empty","ask":"none","harness":"claude","since":1788000095000,"reason":null,"exit":null},"driverDiagnostic":{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"},"context":{"harness":"codex","usedTokens":92283,"windowTokens":258400,"usedPercent":33.0,"model":null,"costUsd":null,"sessionTotalTokens":2235329,"rateLimits":{"fiveHour":31.0,"sevenDay":55.0},"rateLimited":false,"compactions":3,"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown","observedAtMs":1788000095790,"ageMs":4210,"stale":false},"id":"alpha.a-fresh","address":"a-fresh","busAddress":"alpha.a-fresh","worktree":null,"deliveryHold":null}',
    '{"identity":"alpha.b-stale","status":"unknown","name":null,"description":null,"retired":false,"resources":[{"name":"notes","uri":"git:///srv/notes"}],{enrich}"desiredState":"running","desiredStateReason":null,"observedState":{"state":"unknown","blockedOn":"unknown","inputBuffer":"unknown","ask":"unknown","harness":"claude","since":null,"reason":"stale","exit":null},"driverDiagnostic":{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"},"context":{"harness":"pi","usedTokens":23425,"windowTokens":4000,"usedPercent":585.6,"model":null,"costUsd":null,"sessionTotalTokens":null,"rateLimits":{"fiveHour":null,"sevenDay":null},"rateLimited":false,"compactions":1,"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown","observedAtMs":1787996440000,"ageMs":3660000,"stale":true},"id":"alpha.b-stale","address":"b-stale","busAddress":"alpha.b-stale","worktree":null,"deliveryHold":null}',
    '{"identity":"alpha.c-legacy","status":"dnd","name":null,"description":null,"retired":false,"resources":[],{enrich}"desiredState":"running","desiredStateReason":null,"observedState":{"state":"unknown","blockedOn":"unknown","inputBuffer":"unknown","ask":"unknown","harness":"claude","since":null,"reason":"future-skew","exit":null},"driverDiagnostic":{"status":"failure","driver":"codex","stage":"delivery","reason":"deliveryRejected","source":"promptTransport","producerVersion":"0.55.0","support":"supported","observedAt":1788000097500,"evidenceAgeMs":2500,"recovery":"clearsOnStageRecovery"},"context":null,"id":"alpha.c-legacy","address":"c-legacy","busAddress":"alpha.c-legacy","worktree":null,"deliveryHold":"dnd"}',
    '{"identity":"alpha.d-garbage","status":"offline","name":null,"description":null,"retired":false,"resources":[],{enrich}"desiredState":"running","desiredStateReason":null,"observedState":{"state":"unknown","blockedOn":"unknown","inputBuffer":"unknown","ask":"unknown","harness":null,"since":null,"reason":"malformed-record","exit":null},"driverDiagnostic":{"status":"indeterminate","driver":null,"stage":null,"reason":"malformedRecord","source":null,"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"replaceWithValidRecordOrClearOnStageRecovery"},"context":null,"id":"alpha.d-garbage","address":"d-garbage","busAddress":"alpha.d-garbage","worktree":null,"deliveryHold":null}',
    '{"identity":"alpha.e-suspended","status":"offline","name":null,"description":null,"retired":false,"resources":[],{enrich}"desiredState":"suspended","desiredStateReason":"waiting for CI","observedState":{"state":"active","blockedOn":"human","inputBuffer":"empty","ask":"permission","harness":"claude","since":1788000099000,"reason":null,"exit":null},"driverDiagnostic":{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"},"context":{"harness":"claude","usedTokens":null,"windowTokens":200000,"usedPercent":null,"model":"claude-opus-4","costUsd":0.42,"sessionTotalTokens":null,"rateLimits":{"fiveHour":31.0,"sevenDay":55.0},"rateLimited":false,"compactions":0,"lastCompactionMs":null,"lastCompactionTrigger":null,"observedAtMs":1788000099000,"ageMs":1000,"stale":false},"id":"alpha.e-suspended","address":"e-suspended","busAddress":"alpha.e-suspended","worktree":null,"deliveryHold":null}',
    '{"identity":"beta.f-retired","status":"offline","name":null,"description":null,"retired":true,"resources":[],{enrich}"desiredState":"retired","desiredStateReason":"replaced","observedState":{"state":"ended","blockedOn":"none","inputBuffer":"empty","ask":"none","harness":"claude","since":1788000099000,"reason":null,"exit":"exit 0"},"driverDiagnostic":{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,"recovery":"publishFailureOrClearOnStageRecovery"},"context":null,"id":"agent-0007","address":"archivist","busAddress":null,"worktree":null,"deliveryHold":null}',
]
ENRICHED = [
    '"lastActivity":1788000099000.0,"inbox":1,"session":{"start":"fallback","sessionId":null,"lostSessionIds":["S0"]},',
    '"lastActivity":1787999140000.0,"inbox":0,"session":null,',
    '"lastActivity":1788000040000.0,"inbox":0,"session":null,',
    '"lastActivity":null,"inbox":0,"session":null,',
    '"lastActivity":null,"inbox":0,"session":null,',
    '"lastActivity":null,"inbox":0,"session":null,',
]
# Accounts append the seat's declared account and its budget hold after every other field of either shape.
ACCOUNTS = ',"account":null,"budgetHold":null'
# --enrich appends resourceStates after every other field (the declared resources stay as they were).
RESOURCE_STATES = [
    '"resourceStates":[{"schema":"st2.resource-state.v1","agent":"alpha.a-fresh","binding":"spec","uri":"file:///srv/spec.md","generation":1,"revision":1,"hostDigest":"sha256:8fb1cd74d9689a65bdf081941b459a5a575e4923b8c9254bf73ac2df65a6c942","hostObservedAtMs":1788000070000,"facts":{"branch":"main","dirty":false},"lastFailure":{"kind":"provider-failed","message":"/srv/spec.md is not UTF-8 text","atMs":1788000098000},"writtenAtMs":1788000098000}]',
    '"resourceStates":[{"schema":"st2.resource-state.v1","agent":"alpha.b-stale","binding":"notes","uri":"git:///srv/notes","generation":1,"revision":1,"hostDigest":"sha256:8fb1cd74d9689a65bdf081941b459a5a575e4923b8c9254bf73ac2df65a6c942","hostObservedAtMs":1787992900000,"facts":{"branch":"main","dirty":false},"lastFailure":null,"writtenAtMs":1787992900000}]',
    '"resourceStates":[]',
    '"resourceStates":[]',
    '"resourceStates":[]',
    '"resourceStates":[]',
]
TABLE = [
    'AGENT              PRESENCE  DESIRED                     OBSERVED                       CONTEXT            NAME',
    'alpha.a-fresh      busy      running                     obs:idle                       ctx:33% ⟳3         Fresh',
    'alpha.b-stale      unknown   running                     obs:unknown(stale)             ctx:586% ⟳1 stale',
    'alpha.c-legacy     dnd       running                     obs:unknown(future-skew)       ctx:-',
    'alpha.d-garbage    offline   running                     obs:unknown(malformed-record)  ctx:-',
    'alpha.e-suspended  offline   suspended (waiting for CI)  obs:active+blocked:human       ctx:?',
    'beta.f-retired     offline   retired (replaced)          obs:ended                      ctx:-',
]
TABLE_ENRICHED = [
    'AGENT              PRESENCE  DESIRED                     OBSERVED                       CONTEXT            LAST-ACTIVITY  INBOX  NAME',
    'alpha.a-fresh      busy      running                     obs:idle                       ctx:33% ⟳3         1s ago         1      Fresh',
    'alpha.b-stale      unknown   running                     obs:unknown(stale)             ctx:586% ⟳1 stale  16m ago        0',
    'alpha.c-legacy     dnd       running                     obs:unknown(future-skew)       ctx:-              1m ago         0',
    'alpha.d-garbage    offline   running                     obs:unknown(malformed-record)  ctx:-              -              0',
    'alpha.e-suspended  offline   suspended (waiting for CI)  obs:active+blocked:human       ctx:?              -              0',
    'beta.f-retired     offline   retired (replaced)          obs:ended                      ctx:-              -              0',
]
FINDINGS = [
    'advisory: alpha.a-fresh: session-lost: harness session S0 could not be resumed; the seat started a fresh session (the lost id is kept in its resumable-session record and never retried)',
    "advisory: alpha.a-fresh: resource-failing: resource 'spec' (file:///srv/spec.md) failed its last observation: provider-failed: /srv/spec.md is not UTF-8 text",
    'advisory: alpha.b-stale: context-fill: context window 586% full (reading 61m old)',
    'advisory: alpha.b-stale: context-stale: context reading is older than the horizon (61m old) while desired state is running',
    'advisory: alpha.b-stale: observed-state-unknown: observed harness state is unknown (stale) while desired state is running',
    "advisory: alpha.b-stale: resource-stale: resource 'notes' (git:///srv/notes) was last observed 2h old, past the staleness horizon",
    'advisory: alpha.c-legacy: observed-state-unknown: observed harness state is unknown (future-skew) while desired state is running',
    'advisory: alpha.c-legacy: delivery-hold: delivery held: fresh dnd declared; new mail waits unread and unowned until the seat leaves it or it ages out',
    'advisory: alpha.c-legacy: driver-diagnostic: codex driver failed at stage delivery: deliveryRejected (source promptTransport, evidence 2s old); recovery: clearsOnStageRecovery',
    'advisory: alpha.d-garbage: observed-state-unknown: observed harness state is unknown (malformed-record) while desired state is running',
]
FACETS = [
    '{"blocked|alpha.a-fresh|":["none",{"state":"idle","ask":"none","since":1788000095000},1788000095000],"context|alpha.a-fresh|":[33.0,{"warnPercent":80.0,"recordObservedAtMs":1788000095790},1788000095790],"compaction|alpha.a-fresh|":[3,{"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown"},1788000097290],"diagnostic|alpha.a-fresh|":["absent",{"driver":null,"stage":null,"reason":null,"source":null},null],"stale|alpha.a-fresh|harness-state":["fresh",{"record":"harness-state"},null],"stale|alpha.a-fresh|harness-context":["fresh",{"record":"harness-context"},null],"resource|alpha.a-fresh|spec":["provider-failed",{"binding":"spec","uri":"file:///srv/spec.md","revision":1,"generation":1,"hostDigest":"sha256:8fb1cd74d9689a65bdf081941b459a5a575e4923b8c9254bf73ac2df65a6c942","failure":"/srv/spec.md is not UTF-8 text"},1788000098000]}',
    '{"blocked|alpha.b-stale|":["unknown",{"state":"unknown","ask":"unknown","since":null},null],"context|alpha.b-stale|":[585.6,{"warnPercent":80.0,"recordObservedAtMs":1787996440000},1787996440000],"compaction|alpha.b-stale|":[1,{"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown"},1788000097290],"diagnostic|alpha.b-stale|":["absent",{"driver":null,"stage":null,"reason":null,"source":null},null],"stale|alpha.b-stale|harness-state":["stale",{"record":"harness-state"},null],"stale|alpha.b-stale|harness-context":["stale",{"record":"harness-context"},null],"resource|alpha.b-stale|notes":[1,{"binding":"notes","uri":"git:///srv/notes","revision":1,"generation":1,"hostDigest":"sha256:8fb1cd74d9689a65bdf081941b459a5a575e4923b8c9254bf73ac2df65a6c942","failure":null},1787992900000]}',
    '{"blocked|alpha.c-legacy|":["unknown",{"state":"unknown","ask":"unknown","since":null},null],"context|alpha.c-legacy|":[null,{"warnPercent":80.0,"recordObservedAtMs":null},null],"compaction|alpha.c-legacy|":[null,{"lastCompactionMs":null,"lastCompactionTrigger":null},null],"diagnostic|alpha.c-legacy|":["failure",{"driver":"codex","stage":"delivery","reason":"deliveryRejected","source":"promptTransport"},1788000097500],"stale|alpha.c-legacy|harness-state":["fresh",{"record":"harness-state"},null],"stale|alpha.c-legacy|harness-context":[null,{"record":"harness-context"},null]}',
    '{"blocked|alpha.d-garbage|":["unknown",{"state":"unknown","ask":"unknown","since":null},null],"context|alpha.d-garbage|":[null,{"warnPercent":80.0,"recordObservedAtMs":null},null],"compaction|alpha.d-garbage|":[null,{"lastCompactionMs":null,"lastCompactionTrigger":null},null],"diagnostic|alpha.d-garbage|":["indeterminate",{"driver":null,"stage":null,"reason":"malformedRecord","source":null},null],"stale|alpha.d-garbage|harness-state":["fresh",{"record":"harness-state"},null],"stale|alpha.d-garbage|harness-context":[null,{"record":"harness-context"},null]}',
    '{"blocked|alpha.e-suspended|":["human",{"state":"active","ask":"permission","since":1788000099000},1788000099000],"context|alpha.e-suspended|":[null,{"warnPercent":80.0,"recordObservedAtMs":1788000099000},1788000099000],"compaction|alpha.e-suspended|":[0,{"lastCompactionMs":null,"lastCompactionTrigger":null},null],"diagnostic|alpha.e-suspended|":["absent",{"driver":null,"stage":null,"reason":null,"source":null},null],"stale|alpha.e-suspended|harness-state":["fresh",{"record":"harness-state"},null],"stale|alpha.e-suspended|harness-context":["fresh",{"record":"harness-context"},null]}',
    '{"blocked|beta.f-retired|":["none",{"state":"ended","ask":"none","since":1788000099000},1788000099000],"context|beta.f-retired|":[null,{"warnPercent":80.0,"recordObservedAtMs":null},null],"compaction|beta.f-retired|":[null,{"lastCompactionMs":null,"lastCompactionTrigger":null},null],"diagnostic|beta.f-retired|":["absent",{"driver":null,"stage":null,"reason":null,"source":null},null],"stale|beta.f-retired|harness-state":["fresh",{"record":"harness-state"},null],"stale|beta.f-retired|harness-context":[null,{"record":"harness-context"},null]}',
]
STALE_DEADLINES = [1788000995000, None, 1788001120000, None, 1788000999000, 1788000999000]
TOP = [
    (('alpha', 'a-fresh', 'busy', 'running', 'obs:idle', 'ctx:33% ⟳3', '1', '-', '-'), 'idle', False, 33.0, True),
    (('alpha', 'b-stale', 'unknown', 'running', 'obs:unknown(stale)', 'ctx:586% ⟳1 stale', '0', '-', '-'), 'unknown', False, 585.6, True),
    (('alpha', 'c-legacy', 'dnd', 'running', 'obs:unknown(future-skew)', 'ctx:-', '0', '-', '-'), 'unknown', False, -1.0, True),
    (('alpha', 'd-garbage', 'offline', 'running', 'obs:unknown(malformed-record)', 'ctx:-', '0', '-', '-'), 'unknown', False, -1.0, False),
    (('alpha', 'e-suspended', 'offline', 'suspended (waiting for CI)', 'obs:active+blocked:human', 'ctx:?', '0', '-', '-'), 'active', True, -1.0, True),
    (('beta', 'f-retired', 'offline', 'retired (replaced)', 'obs:ended', 'ctx:-', '0', '-', '-'), 'ended', False, -1.0, True),
]
DETAIL = [
    ['session: fallback (id not yet observed) (lost: S0)', 'resource spec: revision 1 generation 1 observed 30s ago, failing (provider-failed: /srv/spec.md is not UTF-8 text)', 'driver diagnostic: status=absent support=unknown recovery=publishFailureOrClearOnStageRecovery'],
    ['session: no resumable-session record on this host', 'resource notes: revision 1 generation 1 observed 7200s ago, ok', 'driver diagnostic: status=absent support=unknown recovery=publishFailureOrClearOnStageRecovery'],
    ['session: no resumable-session record on this host', 'driver diagnostic: status=failure driver=codex stage=delivery reason=deliveryRejected source=promptTransport producerVersion=0.55.0 support=supported observedAt=1788000097500 evidenceAgeMs=2500 recovery=clearsOnStageRecovery'],
    ['session: no resumable-session record on this host', 'driver diagnostic: status=indeterminate reason=malformedRecord support=unknown recovery=replaceWithValidRecordOrClearOnStageRecovery'],
    ['session: no resumable-session record on this host', 'driver diagnostic: status=absent support=unknown recovery=publishFailureOrClearOnStageRecovery'],
    ['session: no resumable-session record on this host', 'driver diagnostic: status=absent support=unknown recovery=publishFailureOrClearOnStageRecovery'],
]


@pytest.fixture
def fixture_rows(tmp_path: Path, monkeypatch):
    """(catalog, plain rows, enriched rows) as host alpha reads them; alpha.a-fresh's current
    session is a fallback that lost session S0 (the resumable-session record on this host)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = build(tmp_path / "catalog")
    store = resumable_session.SessionStore.of(root, "alpha")
    store.ensure()
    store.record("alpha.a-fresh").write_bytes(resumable_session.SessionRecord(
        runtime_id="alpha.a-fresh", agent="alpha.a-fresh", harness="claude", incarnation="token-1",
        start="fallback", lost=(resumable_session.Lost("S0", "token-0", NOW_MS - 60_000),),
        written_at_ms=NOW_MS - 5000).to_json())
    rows, _ = build_roster(root, NOW_MS, host="alpha")
    enriched, _ = build_roster(root, NOW_MS, host="alpha", enrich=True)
    return root, rows, enriched


def test_the_roster_json_is_pinned_for_every_reader_arm(fixture_rows) -> None:
    _, rows, enriched = fixture_rows
    assert to_json(rows, False) == "[" + ",".join(row.replace("{enrich}", "")[:-1] + ACCOUNTS + "}" for row in ROWS) + "]"
    assert to_json(enriched, True) == "[" + ",".join(
        row.replace("{enrich}", insert)[:-1] + "," + states + ACCOUNTS + "}"
        for row, insert, states in zip(ROWS, ENRICHED, RESOURCE_STATES)) + "]"


def test_the_text_table_is_pinned_for_every_reader_arm(fixture_rows) -> None:
    _, rows, enriched = fixture_rows
    assert format_rows(rows) == "\n".join(TABLE)
    assert format_rows(enriched, enrich=True, now_ms=NOW_MS) == "\n".join(TABLE_ENRICHED)


def test_doctor_record_advisories_are_pinned_for_every_reader_arm(fixture_rows) -> None:
    _, _, enriched = fixture_rows
    assert [finding.line() for row in enriched for finding in record_findings(row, NOW_MS)] == FINDINGS


def test_event_facets_and_stale_deadlines_are_pinned_for_every_reader_arm(fixture_rows) -> None:
    _, rows, _ = fixture_rows
    assert [json.dumps({name: list(facet) for name, facet in facets.seat_facets(row).items()},
                       separators=(",", ":")) for row in rows] == FACETS
    assert [facets.stale_deadline_ms(row) for row in rows] == STALE_DEADLINES


def test_top_cells_filters_and_detail_lines_are_pinned_for_every_reader_arm(fixture_rows) -> None:
    root, _, enriched = fixture_rows
    seats = [SeatView(row) for row in enriched]
    assert [(seat.cells(NOW_MS), seat.state_word, seat.blocked_on_human, seat.sort_value("context"),
             Filters(harness="claude").admit(seat, NOW_MS)) for seat in seats] == TOP
    location = CatalogLocation(root, "alpha")
    assert [[line for line in detail_lines(location, seat, NOW_MS)
             if line.startswith(("driver diagnostic:", "session:", "resource "))] for seat in seats] == DETAIL


def test_a_state_record_of_the_bindings_earlier_uri_reads_absent(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = build(tmp_path / "catalog")
    declaration = root / "agents" / "alpha" / "a-fresh" / "agent.kdl"
    declaration.write_text(declaration.read_text().replace("file:///srv/spec.md", "file:///srv/other.md"))
    rows, _ = build_roster(root, NOW_MS, host="alpha", enrich=True)
    row = next(row for row in rows if row.identity == "alpha.a-fresh")
    assert [resource["uri"] for resource in json.loads(to_json([row], enrich=True))[0]["resources"]] == [
        "file:///srv/other.md"]
    assert row.resource_states == []
    assert not any("resource-failing" in finding.line() for finding in record_findings(row, NOW_MS))
