"""Who mail is from, through the real CLI: `--as` (and `$ST_AGENT`) must name exactly one declared
seat or principal, as a recipient must; a human at a shell sends as the catalog's declared
operator principal; an archive reached through a symlink out of the catalog is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from st2.bus.principals import OPERATOR, ensure_operator, operator_declaration, operator_principal
from support import run_st2, st2_env

HOST = "h1"

pytestmark = pytest.mark.process


def st2(catalog: Path, *args: str, agent: str | None = None):
    env = st2_env(catalog, **({"ST_AGENT": agent} if agent else {}))
    return run_st2(*args, "--host", HOST, env=env)


@pytest.fixture
def seats(bus_catalog: Path) -> Path:
    return bus_catalog


@pytest.mark.parametrize("sender", ["ghost", "h1.ghost", "h9.alice"])
def test_an_undeclared_sender_is_refused_and_nothing_is_written(seats: Path, sender: str, snapshot) -> None:
    before = snapshot(seats)
    result = st2(seats, "message", "send", "alice", "--as", sender, "-m", "x")
    assert result.returncode == 1 and f"no agent '{sender}'" in result.stderr, result
    assert snapshot(seats) == before  # no .st2/sent/<ghost>/, no inbox file


def test_an_undeclared_st_agent_is_refused_too(seats: Path) -> None:
    result = st2(seats, "message", "send", "alice", "-m", "x", agent="h1.ghost")
    assert result.returncode == 1 and "no agent 'h1.ghost'" in result.stderr


def test_an_ambiguous_sender_is_refused(seats: Path, snapshot) -> None:
    before = snapshot(seats)
    result = st2(seats, "message", "send", "alice", "--as", "bob", "-m", "x")
    assert result.returncode == 1 and "ambiguous" in result.stderr and "h1.bob, h2.bob" in result.stderr, result
    assert snapshot(seats) == before


@pytest.mark.parametrize("sender, shown", [("alice", "h1.alice"), ("h1.alice", "h1.alice"), ("h2.bob", "h2.bob"),
                                           ("svc", "h1.svc")])
def test_a_declared_sender_sends_under_its_canonical_bus_id(seats: Path, sender: str, shown: str) -> None:
    sent = st2(seats, "message", "send", "h1.bob", "--as", sender, "-m", "x")
    assert sent.returncode == 0, sent.stderr
    rows = json.loads(st2(seats, "message", "ls", "h1.bob", "--json").stdout)
    assert [row["from"] for row in rows] == [shown]


def test_a_shell_sends_as_the_operator_principal_and_its_replies_come_home(seats: Path) -> None:
    ensure_operator(seats, HOST)
    sent = st2(seats, "message", "send", "alice", "--subject", "status?", "-m", "how is it going")
    assert sent.returncode == 0, sent.stderr
    message = json.loads(st2(seats, "message", "ls", "alice", "--json").stdout)[0]
    assert message["from"] == f"{HOST}.{OPERATOR}"
    reply = st2(seats, "message", "reply", message["filename"], "-m", "fine", agent="h1.alice")
    assert reply.returncode == 0, reply.stderr
    inbox = json.loads(st2(seats, "message", "ls", "--json").stdout)  # no --as: the operator's own inbox
    assert [(row["from"], row["subject"]) for row in inbox] == [("h1.alice", "re: status?")]


def test_without_an_operator_principal_a_shell_is_told_how_to_declare_one(seats: Path) -> None:
    result = st2(seats, "message", "send", "alice", "-m", "x")
    assert result.returncode == 1
    assert "principals/<host>/operator/principal.kdl" in result.stderr


def test_the_operator_declaration_is_pinned_idempotent_and_valid(seats: Path) -> None:
    assert operator_principal(seats, HOST) is None
    first = ensure_operator(seats, HOST)
    declaration = seats / "principals" / HOST / OPERATOR / "principal.kdl"
    assert declaration.read_bytes() == operator_declaration(HOST) == b'principal "operator" host="h1"\n'
    stamp = declaration.stat().st_mtime_ns
    assert ensure_operator(seats, HOST) == first and declaration.stat().st_mtime_ns == stamp
    assert (first.bus_id, (first.directory / "resources" / "inbox").is_dir()) == ("h1.operator", True)
    validate = st2(seats, "validate")
    assert validate.returncode == 0, validate.stdout


def test_archive_through_a_symlinked_archive_is_refused(seats: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    name = st2(seats, "message", "send", "alice", "--as", "svc", "-m", "x").stdout.strip()
    archive = seats / "agents" / HOST / "alice" / "resources" / "archive"
    if archive.exists():
        archive.rmdir()
    os.symlink(outside, archive)
    result = st2(seats, "message", "archive", name, "--as", "h1.alice")
    assert result.returncode == 1 and "is not a real directory" in result.stderr, result
    assert list(outside.iterdir()) == []
    assert (seats / "agents" / HOST / "alice" / "resources" / "inbox" / name).exists()
    flagged = st2(seats, "validate")
    assert flagged.returncode == 1 and "agents/h1/alice/resources/archive is a symlink" in flagged.stdout
    doctor = st2(seats, "doctor")
    assert "resources/archive is a symlink" in doctor.stdout + doctor.stderr


def test_archive_into_a_real_archive_still_works(seats: Path) -> None:
    name = st2(seats, "message", "send", "alice", "--as", "svc", "-m", "x").stdout.strip()
    result = st2(seats, "message", "archive", name, "--as", "h1.alice")
    assert result.returncode == 0 and result.stdout == "archived\n"
    assert st2(seats, "validate").returncode == 0
