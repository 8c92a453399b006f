"""One catalog directory on one host has exactly one fleet, whatever path or environment names
it (st2/runtime/runtime_home.py): `st2 up` through a symlink or under another XDG_STATE_HOME
launches nothing twice, `st2 down` from either stops the fleet, and a scope an older st2 keyed
on the literal path keeps being found."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from st2.fs.lock import holders
from st2.runtime import runtime_home
from st2.runtime.scope import RuntimeScope
from support import poll_for, run_st2, st2_env


@pytest.fixture
def place():
    root = Path(tempfile.mkdtemp(prefix="st2u-", dir="/tmp"))  # short: sockets live below it
    yield root
    shutil.rmtree(root, ignore_errors=True)


def catalog_in(root: Path, name: str = "c") -> Path:
    catalog = root / name
    seat = catalog / "agents" / "h" / "w"
    (seat / "resources" / "inbox").mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "w" {\n    argv "sleep" "600"\n}\n')
    return catalog


def st2(catalog: Path, state: Path, *args: str):
    return run_st2(*args, "--host", "h", env=st2_env(catalog, XDG_STATE_HOME=str(state)), timeout=60)


def running(catalog: Path, state: Path) -> dict[str, int]:
    inventory = json.loads(st2(catalog, state, "tasks", "--json").stdout)
    return {task["runtimeId"]: task["runtime"]["pid"] for task in inventory["tasks"]
            if task["runtime"]["state"] == "running"}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.process
def test_a_symlink_and_another_state_home_find_the_one_fleet_and_down_from_either_stops_it(place: Path) -> None:
    catalog = catalog_in(place)
    link = place / "link"
    link.symlink_to(catalog)
    first, second = place / "s1", place / "s2"
    try:
        up = st2(catalog, first, "up", "--once")
        assert up.returncode == 0 and "launched h.w[" in up.stderr, up.stderr
        fleet = running(catalog, first)
        assert list(fleet) == ["h.w"]
        again = st2(link, second, "up", "--once")  # another path and another environment
        assert again.returncode == 0 and "launched" not in again.stderr, again.stderr
        assert running(link, second) == fleet == running(catalog, first)
        pointer = catalog / ".st2" / "runtime-scope.h"
        assert pointer.read_text() == f"{RuntimeScope(catalog, 'h').directory}\n"
        assert str(first) in pointer.read_text()
        down = st2(link, second, "down")
        assert down.returncode == 0 and "stopped h.w" in down.stdout, down
        poll_for(lambda: not alive(fleet["h.w"]), what="the agent to be gone after down from the other environment")
        assert running(catalog, first) == {}
    finally:
        st2(catalog, first, "down")


@pytest.mark.process
def test_a_resident_supervisor_refuses_a_second_until_it_is_killed(place: Path) -> None:
    """One supervisor per catalog and host: the host lock (``flock`` on ``.st2.<host>.lock``) turns
    away a second ``st2 up`` by any path, and the kernel frees it when the holder is SIGKILLed."""
    catalog = catalog_in(place)
    link = place / "link"
    link.symlink_to(catalog)
    state = place / "s"
    lock = catalog / ".st2.h.lock"
    resident = subprocess.Popen([sys.executable, "-m", "st2", "up", "--host", "h", "--interval", "60s"],
                                env=st2_env(catalog, XDG_STATE_HOME=str(state)), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        poll_for(lambda: resident.pid in holders(lock), what="the resident supervisor to hold its host lock")
        second = st2(link, state, "up", "--once")
        assert (second.returncode, second.stderr) == (
            1, f"st2 up: another supervisor holds {link / '.st2.h.lock'}; one per catalog and host\n")
        resident.kill()
        resident.wait(timeout=10)
        after = st2(catalog, state, "up", "--once")
        assert after.returncode == 0, after.stderr
    finally:
        if resident.poll() is None:
            resident.kill()
            resident.wait(timeout=10)
        st2(catalog, state, "down")


@pytest.mark.process
def test_two_catalogs_keep_two_fleets(place: Path) -> None:
    one, two = catalog_in(place, "one"), catalog_in(place, "two")
    state = place / "s"
    try:
        assert st2(one, state, "up", "--once").returncode == 0
        launched = st2(two, state, "up", "--once")
        assert "launched h.w[" in launched.stderr, launched.stderr
        assert running(one, state)["h.w"] != running(two, state)["h.w"]
        assert RuntimeScope(one, "h").directory != RuntimeScope(two, "h").directory
    finally:
        st2(one, state, "down")
        st2(two, state, "down")


def test_every_path_to_one_directory_has_one_digest(place: Path) -> None:
    catalog = catalog_in(place)
    (place / "link").symlink_to(catalog)
    assert runtime_home.catalog_digest(place / "link") == runtime_home.catalog_digest(catalog)
    assert runtime_home.catalog_digest(place / "c" / ".." / "c") == runtime_home.catalog_digest(catalog)


def test_a_scope_keyed_on_the_literal_path_by_an_older_st2_is_still_found(place: Path, monkeypatch) -> None:
    catalog = catalog_in(place)
    link = place / "link"
    link.symlink_to(catalog)
    monkeypatch.setenv("XDG_STATE_HOME", str(place / "s"))
    legacy_digest = hashlib.sha256(str(link).encode()).hexdigest()[:12]  # the old rule: abspath
    legacy = place / "s" / "st2" / "scopes" / legacy_digest / "h"
    (legacy / "tasks").mkdir(parents=True)
    scope = RuntimeScope(link, "h")
    assert scope.directory == legacy
    scope.ensure()  # the pointer now names the adopted legacy scope for every environment
    assert runtime_home.read_pointer(catalog, "h") == legacy
    monkeypatch.setenv("XDG_STATE_HOME", str(place / "other"))
    assert RuntimeScope(catalog, "h").directory == legacy


def test_a_malformed_pointer_is_never_followed(place: Path, monkeypatch) -> None:
    catalog = catalog_in(place)
    monkeypatch.setenv("XDG_STATE_HOME", str(place / "s"))
    (catalog / ".st2").mkdir()
    for text in ("relative/h\n", "/etc/passwd\n", "/x/h\n/y/h\n", ""):
        (catalog / ".st2" / "runtime-scope.h").write_text(text)
        expected = place / "s" / "st2" / "scopes" / runtime_home.catalog_digest(catalog) / "h"
        assert RuntimeScope(catalog, "h").directory == expected, text


def test_the_loser_of_a_concurrent_claim_uses_the_winners_scope(place: Path, monkeypatch) -> None:
    catalog = catalog_in(place)
    monkeypatch.setenv("XDG_STATE_HOME", str(place / "a"))
    loser = RuntimeScope(catalog, "h")
    assert str(place / "a") in str(loser.directory)  # computed before any claim
    winner = place / "b" / "st2" / "scopes" / "x" / "h"
    assert runtime_home.claim_pointer(catalog, "h", winner) == winner
    loser.ensure()
    assert loser.directory == winner and loser.tasks == winner / "tasks" and (winner / "tasks").is_dir()
