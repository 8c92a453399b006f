"""Lab tier, accounts: the real ``opencode serve`` 1.18.33 run by `st2 up` moved to another account
does NOT keep its conversation (st2.accounts.carry, ``CARRY["opencode"] is None``). opencode keeps
its credentials (``auth.json``) and every session (one SQLite store, ``opencode.db``) under
``$XDG_DATA_HOME/opencode`` — the variable an account would set. A seat converses under data home
A; `st2 down`; its ``env`` names B (fresh: the provider and its key live in the workspace's
``opencode.json``, as the lab writes it); `st2 up --resume`: ``GET /session/<id>`` is a 404 in B
and the seat falls back, loudly, to a fresh session; the next request does not carry the old
conversation, and :func:`carry` says the move was not proved. If a build starts carrying it, this
test fails and the table's row is to be measured again."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
LAB_DIR = REPO / "tests" / "lab"
CODEX_TESTS = REPO / "tests" / "drivers" / "codex"
for folder in (LAB_DIR, CODEX_TESTS):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

from codex_support import write_message  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_opencode  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

from st2.accounts.carry import CARRY, CONFIG_ENV, carry  # noqa: E402

pytestmark = pytest.mark.lab

HOST = "labhost"


class Seat(UpSeat):
    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str]) -> None:
        super().__init__(catalog, state_home, env, HOST, "oc")

    def state(self) -> str | None:
        return (self.record("harness-state") or {}).get("state")

    def ledger(self) -> dict:
        path = next(iter(self.state_home.glob(f"**/delivery/{HOST}.oc/delivery-ledger.json")), None)
        return {entry["filename"]: entry for entry in json.loads(path.read_text())["entries"]} if path else {}


def converse(seat: Seat, fake: FakeModel, body: str) -> dict:
    """Deliver ``body`` as one mail, read back as persisted (archived after); return the agent
    turn's model request carrying it (as tests/drivers/opencode/test_lab.py does)."""
    name = write_message(seat.directory, "task", body=body)
    stem = f"st2:{name[:-3]}:"

    def turns() -> list[dict]:
        return [entry for entry in fake.model_requests() if entry.get("summary", {}).get("tool_names")
                and stem in (entry["summary"].get("last_user_text") or "")]
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "persisted", f"{body!r} persisted", 180, seat.screen)
    poll(lambda: seat.state() == "idle" and len(turns()) == 1, "idle after one turn", 120, seat.screen)
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
    return turns()[0]


def carried(request: dict, word: str) -> bool:
    return word in json.dumps(request["body"]["messages"])


def env_block(location: Path) -> str:
    return f'    env {{ {CONFIG_ENV["opencode"]} "{location}" }}\n'


def decided(seat: Seat, before: str) -> bool:
    """The relaunched incarnation's record says how it started (not the predecessor's, not ``resuming``)."""
    record = seat.session_record() or {}
    return record.get("incarnation") not in (None, before) and record.get("start") in ("fresh", "fallback", "resumed")


def move(seat: Seat, old: Path, new: Path) -> str:
    """`st2 down` the seat, point its ``env`` at ``new``, `st2 up --resume`."""
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


def test_an_opencode_seat_moved_to_another_data_home_starts_fresh(tmp_path: Path, fake_model: FakeModel) -> None:
    assert CARRY["opencode"] is None
    began = time.monotonic()
    harness = require_harness("opencode")
    lab = Lab.create(tmp_path / "lab")
    env = configure_opencode(lab, harness, fake_model)
    a, b = tmp_path / "accounts" / "a", tmp_path / "accounts" / "b"
    for location in (a, b):
        location.mkdir(parents=True)
    state_home = Path(tempfile.mkdtemp(prefix="st2om-"))
    catalog = tmp_path / "catalog"
    directory = catalog / "agents" / HOST / "oc"
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "agent.kdl").write_text(
        f'agent "oc" {{\n    workspace "{lab.workspace}"\n{env_block(a)}'
        f'    opencode {{\n        executable "{harness.executable}"\n        model "fake/fake-model"\n'
        '        view "transcript"\n    }\n}\n')
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    seat = Seat(catalog, state_home, env)
    timings = {}
    try:
        seat.up()
        poll(lambda: seat.state() == "idle", "the served session idle", 240, seat.screen)
        converse(seat, fake_model, "remember the word OCELOT-A")
        first = seat.session_record()["sessionId"]
        stores = [path.name for path in (a / "opencode").glob("opencode*.db")]
        assert stores and not list((lab.home / ".local" / "share" / "opencode").glob("opencode*.db"))
        timings["converse under A"] = time.monotonic() - began

        # (a) Relaunched under B: opencode does not hold the session there; the resume falls back once.
        before = move(seat, a, b)
        poll(lambda: decided(seat, before), "the resume decided", 240,
             seat.screen)
        poll(lambda: seat.state() == "idle", "the fresh session idle", 240, seat.screen)
        record = seat.session_record()
        assert (record["start"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
            "fallback", first, [first])
        request = converse(seat, fake_model, "which word, WORD-B")
        assert not carried(request, "OCELOT-A")
        timings["move A->B"] = time.monotonic() - began - sum(timings.values())

        # carry() copies nothing and says why: the row was not proved.
        reason = carry("opencode", first, str(lab.workspace), env | {"XDG_DATA_HOME": str(a)},
                       env | {"XDG_DATA_HOME": str(b)})
        assert reason is not None and "opencode" in reason and "not proved in the lab" in reason
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        seat.st2("down", "--host", HOST)
        seat.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)
