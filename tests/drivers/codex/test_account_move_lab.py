"""Lab tier, accounts: the real ``codex app-server`` 0.171.0 run by `st2 up` moves to another account
— another ``CODEX_HOME`` — and back into its thread only through st2's copy (st2.accounts.carry,
``CARRY["codex"] == "copy"``). A seat converses under CODEX_HOME A; `st2 down`; its ``env`` names B
(the lab's ``config.toml`` for the fake provider, nothing else); `st2 up --resume`: Codex refuses
``thread/resume`` of a thread B has no rollout of, and the seat falls back, loudly, to a fresh
thread — the model never sees the old conversation. The seat converses again in B, moves to C, and
this time :func:`carry` copies the thread's rollout (``sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl``,
nothing else) from B to C first: the seat resumes that thread and the next request carries it.

The product path end to end (docs/accounts.md §Moving a seat between accounts): accounts declared in
``catalog.kdl``, the seat moved by `st2 agent account` while a turn is in flight, `st2 up` waiting
for the idle boundary, then relaunching it on the other account through :func:`carry`."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from codex_support import REPO, write_message

LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_codex  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

from st2.accounts.carry import CARRY, CONFIG_ENV, carry  # noqa: E402

pytestmark = pytest.mark.lab

HOST = "labhost"


class Seat(UpSeat):
    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str], lab: Lab) -> None:
        super().__init__(catalog, state_home, env, HOST, "coder")
        self.lab = lab

    def state(self) -> str | None:
        return (self.record("harness-state") or {}).get("state")

    def ledger(self) -> dict:
        path = next(iter(self.state_home.glob(f"**/delivery/{HOST}.coder/delivery-ledger.json")), None)
        return {entry["filename"]: entry for entry in json.loads(path.read_text())["entries"]} if path else {}

    def wire(self) -> list[dict]:
        return [json.loads(line) for line in (self.lab.logs / "wire.jsonl").read_text().splitlines()]

    def resumes_asked(self) -> list[str]:
        return [entry["msg"]["params"]["threadId"] for entry in self.wire()
                if entry["dir"] == "out" and entry["msg"].get("method") == "thread/resume"]


def converse(seat: Seat, fake: FakeModel, body: str) -> dict:
    """Deliver ``body`` as one mail (archived after); return the model request carrying it (as
    tests/drivers/codex/test_lab.py does)."""
    name = write_message(seat.directory, "task", body=body)
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "consumed", f"{body!r} consumed", 120, seat.screen)
    poll(lambda: seat.state() == "idle", "idle after the turn", describe=seat.screen)
    correlation = seat.ledger()[name]["correlation"]
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
    return next(entry for entry in fake.model_requests() if entry.get("wire") == "responses"
                and correlation in (entry["summary"].get("last_user_text") or ""))


def carried(request: dict, word: str) -> bool:
    return word in json.dumps(request["body"]["input"])


def env_block(location: Path) -> str:
    return f'    env {{ {CONFIG_ENV["codex"]} "{location}" }}\n'


def rollouts(location: Path, thread: str) -> list[Path]:
    return list((location / "sessions").rglob(f"rollout-*-{thread}.jsonl"))


def decided(seat: Seat, before: str) -> bool:
    """The relaunched incarnation's record says how it started (not the predecessor's, not ``resuming``)."""
    record = seat.session_record() or {}
    return record.get("incarnation") not in (None, before) and record.get("start") in ("fresh", "fallback", "resumed")


def move(seat: Seat, old: Path, new: Path) -> str:
    """`st2 down` the seat, point its ``env`` at ``new``, `st2 up --resume` (then adopt it)."""
    before = seat.session_record()["incarnation"]
    assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
    declaration = seat.directory / "agent.kdl"
    text = declaration.read_text()
    assert env_block(old) in text
    declaration.write_text(text.replace(env_block(old), env_block(new)))
    started = seat.st2("up", "--resume", "--once", "--host", HOST)
    assert started.returncode == 0, started.stdout + started.stderr
    seat.find()
    return before


def test_a_codex_seat_moved_to_another_codex_home_keeps_its_thread_only_through_carry(
        tmp_path: Path, fake_model: FakeModel) -> None:
    assert CARRY["codex"] == "copy"
    began = time.monotonic()
    harness = require_harness("codex")
    lab = Lab.create(tmp_path / "lab")
    env = configure_codex(lab, harness, fake_model, context_window=200000)
    locations = {}
    for name in ("a", "b", "c"):  # each a fresh CODEX_HOME holding only the lab's config.toml
        locations[name] = tmp_path / "accounts" / name
        locations[name].mkdir(parents=True)
        shutil.copy(lab.home / ".codex" / "config.toml", locations[name] / "config.toml")
    a, b, c = locations["a"], locations["b"], locations["c"]
    state_home = Path(tempfile.mkdtemp(prefix="st2cm-"))  # short: tmux sockets live under it
    catalog = tmp_path / "catalog"
    directory = catalog / "agents" / HOST / "coder"
    (directory / "resources" / "inbox").mkdir(parents=True)
    config = " ".join(f'"{item}"' for item in (
        "model_providers.fake.request_max_retries=0", "model_providers.fake.stream_max_retries=0"))
    (directory / "agent.kdl").write_text(
        f'agent "coder" {{\n    workspace "{lab.workspace}"\n{env_block(a)}'
        f'    codex {{\n        executable "{harness.executable}"\n        config {config}\n    }}\n}}\n')
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
                 "ST2_CODEX_FRAME_LOG": str(lab.logs / "wire.jsonl")}
    seat = Seat(catalog, state_home, env, lab)
    timings = {}
    try:
        seat.up()
        poll(lambda: seat.state() == "idle", "the bound thread idle", describe=seat.screen)
        converse(seat, fake_model, "remember the word OCELOT-A")
        first = seat.session_record()["sessionId"]
        assert len(rollouts(a, first)) == 1 and not rollouts(lab.home / ".codex", first)  # the env block named it
        timings["converse under A"] = time.monotonic() - began

        # (a) Relaunched under B without a copy: Codex has no rollout of the thread; the resume is refused, once.
        before = move(seat, a, b)
        poll(lambda: decided(seat, before), "the resume decided",
             describe=seat.screen)
        poll(lambda: seat.state() == "idle", "the fresh thread idle", describe=seat.screen)
        record = seat.session_record()
        assert (record["start"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
            "fallback", first, [first])
        assert seat.resumes_asked() == [first]
        request = converse(seat, fake_model, "which word, WORD-B, and remember CARACAL-B")
        assert not carried(request, "OCELOT-A")
        second = seat.session_record()["sessionId"]
        assert second not in (None, first) and len(rollouts(b, second)) == 1 and not rollouts(a, second)
        timings["move A->B, no copy"] = time.monotonic() - began - sum(timings.values())

        # (b) Relaunched under C after carry(): the rollout alone brings the thread along.
        assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
        old_env, new_env = env | {"CODEX_HOME": str(b)}, env | {"CODEX_HOME": str(c)}
        assert carry("codex", second, str(lab.workspace), old_env, new_env) is None
        [source] = rollouts(b, second)
        assert sorted(str(path.relative_to(c)) for path in c.rglob("*") if path.is_file()) == sorted(
            ["config.toml", str(source.relative_to(b))])
        before = move(seat, b, c)
        poll(lambda: decided(seat, before), "the resume decided",
             describe=seat.screen)
        poll(lambda: seat.state() == "idle", "the resumed thread idle", describe=seat.screen)
        record = seat.session_record()
        assert (record["start"], record["sessionId"], record["resumedFrom"]) == ("resumed", second, second)
        request = converse(seat, fake_model, "which word, WORD-C")
        assert carried(request, "CARACAL-B") and not carried(request, "OCELOT-A")
        timings["move B->C, carry()"] = time.monotonic() - began - sum(timings.values())
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        seat.st2("down", "--host", HOST)
        seat.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)


# --- the product path: `st2 agent account` moves the running seat at its next idle boundary ---------

ACCOUNTS = '''catalog {{
    account "a" {{ config-dir codex="{a}" }}
    account "b" {{ config-dir codex="{b}" }}
}}
'''
HELD = "HOLD-THIS-TURN"


def launch(seat: Seat) -> dict:
    """The seat's launch record (``tasks/<runtime id>.json`` in its runtime scope)."""
    [path] = seat.state_home.glob(f"st2/**/tasks/{HOST}.{seat.identity}.json")
    return json.loads(path.read_text())


def test_st2_agent_account_moves_a_codex_seat_at_its_next_idle_boundary_and_carries_its_thread(
        tmp_path: Path, fake_model: FakeModel) -> None:
    """Accounts "a" and "b" in ``catalog.kdl`` (each its own ``CODEX_HOME``), the seat on "a" (no
    ``env`` block: the account's location wins over the CODEX_HOME st2 itself runs with). It converses
    under A; a turn is kept in flight (the fake model holds its answer) while the operator runs `st2
    agent account coder b`: `st2 up` passes leave the seat alone and say it moves at its next idle
    boundary. The answer released and the seat idle, the next pass relaunches it on "b", st2's carry
    puts the rollout under B, the seat resumes the same thread and the next request carries it."""
    began = time.monotonic()
    harness = require_harness("codex")
    lab = Lab.create(tmp_path / "lab")
    env = configure_codex(lab, harness, fake_model, context_window=200000)
    locations = {}
    for name in ("a", "b"):  # each a fresh CODEX_HOME holding only the lab's config.toml
        locations[name] = tmp_path / "accounts" / name
        locations[name].mkdir(parents=True)
        shutil.copy(lab.home / ".codex" / "config.toml", locations[name] / "config.toml")
    a, b = locations["a"], locations["b"]
    state_home = Path(tempfile.mkdtemp(prefix="st2cn-"))  # short: tmux sockets live under it
    catalog = tmp_path / "catalog"
    (catalog / "agents" / HOST / "coder" / "resources" / "inbox").mkdir(parents=True)
    (catalog / "catalog.kdl").write_text(ACCOUNTS.format(a=a, b=b))
    config = " ".join(f'"{item}"' for item in (
        "model_providers.fake.request_max_retries=0", "model_providers.fake.stream_max_retries=0"))
    (catalog / "agents" / HOST / "coder" / "agent.kdl").write_text(
        f'agent "coder" {{\n    workspace "{lab.workspace}"\n    account "a"\n'
        f'    codex {{\n        executable "{harness.executable}"\n        config {config}\n    }}\n}}\n')
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
                 "ST2_CODEX_FRAME_LOG": str(lab.logs / "wire.jsonl")}
    seat = Seat(catalog, state_home, env, lab)
    timings = {}
    try:
        seat.up()
        assert launch(seat)["account"] == "a"
        poll(lambda: seat.state() == "idle", "the bound thread idle", describe=seat.screen)
        converse(seat, fake_model, "remember the word OCELOT-A")
        first = seat.session_record()["sessionId"]
        assert len(rollouts(a, first)) == 1 and not rollouts(b, first) and not rollouts(lab.home / ".codex", first)
        timings["converse under A"] = time.monotonic() - began

        # A turn in flight: the model's answer is held. The operator moves the seat meanwhile.
        fake_model.hold(HELD)
        running = launch(seat)
        name = write_message(seat.directory, "task", body=f"and now {HELD}")
        poll(lambda: any(entry.get("held") for entry in fake_model.model_requests()), "the held request",
             describe=seat.screen)
        poll(lambda: seat.state() not in (None, "ready", "idle"), "the turn under way", describe=seat.screen)
        moved = seat.st2("agent", "account", "--host", HOST, "coder", "b")
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert 'account "b"' in (seat.directory / "agent.kdl").read_text()
        for _ in range(2):
            passed = seat.st2("up", "--once", "--host", HOST)
            assert passed.returncode == 0, passed.stdout + passed.stderr
            assert (launch(seat)["pid"], launch(seat)["account"]) == (running["pid"], "a"), "never mid-turn"
            assert f"st2 up: {HOST}.coder moves from account a to b at its next idle boundary" in passed.stderr, (
                passed.stdout + passed.stderr)
            assert seat.state() not in ("ready", "idle")
        timings["mid-turn passes"] = time.monotonic() - began - sum(timings.values())

        # Released: the turn ends, the seat reads idle, and the next pass moves it.
        fake_model.release(HELD)
        poll(lambda: seat.ledger().get(name, {}).get("phase") == "consumed", "the held mail consumed",
             describe=seat.screen)
        poll(lambda: seat.state() == "idle", "idle after the held turn", describe=seat.screen)
        (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
        os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
        before = seat.session_record()["incarnation"]
        passed = seat.st2("up", "--once", "--host", HOST)  # its exit status is asserted after the word
        assert f"st2 up: moving {HOST}.coder[{running['pid']}] from account a to b" in passed.stderr, (
            passed.stdout + passed.stderr)
        seat.find()
        assert launch(seat)["account"] == "b" and launch(seat)["pid"] != running["pid"]
        poll(lambda: decided(seat, before), "the resume decided", describe=seat.screen)
        poll(lambda: seat.state() == "idle", "the moved thread idle", describe=seat.screen)
        request = converse(seat, fake_model, "which word, WORD-B")
        assert carried(request, "OCELOT-A") and carried(request, HELD), "st2's carry brought the thread to B"
        assert passed.returncode == 0, passed.stdout + passed.stderr  # a lost session is an error line
        record = seat.session_record()
        assert (record["start"], record["sessionId"], record["resumedFrom"], record["lost"]) == (
            "resumed", first, first, [])
        assert seat.resumes_asked() == [first] and len(rollouts(b, first)) == 1
        assert launch(seat)["account"] == "b"
        timings["move to b at idle"] = time.monotonic() - began - sum(timings.values())
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        fake_model.release()
        seat.st2("down", "--host", HOST)
        seat.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)
