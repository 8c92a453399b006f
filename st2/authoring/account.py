"""``st2 agent account``: put a seat on another declared account (docs/accounts.md §Moving a seat between accounts).

Only the seat's ``account`` line changes, through the same source-preserving rewrite and
full-catalog gate as every authoring verb (an account ``catalog.kdl`` does not declare is refused
there, at its line and column). The move itself is the supervisor's: a running seat is relaunched
on the new account at its next idle boundary, never mid-turn (:mod:`st2.accounts.placement`).
"""

from __future__ import annotations

from st2.authoring.presentation import PresentationReceipt, _setter
from st2.authoring.publication import rewrite
from st2.catalog.location import CatalogLocation

MOVE_NOTE = "a running seat moves at its next idle boundary (st2 up relaunches it)"


class AccountReceipt(PresentationReceipt):
    def line(self) -> str:
        return f"{super().line()}; {MOVE_NOTE}" if self.changed else super().line()


def set_account(location: CatalogLocation, identity: str, value: str | None) -> AccountReceipt:
    """Set (a declared account's name) or clear (``None``: the host's own) the seat's account."""
    result = rewrite(location, identity, _setter("account", value), lifecycle=False)
    return AccountReceipt(result.agent, result.changed, {"account": result.declaration.account})
