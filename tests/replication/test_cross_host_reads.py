"""Cross-host reads (issue 21 item 2) over two catalog copies on one machine, with the files
carried between them the way a replication engine carries them (tests/replication_engine.py:
late, staged under the engine's temporary name, mtimes rewritten): host A's roster shows host
B's seats with B's records projected by their embedded stamps alone, Doctor only advises about
anything remote, and the engines' own files are overlooked by every reader and by discovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replication_engine import REWRITTEN_MTIME_S, Engine, clone_declarations
from roster_fixture import MINUTE_MS, NOW_MS, context_record, state_record
from support import run_st2, st2_env

pytestmark = pytest.mark.process

SEAT = 'agent "{identity}" {{\n    argv "sh" "-c" "true"\n}}\n'
CONFLICT = ".sync-conflict-20261201-120000-ABCDEFG"


def declare(catalog: Path, host: str, identity: str) -> Path:
    seat = catalog / "agents" / host / identity
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (seat / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    (seat / "agent.kdl").write_text(SEAT.format(identity=identity))
    return seat


def write(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record) + "\n")


@pytest.fixture
def hosts(tmp_path: Path) -> tuple[Path, Path]:
    """Catalog copies of host a and host b: a declares a.local, b declares b.fresh and b.stale;
    the declarations reach both hosts through the operator's configuration."""
    a, b = tmp_path / "a", tmp_path / "b"
    declare(a, "a", "local")
    declare(b, "b", "fresh")
    declare(b, "b", "stale")
    declare(b, "b", "legacy")
    clone_declarations(a, b)
    clone_declarations(b, a)
    # B's producers write their records on B, stamped by B's clock.
    fresh, stale, legacy = (b / "agents" / "b" / name for name in ("fresh", "stale", "legacy"))
    (fresh / "status").write_text(f"busy\nv1 {NOW_MS - 2 * MINUTE_MS}\n")
    write(fresh / "harness-state", state_record("fresh", "active", NOW_MS - 3 * MINUTE_MS, ptySession="b.fresh"))
    write(fresh / "harness-context", context_record("fresh", "claude", NOW_MS - 4 * MINUTE_MS))
    (stale / "status").write_text(f"available\nv1 {NOW_MS - 16 * MINUTE_MS}\n")
    write(stale / "harness-state", state_record("stale", "idle", NOW_MS - 16 * MINUTE_MS, ptySession="b.stale"))
    write(stale / "harness-context", context_record("stale", "codex", NOW_MS - 61 * MINUTE_MS))
    (legacy / "status").write_text("dnd\n")  # a legacy word: its only time is its mtime
    os.utime(legacy / "status", (NOW_MS / 1000 - 60, NOW_MS / 1000 - 60))  # written a minute ago on B
    return a, b


def roster(catalog: Path, *args: str, host: str = "a") -> list[dict]:
    result = run_st2("--host", host, "agents", "--json", *args, env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def carry_records(engine: Engine, b: Path, a: Path) -> None:
    for name in ("fresh", "stale", "legacy"):
        for record in ("status", "harness-state", "harness-context"):
            if (b / "agents" / "b" / name / record).exists():
                # The engine writes the file now: an mtime far from the record's own stamp.
                engine.copy(b, a, f"agents/b/{name}/{record}", mtime_s=NOW_MS / 1000)


def test_host_a_reads_host_bs_records_by_their_embedded_stamps_alone(hosts) -> None:
    a, b = hosts
    before = {row["identity"]: row for row in roster(a)}
    assert before["b.fresh"]["observedState"] is None and before["b.fresh"]["status"] == "offline"
    carry_records(Engine(), b, a)
    rows = {row["identity"]: row for row in roster(a)}
    assert list(rows) == ["a.local", "b.fresh", "b.legacy", "b.stale"]
    on_b = {row["identity"]: row for row in roster(b, host="b")}
    # A fresh remote record reads exactly as on its own host, with its age from its stamp.
    fresh = rows["b.fresh"]
    assert (fresh["status"], fresh["observedState"]["state"], fresh["observedState"]["reason"]) == ("busy", "active", None)
    assert fresh["context"]["ageMs"] == 4 * MINUTE_MS and fresh["context"]["stale"] is False
    assert fresh == on_b["b.fresh"]
    # Past its horizon: presence and observed state unknown(stale), the context reading kept
    # with stale: true and its age, although the engine just wrote every file (fresh mtimes).
    stale = rows["b.stale"]
    assert stale["status"] == "unknown"
    assert (stale["observedState"]["state"], stale["observedState"]["reason"]) == ("unknown", "stale")
    assert (stale["context"]["stale"], stale["context"]["ageMs"], stale["context"]["usedPercent"]) == (True, 61 * MINUTE_MS, 33.0)
    assert stale == on_b["b.stale"]
    # A legacy word carries no stamp. On its own host B the file's mtime is its writer's and
    # counts; on A the mtime is the engine's (it wrote the copy just now), so presence is unknown.
    assert on_b["b.legacy"]["status"] == "dnd"
    assert rows["b.legacy"]["status"] == "unknown"


def test_a_far_future_engine_mtime_changes_nothing_a_remote_row_says(hosts) -> None:
    a, b = hosts
    engine = Engine()
    carry_records(engine, b, a)
    first = roster(a, "--enrich")
    for name in ("fresh", "stale", "legacy"):
        engine.copy(b, a, f"agents/b/{name}/status", mtime_s=REWRITTEN_MTIME_S)
    assert roster(a, "--enrich") == first


def test_host_option_narrows_the_roster_to_one_hosts_seats(hosts) -> None:
    a, b = hosts
    carry_records(Engine(), b, a)
    result = run_st2("agents", "--json", "--host", "b", env=st2_env(a, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert [row["identity"] for row in json.loads(result.stdout)] == ["b.fresh", "b.legacy", "b.stale"]
    result = run_st2("agents", "--host", "a", env=st2_env(a, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == ["a.local"]
    # An explicit <host>.<identity> still names its seat.
    result = run_st2("agents", "--json", "--host", "a", "--identity", "b.fresh", env=st2_env(a, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert [row["identity"] for row in json.loads(result.stdout)] == ["b.fresh"]


def doctor(catalog: Path, host: str = "a"):
    result = run_st2("doctor", "--host", host, env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout.splitlines()


def test_doctor_only_advises_about_anything_remote(hosts) -> None:
    a, b = hosts
    carry_records(Engine(), b, a)
    baseline, _ = doctor(a)
    # B's seat declaration broken on B, delivered to A; B's mailbox a symlink in A's copy.
    (a / "agents" / "b" / "fresh" / "agent.kdl").write_text('agent "fresh" {\n    argv\n')
    inbox = a / "agents" / "b" / "stale" / "resources" / "inbox"
    inbox.parent.mkdir(parents=True, exist_ok=True)
    inbox.symlink_to(a / "agents" / "a" / "local" / "resources" / "inbox")
    status, lines = doctor(a)
    assert status == baseline
    remote = [line for line in lines if " b." in line or "agents/b/" in line]
    assert remote and all(line.startswith("advisory: ") for line in remote), lines
    assert any(": remote-declaration: " in line for line in remote)
    assert any(line.startswith("advisory: b.stale: mailbox-unsafe: ") for line in remote)
    assert any(line.startswith("advisory: b.stale: context-stale: ") for line in remote)
    # The same faults on this host's own seat are failures.
    status, lines = doctor(a, host="b")
    assert status == 1 and any(line.startswith("failure: b.stale: mailbox-unsafe: ") for line in lines)


def test_engine_files_are_overlooked_by_discovery_and_every_reader(hosts) -> None:
    a, b = hosts
    carry_records(Engine(), b, a)
    clean = roster(a)
    clean_validate = run_st2("validate", "--host", "a", env=st2_env(a))
    assert clean_validate.returncode == 0, clean_validate.stdout + clean_validate.stderr
    seat = a / "agents" / "b" / "fresh"
    debris = {
        a / ".stfolder": "dir", a / ".stversions" / "agents" / "b" / "fresh" / "status~20261201-120000": "file",
        a / "agents" / ".stversions": "dir", a / "agents" / "b" / ".syncthing.x.tmp": "file",
        a / "agents" / "b" / f"fresh{CONFLICT}": "file", a / "agents" / ".~tmp~": "dir",
        a / "agents" / "b" / ".unison.fresh.0a1b.unison.tmp": "dir", a / "agents" / "b" / ".fresh.Ab12Cd": "file",
        seat / "resources" / "inbox" / ".syncthing.1788000000000-abcdef.md.tmp": "file",
        seat / "resources" / "inbox" / f"1788000000000-abcdef{CONFLICT}.md": "file",
        seat / f"status{CONFLICT}": "file", seat / f"harness-state{CONFLICT}": "file",
        a / "_templates" / "base" / ".syncthing.agent.kdl.tmp": "file",
        a / "principals" / ".stversions": "dir",
    }
    for path, kind in debris.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dir":
            path.mkdir(exist_ok=True)
        else:
            path.write_text("engine bytes\n")
    assert roster(a) == clean
    enriched = roster(a, "--enrich")
    assert {row["identity"]: row["inbox"] for row in enriched}["b.fresh"] == 0
    result = run_st2("--host", "a", "agents", "--json", env=st2_env(a, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert result.stderr == ""  # not even a warning: discovery overlooked every engine entry
    validate = run_st2("validate", "--host", "a", env=st2_env(a))
    assert validate.returncode == 0, validate.stdout + validate.stderr
    # A directory named like a conflict copy is no engine's (engines make those as files), and no
    # seat may carry that name either: the sync rules never replicate it, so mail to it from
    # another host would be lost. Strict discovery refuses it, naming it.
    (a / "agents" / "b" / f"other{CONFLICT}").mkdir()
    warned = run_st2("validate", "--host", "a", env=st2_env(a))
    assert warned.returncode == 1 and f"agents/b/other{CONFLICT}" in warned.stdout + warned.stderr
    assert "*.sync-conflict-*" in warned.stdout
    (a / "agents" / "b" / f"other{CONFLICT}").rmdir()
    # A symlink with an engine's name is not an engine's file: strict discovery still refuses it.
    (a / "agents" / "b" / ".syncthing.y.tmp").symlink_to(seat)
    refused = run_st2("validate", "--host", "a", env=st2_env(a))
    assert refused.returncode == 1 and "agents/b/.syncthing.y.tmp" in refused.stdout + refused.stderr


def test_a_conflict_copy_is_named_by_doctor_and_one_of_a_declaration_refused_by_validate(hosts) -> None:
    a, _ = hosts
    baseline, _ = doctor(a)  # a.local is not running here: that failure is not this test's
    seat = a / "agents" / "b" / "fresh"
    (seat / f"status{CONFLICT}").write_text("dnd\n")
    status, lines = doctor(a)
    assert status == baseline
    named = [line for line in lines if ": conflict-copy: " in line]
    assert named == [f"advisory: catalog: conflict-copy: agents/b/fresh/status{CONFLICT} is a replication "
                     "engine's conflict copy of status; readers ignore it; delete it once its content is reconciled"]
    assert run_st2("validate", "--host", "a", env=st2_env(a)).returncode == 0  # not a declaration
    # Declarations replicated by the engine (--with-declarations): two hosts edited agent.kdl.
    (seat / f"agent{CONFLICT}.kdl").write_text(SEAT.format(identity="fresh").replace("true", "false"))
    validate = run_st2("validate", "--host", "a", env=st2_env(a))
    assert validate.returncode == 1
    assert (f"agents/b/fresh/agent{CONFLICT}.kdl: error[declaration-conflict-copy]: agents/b/fresh/agent{CONFLICT}.kdl "
            "is a replication engine's conflict copy of agent.kdl: it was edited on two hosts at once") in validate.stdout
    status, lines = doctor(a)
    assert status == baseline, lines
    assert (f"advisory: catalog: conflict-copy: agents/b/fresh/agent{CONFLICT}.kdl is a replication engine's "
            "conflict copy of agent.kdl; validate refuses the catalog until it is merged into the declaration and deleted") in lines
    # The copy is never read as the declaration: the roster's b.fresh is the agent.kdl one.
    assert [row["identity"] for row in roster(a)].count("b.fresh") == 1
