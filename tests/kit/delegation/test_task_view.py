"""The task-view arm's whole-token ownership and the helper-firing conjunction."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from st2.kit.delegation import task_view


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"backgroundTaskId":"b7x2k"}', True),
        ("b7x2k", True),
        ("task b7x2k.", True),
        ("xb7x2k", False),
        ("b7x2k9", False),
        ("b7x2k-2", False),
        ("_b7x2k", False),
        ("b7x2", False),
    ],
)
def test_ownership_is_a_whole_token_match(text: str, found: bool) -> None:
    assert task_view.contains_whole_token(text, "b7x2k") is found


def view_payload(tmp_path: Path, view, transcript: str | None = "launched b1\n"):
    path = tmp_path / "agent.jsonl"
    if transcript is not None:
        path.write_text(transcript)
    return {"agent_transcript_path": str(path), "background_tasks": view}


def shell(task_id="b1", status="running", kind="shell"):
    return {"id": task_id, "type": kind, "status": status, "description": "d"}


def test_an_own_running_shell_task_holds(tmp_path: Path) -> None:
    assert task_view.holds_own_running_shell_task(view_payload(tmp_path, [shell()]))


def test_a_foreign_running_shell_task_does_not_hold(tmp_path: Path) -> None:
    assert not task_view.holds_own_running_shell_task(view_payload(tmp_path, [shell("b2")]))


@pytest.mark.parametrize("task_id", [None, 7, ""], ids=["absent", "not-a-string", "empty"])
def test_an_element_without_a_usable_id_counts_as_own(tmp_path: Path, task_id) -> None:
    element = shell()
    if task_id is None:
        del element["id"]
    else:
        element["id"] = task_id
    assert task_view.holds_own_running_shell_task(view_payload(tmp_path, [element]))


def test_an_absent_transcript_counts_every_running_shell_element(tmp_path: Path) -> None:
    assert task_view.holds_own_running_shell_task(view_payload(tmp_path, [shell("b2")], transcript=None))
    assert task_view.holds_own_running_shell_task({"background_tasks": [shell("b2")]})


@pytest.mark.parametrize(
    "view",
    [
        [shell(kind="subagent")],
        [shell(status="completed")],
        [{"id": "b1", "status": "running"}],
        [{"id": "b1", "type": "shell"}],
        ["b1"],
        {"id": "b1"},
        None,
    ],
    ids=["subagent", "finished", "no-type", "no-status", "non-object", "non-array", "absent"],
)
def test_a_malformed_view_contributes_nothing(tmp_path: Path, view) -> None:
    assert not task_view.holds_own_running_shell_task(view_payload(tmp_path, view, transcript=None))


def test_an_unparseable_payload_drops_the_task_condition() -> None:
    assert not task_view.holds_own_running_shell_task(None)


def test_the_transcript_is_not_read_without_a_running_shell_element(tmp_path: Path, monkeypatch) -> None:
    reads = []
    monkeypatch.setattr(task_view, "_read_transcript", lambda payload: reads.append(1) or "")
    task_view.holds_own_running_shell_task(view_payload(tmp_path, [shell(status="completed")]))
    assert reads == []
    task_view.holds_own_running_shell_task(view_payload(tmp_path, [shell("x1"), shell("x2"), shell("x3")]))
    assert reads == [1]


def marks_payload(tmp_path: Path, empty_type: bool, missing_transcript: bool, new_id: bool) -> dict:
    existing = tmp_path / "agent-exists.jsonl"
    existing.write_text("{}\n")
    return {
        "agent_type": "" if empty_type else "Explore",
        "agent_transcript_path": str(tmp_path / "missing.jsonl") if missing_transcript else str(existing),
        "agent_id": "a42",
        "background_tasks": [] if new_id else [{"id": "a42", "type": "subagent", "status": "running"}],
    }


@pytest.mark.parametrize("marks", list(itertools.product([True, False], repeat=3)))
def test_only_the_full_conjunction_of_marks_is_a_helper(tmp_path: Path, marks) -> None:
    payload = marks_payload(tmp_path, *marks)
    assert task_view.helper_marks(payload) == marks
    assert task_view.is_helper_firing(payload) is all(marks)


@pytest.mark.parametrize("absent", ["agent_type", "agent_transcript_path", "agent_id", "background_tasks"])
def test_each_absent_key_fails_its_mark(tmp_path: Path, absent: str) -> None:
    payload = marks_payload(tmp_path, True, True, True)
    assert task_view.is_helper_firing(payload)
    del payload[absent]
    assert not task_view.is_helper_firing(payload)


@pytest.mark.parametrize(
    ("key", "value"),
    [("agent_id", ""), ("agent_transcript_path", ""), ("background_tasks", {"a42": 1}), ("agent_type", None)],
    ids=["empty-id", "empty-path", "view-not-array", "type-null"],
)
def test_an_empty_or_malformed_value_fails_its_mark(tmp_path: Path, key: str, value) -> None:
    payload = marks_payload(tmp_path, True, True, True)
    payload[key] = value
    assert not task_view.is_helper_firing(payload)


def test_an_unreadable_payload_is_never_a_helper() -> None:
    assert not task_view.is_helper_firing(None)
    assert not task_view.is_helper_firing({})
