"""The supervisor's budget step: each pass publishes every declared account's budget record
(:func:`st2.accounts.budget.publish`), what the delivery hold's budget reason judges
(:mod:`st2.delivery.budget`), and says each problem line once while it lasts. A fleet with no
account declared pays nothing after its first pass (which still removes the records of accounts
declared earlier)."""

from __future__ import annotations

from typing import Callable


class BudgetPublisher:
    def __init__(self, scope_directory, catalog_root, say: Callable[[str], None]) -> None:
        self.scope_directory = scope_directory
        self.catalog_root = catalog_root
        self.say = say
        self.idle = False          # the last publication had no account to publish
        self.problems: set[str] = set()

    def publish(self, view) -> None:
        """Publish the accounts of ``view`` (a :class:`st2.supervisor.catalog_view.CatalogView`)."""
        accounts = getattr(getattr(view, "catalog", None), "accounts", None) or {}
        if not accounts and self.idle:
            return
        from st2.accounts.budget import publish

        problems = publish(self.scope_directory, accounts, self.catalog_root)
        for line in problems:
            if line not in self.problems:
                self.say(line)
        self.problems = set(problems)
        self.idle = not accounts
