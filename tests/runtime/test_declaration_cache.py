"""The roster's host-local declaration cache (st2/runtime/declaration_cache.py): a roster built from cached
projections is byte-identical to one built from fresh parses — cold, warm and after every kind of
invalidation — an entry is served only while the file's full stat identity is unchanged and stored
only once the timestamps are past the settle bound, and a malformed, planted or foreign cache
file is a miss, never an error or a hang."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, build
from st2.runtime import declaration_cache as declared
from st2.roster.build import build_roster
from st2.runtime.declaration_cache import SETTLE_NS, DeclarationCache
from st2.roster.wire import to_json
from support import run_st2, st2_env

BROKEN = 'agent "g-broken" {\n    argv "sh"\n    mystery-node 1\n}\n'
UNICODE = 'agent "h-unicode" {\n    name "Sée ✓"\n    description "naïve — ok"\n    argv "sh"\n}\n'


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = build(tmp_path / "catalog")
    for identity, text in (("g-broken", BROKEN), ("h-unicode", UNICODE)):
        (root / "agents" / "alpha" / identity).mkdir(parents=True)
        (root / "agents" / "alpha" / identity / "agent.kdl").write_text(text)
    return root


@pytest.fixture
def later(monkeypatch):
    """Let the clock run past the settle bound: every file written so far is settled."""
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + SETTLE_NS + 1_000_000_000)


def roster_bytes(root: Path, cache: DeclarationCache | None, *, enrich: bool = False) -> tuple[str, list[str]]:
    rows, problems = build_roster(root, NOW_MS, enrich=enrich, host="alpha", cache=cache)
    return to_json(rows, enrich), problems


def parses(monkeypatch) -> list[str]:
    """Record every fresh parse the cache falls back to."""
    seen: list[str] = []
    real = declared.load_facts

    def counting(path: str):
        seen.append(path)
        return real(path)

    monkeypatch.setattr(declared, "load_facts", counting)
    return seen


def declarations(root: Path) -> list[Path]:
    return sorted(root.glob("agents/*/*/agent.kdl"))


def test_cached_rows_are_byte_identical_cold_warm_and_after_invalidation(catalog: Path, later, monkeypatch) -> None:
    reference = roster_bytes(catalog, None)
    assert '"desiredState":"invalid"' in reference[0] and "Sée ✓" in reference[0] and reference[1]

    cold = DeclarationCache.open(catalog)
    assert roster_bytes(catalog, cold) == reference
    stored = json.loads(cold.file.read_text())
    assert stored["schema"] == "st2.declaration-cache.v1"
    assert sorted(stored["entries"]) == [str(path) for path in declarations(catalog)]

    stored_bytes = cold.file.read_bytes()
    seen = parses(monkeypatch)
    assert roster_bytes(catalog, DeclarationCache.open(catalog)) == reference
    assert roster_bytes(catalog, DeclarationCache.open(catalog), enrich=True) == roster_bytes(catalog, None, enrich=True)
    assert seen == [] and cold.file.read_bytes() == stored_bytes  # warm: no parse, nothing published

    # A same-size rewrite of one declaration (in place: same inode) is parsed again.
    target = catalog / "agents" / "alpha" / "a-fresh" / "agent.kdl"
    text = target.read_text()
    rewritten = text.replace('name "Fresh"', 'name "Frosh"')
    assert len(rewritten) == len(text) and rewritten != text
    with open(target, "r+") as handle:
        handle.write(rewritten)
    warm = DeclarationCache.open(catalog)
    after = roster_bytes(catalog, warm)
    assert seen == [str(target)]
    assert after == roster_bytes(catalog, None) and '"name":"Frosh"' in after[0]


def test_an_entry_is_served_only_under_its_full_stat_identity(catalog: Path, later, monkeypatch) -> None:
    roster_bytes(catalog, DeclarationCache.open(catalog))
    target = catalog / "agents" / "alpha" / "a-fresh" / "agent.kdl"
    seen = parses(monkeypatch)
    status = os.stat(target)
    os.utime(target, ns=(status.st_atime_ns, status.st_mtime_ns + 1))  # mtime alone moves
    roster_bytes(catalog, DeclarationCache.open(catalog))
    assert seen == [str(target)]
    # Replaced by rename, same size, the timestamps the entry was stored under put back: the
    # inode and ctime still tell it apart.
    status = os.stat(target)
    replacement = target.with_name("agent.kdl.new")
    replacement.write_text(target.read_text().replace('name "Fresh"', 'name "Frosh"'))
    os.utime(replacement, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(replacement, target)
    assert declared.stat_key(str(target))[2:4] == [status.st_size, status.st_mtime_ns]
    seen.clear()
    rows = roster_bytes(catalog, DeclarationCache.open(catalog))
    assert seen == [str(target)] and rows == roster_bytes(catalog, None) and '"name":"Frosh"' in rows[0]


def test_a_declaration_written_within_the_settle_bound_is_never_stored(catalog: Path, monkeypatch) -> None:
    """Without the clock running past the bound, nothing just written is cached: a same-size
    rewrite inside the filesystem's timestamp granularity keeps every stat field, so only not
    trusting young timestamps keeps it from being served stale."""
    cache = DeclarationCache.open(catalog)
    reference = roster_bytes(catalog, None)
    assert roster_bytes(catalog, cache) == reference
    assert cache.entries == {} and not cache.file.exists()
    target = catalog / "agents" / "alpha" / "a-fresh" / "agent.kdl"
    first, second = 'agent "a-fresh" {\n    name "One"\n    argv "sh"\n}\n', 'agent "a-fresh" {\n    name "Two"\n    argv "sh"\n}\n'
    for text in (first, second):  # in place, same size, microseconds apart
        with open(target, "r+") as handle:
            handle.truncate(0)
            handle.write(text)
        facts = cache.facts(str(target))
        assert facts["name"] == text.split('"')[3]
    assert str(target) not in cache.entries


@pytest.mark.parametrize("planted", ["garbage", "duplicate", "schema", "parser", "entry", "key", "fifo", "symlink", "huge"])
def test_a_malformed_or_planted_cache_file_is_a_miss(catalog: Path, later, monkeypatch, tmp_path: Path, planted: str) -> None:
    reference = roster_bytes(catalog, None)
    cache = DeclarationCache.open(catalog)
    roster_bytes(catalog, cache)
    file = cache.file
    good = json.loads(file.read_text())
    first = str(declarations(catalog)[0])
    file.unlink()
    if planted == "garbage":
        file.write_bytes(b"\xff{not json")
    elif planted == "duplicate":
        file.write_text('{"schema":"x","schema":"st2.declaration-cache.v1"}')
    elif planted in ("schema", "parser"):
        file.write_text(json.dumps({**good, planted: "another"}))
    elif planted == "entry":  # one entry's facts lie about their shape: that entry alone is a miss
        good["entries"][first]["facts"]["name"] = 7
        file.write_text(json.dumps(good))
    elif planted == "key":
        good["entries"][first]["key"] = [True, 1, 2, 3, 4]
        file.write_text(json.dumps(good))
    elif planted == "fifo":
        os.mkfifo(file)
    elif planted == "symlink":
        other = tmp_path / "elsewhere.json"
        other.write_text(json.dumps(good))
        file.symlink_to(other)
    elif planted == "huge":
        file.write_bytes(b" " * (declared.CACHE_LIMIT + 1))
    seen = parses(monkeypatch)
    assert roster_bytes(catalog, DeclarationCache.open(catalog)) == reference
    expected = [first] if planted in ("entry", "key") else [str(path) for path in declarations(catalog)]
    assert seen == expected
    # Whatever was planted (a FIFO, a symlink: replaced, never read through) is now a good cache.
    assert json.loads(file.read_text())["entries"].keys() == good["entries"].keys()


def test_removed_seats_leave_the_cache(catalog: Path, later) -> None:
    roster_bytes(catalog, DeclarationCache.open(catalog))
    gone = catalog / "agents" / "alpha" / "g-broken"
    (gone / "agent.kdl").unlink()
    gone.rmdir()
    cache = DeclarationCache.open(catalog)
    roster_bytes(catalog, cache)
    assert str(gone / "agent.kdl") not in json.loads(cache.file.read_text())["entries"]


@pytest.mark.process
def test_st2_agents_is_byte_identical_with_the_cache_cold_warm_and_invalidated(catalog: Path, tmp_path: Path) -> None:
    """Through the real CLI: each run's stdout and stderr equal the uncached in-process roster."""
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS), XDG_STATE_HOME=str(tmp_path / "state"))
    newest = max(max(os.stat(path).st_mtime_ns, os.stat(path).st_ctime_ns) for path in declarations(catalog))
    while time.time_ns() - newest < SETTLE_NS:  # the real clock passes the bound
        time.sleep(0.05)

    def agents() -> tuple[str, str]:
        """stdout and the roster's own warnings (the record readers' log lines are not the cache's)."""
        result = run_st2("--host", "alpha", "agents", "--json", env=env)
        assert result.returncode == 0, result.stderr
        return result.stdout, "".join(line for line in result.stderr.splitlines(keepends=True)
                                      if line.startswith("warning: "))

    def expected() -> tuple[str, str]:
        rows, problems = roster_bytes(catalog, None)
        return rows + "\n", "".join(f"warning: {problem}\n" for problem in problems)

    cache_files = lambda: sorted((tmp_path / "state" / "st2" / "cache").glob("declarations.*.json"))  # noqa: E731
    assert agents() == expected() and len(cache_files()) == 1  # cold: parsed, then stored
    stored = cache_files()[0].read_bytes()
    assert agents() == expected() and cache_files()[0].read_bytes() == stored  # warm: nothing to store
    target = catalog / "agents" / "beta" / "f-retired" / "agent.kdl"
    target.write_text(target.read_text().replace("argv", "argv", 1) + "\n")
    assert agents() == expected()  # invalidated by the rewrite
    cache_files()[0].write_text("{}")
    assert agents() == expected()  # malformed: a miss
