"""The event engine in process (unit tier: real files and a real thread, no process): without
inotify its interval timer alone finds the transitions, each once."""

from __future__ import annotations

from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.events import journal
from st2.events.engine import EventEngine
from st2.runtime.scope import RuntimeScope
from support import poll_for

from events_support import state


def test_without_a_watch_the_timer_alone_finds_each_transition_once(tmp_path: Path) -> None:
    catalog = tmp_path / "c"
    seat = catalog / "agents" / "h" / "a"
    (seat / "resources").mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "a" {\n    desired-state "suspended" reason="x"\n    argv "true"\n}\n')
    state(seat, "none")
    scope = RuntimeScope(catalog, "h", state_dir=tmp_path / "s")
    scope.ensure()
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
               "DELEGATION_KIT_USAGE_FILE": str(tmp_path / "usage.txt")}
    engine = EventEngine(CatalogLocation(catalog, "h"), scope, lambda scope, task: None, interval=0.1,
                         environ=environ)
    engine.watch.inotify, engine.watch.error = None, "inotify refused"  # as if it could not be set up: inert
    said: list[str] = []
    engine.say = said.append
    directory = journal.directory_of(scope)
    engine.start()
    try:
        poll_for(lambda: (directory / journal.STATE).exists(), "the baseline")
        state(seat, "human")
        poll_for(lambda: journal.read_all(directory), "the blocked event from a timer pass")
        passes = engine.full_passes
        poll_for(lambda: engine.full_passes >= passes + 5, "five more timer passes")
        state(seat, "none")
        poll_for(lambda: len(journal.read_all(directory)) >= 2, "the unblocked event")
        assert [(item.seq, item.from_value, item.to_value) for item in journal.read_all(directory)] == [
            (1, "none", "human"), (2, "human", "none")]
        assert said == ["events: filesystem watch unavailable (inotify refused); re-reading every 0.1s"]
    finally:
        engine.stop()
