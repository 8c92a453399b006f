"""The capture tool: reproducible captures (run twice, compare), placeholders, normalization."""

from __future__ import annotations

from pathlib import Path

import pytest

from capture import capture, normalize, scrub
from fake_model import FakeModel
from lab_config import Lab
from lab_support import require_harness


def test_normalize_masks_timestamps_and_ids() -> None:
    first = ('{"id": "msg_fake_be6b53dcc04d4916", "threadId": "01a2289d-62c8-7df1-b804-4545d15f8739", '
             '"emittedAtMs": 1795977732929, "durationMs": 99, "at": "2026-11-29T18:44:14.418Z", "tokens": 11442}')
    second = ('{"id": "msg_fake_0076ea8e2e8e4a24", "threadId": "01a229e6-b28d-7550-8540-4eabf706db80", '
              '"emittedAtMs": 1796000492289, "durationMs": 31, "at": "2026-11-30T01:02:03.004Z", "tokens": 11442}')
    assert normalize(first) == normalize(second)


def test_normalize_keeps_every_number_a_harness_computes() -> None:
    first = '{"last": {"totalTokens": 9942, "inputTokens": 9900}, "modelContextWindow": 190000}'
    second = '{"last": {"totalTokens": 9943, "inputTokens": 9900}, "modelContextWindow": 190000}'
    assert normalize(first) != normalize(second)
    assert normalize('{"percent": 5.721}') != normalize('{"percent": 5.7}')


def test_scrub_replaces_local_paths_and_ports(tmp_path: Path) -> None:
    lab = Lab.create(tmp_path / "lab")
    with FakeModel() as fake:
        text = (f'{{"cwd": "{lab.workspace}", "transcript": "{lab.home}/.claude/projects/'
                f'{str(lab.workspace).replace("/", "-")}/x.jsonl", "url": "http://127.0.0.1:{fake.port}/v1"}}')
        assert scrub(text, lab, fake, None) == (
            '{"cwd": "/LAB/workspace", "transcript": "/LAB/home/.claude/projects/-LAB-workspace/x.jsonl", '
            '"url": "http://127.0.0.1:FAKEPORT/v1"}')


# Codex 0.171.0's app-server writes some frames from concurrent tasks: a request's reply and a
# notification, and an `item/commandExecution/outputDelta` that appears only when the command's
# output is read before it exits, land in either order run to run (seen over repeated runs).
# For that one file the comparison is of the frames as a multiset without output deltas; every
# other file, and every pi file, must match line for line.
ORDER_RACES = {("codex", "app-server.harness.jsonl")}


def comparable(name: str, file_name: str, text: str) -> str | list[str]:
    normalized = normalize(text)
    if (name, file_name) in ORDER_RACES:
        return sorted(line for line in normalized.splitlines() if "commandExecution/outputDelta" not in line)
    return normalized


@pytest.mark.lab
@pytest.mark.parametrize("name", ["codex", "pi"])
def test_capture_twice_is_identical_apart_from_timestamps_and_ids(name: str, tmp_path: Path) -> None:
    require_harness(name)
    first = capture(name, tmp_path / "first")
    second = capture(name, tmp_path / "second")
    names = sorted(path.name for path in first.iterdir())
    assert names == sorted(path.name for path in second.iterdir())
    assert "fake_model_requests.jsonl" in names and "PROVENANCE.md" in names
    for file_name in names:
        one, two = (first / file_name).read_text(), (second / file_name).read_text()
        assert comparable(name, file_name, one) == comparable(name, file_name, two), file_name
        assert "/tmp/" not in one and "st2-capture-" not in one, f"{file_name} leaks a local path"
    provenance = (first / "PROVENANCE.md").read_text()
    assert '"input": 9900, "output": 42, "cache_read": 1200, "cache_creation": 300, "reasoning": 0' in provenance
