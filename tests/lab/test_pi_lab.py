"""pi and omp in ``--mode rpc`` with the lab extension recording ``ctx.getContextUsage()``.

Pinned facts (docs/lab.md §pi, docs/lab.md §omp; pi 0.73.1, omp 18.2.3): pi's ``tokens`` include the reply's
output (9900 + 300 + 1200 + 42 = 11442 of 200000 -> percent 5.721, an unrounded float) and omp's
exclude it (11400 -> 5.7); after a compaction pi reports null tokens and percent until the next
reply, omp an estimate.
"""

from __future__ import annotations

import json

import pytest

from lab_config import configure_pi
from lab_drivers import PiRpc
from lab_support import require_harness
from support import compact

pytestmark = pytest.mark.lab


def run_session(name: str, lab, fake_model) -> list[dict]:
    """hi, compact, after compact; return the extension's records."""
    harness = require_harness(name)
    env = configure_pi(lab, harness, fake_model)
    rpc = PiRpc(harness.executable, lab, env, "fake-anthropic", "fake-claude", offline=(name == "pi"))
    try:
        rpc.prompt("hi")
        compacted = rpc.command({"type": "compact"}, timeout=90)
        assert compacted["success"], compacted
        rpc.prompt("after compact")
    finally:
        rpc.close()
    return [json.loads(line) for line in (lab.logs / "extension.jsonl").read_text().splitlines()]


def usage_at(records: list[dict], event: str, occurrence: int = 0) -> str:
    return compact([record for record in records if record["event"] == event][occurrence]["contextUsage"])


def test_pi_tokens_include_output_and_read_null_after_compaction(lab, fake_model) -> None:
    records = run_session("pi", lab, fake_model)
    assert usage_at(records, "agent_end") == '{"tokens":11442,"contextWindow":200000,"percent":5.721}'
    assert usage_at(records, "session_compact") == '{"tokens":null,"contextWindow":200000,"percent":null}'
    assert usage_at(records, "agent_end", 1) == '{"tokens":11442,"contextWindow":200000,"percent":5.721}'


def test_omp_tokens_exclude_output_and_read_an_estimate_after_compaction(lab, fake_model) -> None:
    records = run_session("omp", lab, fake_model)
    assert usage_at(records, "agent_end") == '{"tokens":11400,"contextWindow":200000,"percent":5.7}'
    after = [r for r in records if r["event"] == "session_compact"][0]["contextUsage"]
    assert isinstance(after["tokens"], int) and after["tokens"] > 0
    assert after["percent"] == pytest.approx(after["tokens"] / 200000 * 100)
    assert usage_at(records, "agent_end", 1) == '{"tokens":11400,"contextWindow":200000,"percent":5.7}'
