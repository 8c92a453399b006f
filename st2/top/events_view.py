"""The view's recent fleet events: the last :data:`RECENT` lines of this host's event journal
(:mod:`st2.events.journal`), read once whole and then followed (:class:`~st2.events.journal.Follower`)
so a refresh reads only what was appended. Rendered in the events' own human form."""

from __future__ import annotations

import collections

from st2.catalog.location import CatalogLocation
from st2.events import journal
from st2.runtime.scope import RuntimeScope

RECENT = 5
NONE_YET = "recent events: none journaled on {host} (st2 up writes them; st2 events --follow streams them)"


class RecentEvents:
    def __init__(self, location: CatalogLocation, count: int = RECENT) -> None:
        self.location = location
        self.directory = journal.directory_of(RuntimeScope(location.root, location.host))
        self.events: collections.deque = collections.deque(maxlen=count)
        self.follower = journal.Follower(self.directory)
        self.fresh: list = []  # what the last refresh took

    def load(self) -> None:
        """Read the journal's tail and start following it."""
        self.follower.start_at_end()
        self.events.clear()
        self.events.extend(item for item in journal.read_all(self.directory) if item.seq <= self.follower.after)

    def refresh(self) -> bool:
        """Take what was appended since; True when the pane changed."""
        self.fresh = self.follower.poll()
        self.events.extend(self.fresh)
        return bool(self.fresh)

    def lines(self) -> list[str]:
        """The pane's text, oldest of the recent first."""
        if not self.events:
            return [NONE_YET.format(host=self.location.host)]
        return ["recent events:"] + ["  " + item.human() for item in self.events]
