"""A rehearsal of the notifier's code over a scratch seat, for the seat host to run once before
it freezes its heap and forks notifiers.

Python 3.11 specializes bytecode in place the first times it runs, and a forked child that is
the first to run a code object copies its pages. The seat host therefore runs the notifier's
start-up and pass paths once over a seat of its own in a temporary directory (one unread message,
a terminal socket nobody serves, so every screen is unproven and the notice is held — nothing
is ever typed anywhere), and removes the directory (what the rehearsal saves a forked notifier:
docs/memory.md §Per-seat memory and inotify at fleet scale).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from st2.catalog.layout import CatalogPaths
from st2.base.clock import SYSTEM_CLOCK
from st2.ding.harness import adapters_for, declared_harness
from st2.ding.notifier import Notifier, SessionWatch, Settings, socket_listening
from st2.ding.ownership import OwnershipStore
from st2.ding.terminal import Terminal
from st2.drivers import delivery_owner
from st2.runtime import layout

class ScriptedTerminal(Terminal):
    """The rehearsal's terminal: every tmux client runs against a socket nobody serves (so the
    client spawn path runs and fails), and :meth:`capture` parses one canned shell screen (so
    the screen grammars run) — nothing ever reaches a real terminal."""

    SCREEN = "$ \n" + "\n" * 10

    def capture(self):
        from st2.drivers.screen import Screen

        super().capture()
        return Screen.parse(self.SCREEN, 2, 0, 200)


MESSAGE = "---\nfrom: h.rehearsal\nsubject: rehearsal\n---\nrehearsal\n"


def rehearse(passes: int = 3) -> None:
    """Run the notifier's paths over a scratch seat; leave nothing behind. Never raises."""
    directory = Path(tempfile.mkdtemp(prefix="st2-rehearsal-"))
    try:
        seat = CatalogPaths(directory / "catalog").seat("h", "rehearsal")
        seat.inbox.mkdir(parents=True)
        seat.declaration.write_text('agent "rehearsal" {\n    argv "sh"\n    ding\n}\n')
        (seat.inbox / "1700000000000-aaaaaa.md").write_text(MESSAGE)
        harness, _ = declared_harness(seat.declaration)
        delivery_owner(seat.declaration)
        socket = str(directory / "no-terminal")
        store = OwnershipStore(layout.ding_ownership(directory), layout.staging(directory), "h.rehearsal")
        layout.staging(directory).mkdir()
        notifier = Notifier(seat, ScriptedTerminal(socket, timeout=1.0), store, adapters_for(harness), SYSTEM_CLOCK,
                            Settings(retry_backoff=0.0), log=lambda line: None)
        sessions = SessionWatch()
        for _ in range(passes):
            sessions.step(socket_listening(socket))
            notifier.pass_once()
            notifier.next_attempt = None
    except Exception:  # a rehearsal only warms; the real notifier reports its own problems
        pass
    finally:
        shutil.rmtree(directory, ignore_errors=True)
