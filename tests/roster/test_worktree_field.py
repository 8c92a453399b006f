"""The roster's ``worktree`` field, appended after ``busAddress``: this host's worktree-state
record as a pinned object, null for a seat declaring no worktree, for another host's seat, and
for a record that is missing, malformed or names another seat; ``st2 top``'s detail line."""

from __future__ import annotations

from pathlib import Path

from st2.roster.build import build_roster
from st2.roster.human import worktree_text
from st2.roster.wire import to_json
from st2.runtime import layout
from st2.runtime.scope import RuntimeScope
from st2.worktree import state

NOW_MS = 1_788_000_100_000
TAIL = '"busAddress":"h.{seat}","worktree":{worktree},"deliveryHold":null,"account":null,"budgetHold":null}}'
READY = ('{"path":"/srv/repo.st2-worktrees/h.ready","branch":"seat-ready","state":"ready","reason":null,'
         '"checkedOut":"seat-ready","dirty":3,"ahead":2,"behind":1,"upstream":"origin/main",'
         '"lastCommitAgeMs":3600000,"observedAtMs":1788000090000}')
HELD = ('{"path":"/srv/repo.st2-worktrees/h.held","branch":"seat-held","state":"held","reason":"/srv/x has a '
        'detached HEAD (0123456789ab)","checkedOut":null,"dirty":null,"ahead":null,"behind":null,"upstream":null,'
        '"lastCommitAgeMs":null,"observedAtMs":1788000090000}')


def _seat(catalog: Path, host: str, identity: str, worktree: bool) -> None:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True)
    block = f'\n    worktree {{\n        repo "/srv/repo"\n        branch "seat-{identity}"\n    }}' if worktree else ""
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "true"{block}\n}}\n')


def test_the_worktree_field_is_pinned_and_null_wherever_nothing_is_known(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    catalog = tmp_path / "catalog"
    for identity, worktree in (("ready", True), ("held", True), ("plain", False), ("missing", True),
                               ("garbage", True), ("foreign", True)):
        _seat(catalog, "h", identity, worktree)
    _seat(catalog, "other", "remote", True)
    scope = RuntimeScope(catalog, "h")
    scope.ensure()
    state.write(scope.directory, state.WorktreeState(
        "h.ready", "/srv/repo.st2-worktrees/h.ready", "seat-ready", "ready", None, "seat-ready", 3, 2, 1,
        "origin/main", NOW_MS - 3_600_000, NOW_MS - 10_000))
    state.write(scope.directory, state.WorktreeState(
        "h.held", "/srv/repo.st2-worktrees/h.held", "seat-held", "held", "/srv/x has a detached HEAD (0123456789ab)",
        observed_at_ms=NOW_MS - 10_000))
    layout.worktree_state(scope.directory, "h.foreign").write_bytes(   # a record naming another seat
        layout.worktree_state(scope.directory, "h.ready").read_bytes())
    layout.worktree_state(scope.directory, "h.garbage").write_bytes(b'{"schema":"st2.worktree-state.v1",')

    rows, _ = build_roster(catalog, NOW_MS, host="h")
    text = to_json(rows, False)
    for seat, worktree in (("ready", READY), ("held", HELD), ("plain", "null"), ("missing", "null"),
                           ("garbage", "null"), ("foreign", "null")):
        assert TAIL.format(seat=seat, worktree=worktree) in text, seat
    assert text.endswith('"busAddress":"other.remote","worktree":null,"deliveryHold":null,"account":null,"budgetHold":null}]')
    by_identity = {row.identity: row for row in rows}
    assert worktree_text(by_identity["h.ready"].worktree) == (
        "/srv/repo.st2-worktrees/h.ready on seat-ready, ready: 3 dirty, ahead 2 behind 1 of origin/main, "
        "last commit 1h ago")
    assert worktree_text(by_identity["h.held"].worktree) == (
        "/srv/repo.st2-worktrees/h.held on seat-held, held: /srv/x has a detached HEAD (0123456789ab)")
    assert worktree_text(by_identity["h.plain"].worktree) == "none on this host"


def test_the_record_reader_refuses_what_is_not_its_schema_for_its_seat() -> None:
    good = state.WorktreeState("h.x", "/p", "b", "ready", dirty=1, observed_at_ms=5)
    assert state.read(good.to_json(), "h.x") == good
    assert state.read(good.to_json(), "h.y") is None
    for data in (None, b"", b"[]", b"{", good.to_json().replace(b'"ready"', b'"gone"'),
                 good.to_json().replace(b'"dirty":1', b'"dirty":-1'), good.to_json().replace(b'"dirty":1', b'"dirty":true'),
                 good.to_json().replace(b'v1"', b'v2"')):
        assert state.read(data, "h.x") is None, data
