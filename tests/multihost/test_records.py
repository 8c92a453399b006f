"""Replicated records read on the other host exactly as the record readers project them: ages and
staleness come from the stamps embedded in the records, never from file mtimes (which the engine
rewrites), so a record written on b with backdated stamps reads stale (presence and observed
state ``unknown``, context ``stale: true``) on a at once (docs/records.md §Harness state;
issue 21 item 2)."""

from __future__ import annotations

import pytest

from multihost_support import poll_for, roster, two_hosts, write_records
from st2.records import harness_context, harness_state, status

pytestmark = pytest.mark.multihost

NOW_MS = 1_796_000_000_000           # the instant a reads at (ST2_CLOCK_WALL_MS), a real-looking wall time
SHELL = '    argv "sh"'


def test_records_written_on_b_read_on_a_with_their_embedded_ages_and_backdated_ones_stale():
    with two_hosts(with_declarations=False) as hosts:
        for identity in ("fresh", "old"):
            hosts.declare(identity, SHELL, host="b")
        fresh_age_ms = 4_000
        write_records(hosts.b.catalog / "agents" / "b" / "fresh", "b.fresh", NOW_MS - fresh_age_ms)
        old_age_ms = max(status.STATUS_STALE_MS, harness_state.HARNESS_STATE_STALE_MS,
                         harness_context.HARNESS_CONTEXT_STALE_MS) + 1
        write_records(hosts.b.catalog / "agents" / "b" / "old", "b.old", NOW_MS - old_age_ms)

        names = (status.RECORD_NAME, harness_state.RECORD_NAME, harness_context.RECORD_NAME)
        pairs = [(hosts.b.catalog / "agents" / "b" / identity / name, hosts.a.catalog / "agents" / "b" / identity / name)
                 for identity in ("fresh", "old") for name in names]
        poll_for(lambda: all(there.exists() and there.read_bytes() == here.read_bytes() for here, there in pairs),
                 "the six records to reach a byte for byte", timeout=60)

        rows = roster(hosts.a, NOW_MS)
        fresh, old = rows["b.fresh"], rows["b.old"]
        assert fresh["observedState"] == {"state": "idle", "blockedOn": "none", "inputBuffer": "empty", "ask": "none",
                                          "harness": "codex", "since": NOW_MS - fresh_age_ms, "reason": None,
                                          "exit": None}
        assert (fresh["context"]["usedPercent"], fresh["context"]["ageMs"], fresh["context"]["stale"]) == (
            42.0, fresh_age_ms, False)
        assert fresh["context"]["observedAtMs"] == NOW_MS - fresh_age_ms
        assert (fresh["status"], old["status"]) == ("busy", "unknown")
        assert old["observedState"]["state"] == "unknown" and old["observedState"]["reason"] == "stale", old
        assert (old["context"]["usedPercent"], old["context"]["ageMs"], old["context"]["stale"]) == (
            42.0, old_age_ms, True)
        # The same instant on b reads the same: the projection is the records', not the host's.
        rows_on_b = roster(hosts.b, NOW_MS)
        for identity in ("b.fresh", "b.old"):
            assert rows_on_b[identity]["context"] == rows[identity]["context"]
            assert rows_on_b[identity]["status"] == rows[identity]["status"]
            assert rows_on_b[identity]["observedState"]["state"] == rows[identity]["observedState"]["state"]
