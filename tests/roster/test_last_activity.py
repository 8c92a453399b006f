"""`st2 agents --json --enrich`'s ``lastActivity`` is origin-timed (docs/records.md §Roster JSON):
a message contributes the send time in its filename, never its file mtime (a replication engine
rewrites mtimes); a v1 status its embedded stamp; a legacy one-word status its mtime (docs/records.md §Status).
The value keeps the original's JSON number type (a float, ``1784649988999.0``). Proved through the
real CLI, the roster a user runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support import run_st2, st2_env

NOW_MS = 1_784_650_000_000
OLD_MESSAGE = "1784649988123-aaaaaa.md"
NEW_MESSAGE = "1784649988999-bbbbbb.md"
FAR_FUTURE_S = 4_000_000_000  # a replication engine's rewritten mtime, far newer than any origin


def seat(catalog: Path, identity: str = "worker") -> Path:
    directory = catalog / "agents" / "h" / identity
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "resources" / "archive").mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "true"\n}}\n')
    return directory


def mail(directory: Path, box: str, name: str) -> Path:
    path = directory / "resources" / box / name
    path.write_text("---\nfrom: h.other\nsubject: x\n---\nbody\n")
    os.utime(path, (FAR_FUTURE_S, FAR_FUTURE_S))
    return path


def enriched(catalog: Path) -> tuple[str, dict]:
    result = run_st2("--host", "h", "agents", "--json", "--enrich", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert result.returncode == 0, result.stderr
    return result.stdout, json.loads(result.stdout)[0]


@pytest.mark.process
def test_messages_contribute_their_filename_time_never_their_mtime(catalog: Path) -> None:
    directory = seat(catalog)
    mail(directory, "inbox", OLD_MESSAGE)
    mail(directory, "archive", NEW_MESSAGE)
    text, row = enriched(catalog)
    assert '"lastActivity":1784649988999.0,"inbox":1,' in text
    assert isinstance(row["lastActivity"], float)


@pytest.mark.process
def test_a_v1_status_contributes_its_embedded_stamp_and_a_legacy_word_its_mtime(catalog: Path) -> None:
    directory = seat(catalog)
    mail(directory, "inbox", OLD_MESSAGE)
    (directory / "status").write_text("busy\nv1 1784649999000\n")
    os.utime(directory / "status", (FAR_FUTURE_S, FAR_FUTURE_S))  # a v1 record's mtime is not its time
    text, _ = enriched(catalog)
    assert '"lastActivity":1784649999000.0,' in text
    (directory / "status").write_text("busy\n")  # legacy: its mtime is all the time there is
    os.utime(directory / "status", (1_784_649_995.5, 1_784_649_995.5))
    text, _ = enriched(catalog)
    assert '"lastActivity":1784649995500.0,' in text


@pytest.mark.process
def test_a_seat_with_no_mail_and_no_status_has_no_activity(catalog: Path) -> None:
    seat(catalog)
    text, row = enriched(catalog)
    assert row["lastActivity"] is None and '"lastActivity":null,"inbox":0,' in text


@pytest.mark.process
def test_the_inbox_count_excludes_a_restored_copy_its_receipt_settles(catalog: Path) -> None:
    directory = seat(catalog)
    mail(directory, "inbox", NEW_MESSAGE)
    mail(directory, "inbox", OLD_MESSAGE)
    mail(directory, "archive", OLD_MESSAGE)  # read, then restored into the inbox by a sync engine
    (directory / "resources" / "inbox" / "notes.txt").write_text("not mail\n")
    _, row = enriched(catalog)
    assert row["inbox"] == 1
