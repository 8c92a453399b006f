"""What every native delivery pump shares over its ledger (:mod:`st2.delivery.ledger`): loading it
under the harness's profile (a quarantined ledger holds delivery for good and is never
rewritten), the entries without durable evidence a successor must settle, and applying evidence
(a refused edge is logged, never raised). Standard library only."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from st2.bus.mailbox import list_inbox
from st2.catalog.layout import STATUS
from st2.delivery.hold import delivery_hold
from st2.delivery.ledger import Entry, Event, Ledger, Profile, Quarantined, Refused, Verdict


class LedgerPump:
    profile: Profile

    def __init__(self, seat_directory: Path, ledger_path: Path, staging: Path, agent: str, runtime_id: str,
                 log=lambda message: None, scope=None, account: str | None = None) -> None:
        """``scope`` is the runtime scope directory and ``account`` the declared account this
        generation runs on (its ``ST2_ACCOUNT``): with both the hold's budget reason is asked too
        (:func:`st2.delivery.hold.delivery_hold`); a seat on no account reads nothing more than
        its status, as before accounts."""
        self.seat_directory = Path(seat_directory)
        self.scope = scope if account is not None else None
        self.account = account
        self.runtime_id = runtime_id
        self.log = log
        self.quarantine: str | None = None
        self.ledger: Ledger | None = None
        try:
            self.ledger = Ledger.load(ledger_path, staging, self.profile, agent, runtime_id)
        except Quarantined as error:
            self.quarantine = str(error)
            log(f"delivery ledger {ledger_path} quarantined ({error}); delivery holds and the file is left as is")

    def quarantine_with(self, reason: str) -> None:
        """Hold delivery for good as a quarantined ledger does, for a reason found before the
        ledger was loaded (a self-contradicting pre-ledger record, :mod:`st2.delivery.legacy_state`)."""
        self.ledger = None
        self.quarantine = reason

    def hold(self, now_ms: int) -> str | None:
        """The seat's delivery hold (:mod:`st2.delivery.hold`): while it is up the session asks
        for no batch, so the mail stays unread and unowned."""
        return delivery_hold(self.seat_directory / STATUS, now_ms, self.scope,
                             self.runtime_id if self.scope is not None else None, self.account)

    def ambiguous(self) -> list[Entry]:
        """Entries without durable evidence yet (attempted, transportAccepted short of the
        profile's proof, or asserted): they hold, and only evidence settles them."""
        if self.ledger is None:
            return []
        return [entry for entry in self.ledger.entries.values()
                if self.ledger.verdict(entry.filename) is Verdict.HOLD]

    def still_ambiguous(self) -> bool:
        """Whether an entry still holds once every entry whose message left the unread set is
        pruned: the recipient settled that message, so no entry for it may keep holding delivery
        (an ambiguous attempt or a carried-forward asserted one alike)."""
        if not self.ambiguous():
            return False
        self.ledger.prune([message.filename for message in list_inbox(self.seat_directory)])
        return bool(self.ambiguous())

    def bindings(self) -> set[str]:
        """The harness sessions the ambiguous entries were delivered to: only each one's own
        history can settle them."""
        return {entry.binding for entry in self.ambiguous()}

    def _apply(self, filenames: Iterable[str], event: Event) -> None:
        for name in filenames:
            try:
                self.ledger.apply(name, event)
            except Refused as error:
                self.log(f"ledger evidence for {name} refused: {error}")
