"""The Codex delivery pump: the seat's unread mail → one turn input, through the durable ledger
(:mod:`st2.delivery.ledger`, Codex profile).

The batch is the shared bounded, escaped encoding (:mod:`st2.delivery.batch`); each message line
carries its ledger correlation, which is what lets the thread's own history later prove the input
was consumed.

Evidence, Codex profile: the ``turn/start``/``turn/steer`` reply → transportAccepted (an error
reply → a ``rejected`` negative receipt); the ``userMessage`` item carrying the correlation →
consumed (released). After a restart an entry still at attempted or transportAccepted is
ambiguous and holds until :meth:`Pump.settle` reads the resumed thread's history: the correlation
present → consumed; a complete history without it → ``absent``, which re-authorizes exactly one
retry. The pump never archives: settlement stays with the recipient.
"""

from __future__ import annotations

from pathlib import Path

from st2.delivery.batch import (MARKER, MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, MAX_BODY_BYTES, PREAMBLE,  # noqa: F401
                                Batch, correlations_in, encode_batch, own_next_batch)
from st2.delivery.ledger import CODEX, Event, Phase
from st2.delivery.pump import LedgerPump


def user_message_text(item: dict) -> str:
    """The text of a ``userMessage`` thread item (its text content parts joined)."""
    parts = item.get("content") if isinstance(item, dict) else None
    if not isinstance(parts, list):
        return ""
    return "\n".join(part.get("text", "") for part in parts if isinstance(part, dict) and part.get("type") == "text"
                     and isinstance(part.get("text"), str))


class Pump(LedgerPump):
    """One seat's pump state over its ledger. ``quarantine`` is the reason delivery holds for
    good (a quarantined ledger, never rewritten) or None."""

    profile = CODEX

    def __init__(self, seat_directory: Path, ledger_path: Path, staging: Path, agent: str, runtime_id: str,
                 log=lambda message: None, scope=None, account: str | None = None) -> None:
        super().__init__(seat_directory, ledger_path, staging, agent, runtime_id, log, scope, account)
        self.in_flight: dict[int, tuple[str, ...]] = {}     # request id -> filenames
        self.unsettled: bool = bool(self.ledger and self.ambiguous())

    def still_unsettled(self) -> bool:
        """:attr:`unsettled`, re-derived after pruning the entries whose message the recipient
        settled (:meth:`still_ambiguous`): an entry no thread history can settle — one carried
        forward from a pre-ledger release — holds only until its message is archived."""
        if self.unsettled and self.ledger is not None:
            self.unsettled = self.still_ambiguous()
        return self.unsettled

    def next_batch(self, binding: str) -> Batch | None:
        """Own and encode the next batch (ledger written before this returns), or None."""
        if self.ledger is None or self.unsettled or self.in_flight:
            return None
        return own_next_batch(self.ledger, self.seat_directory, binding, self.log)

    def sent(self, request_id: int, batch: Batch) -> None:
        self.in_flight[request_id] = batch.filenames

    def on_reply(self, request_id, ok: bool) -> bool:
        """The transport's answer to a turn request; True when the id was a delivery."""
        filenames = self.in_flight.pop(request_id, None)
        if filenames is None:
            return False
        self._apply(filenames, Event.TRANSPORT_ACCEPTED if ok else Event.REJECTED)
        return True

    def on_user_message(self, item: dict) -> list[str]:
        """A ``userMessage`` item: consume every entry whose correlation it carries."""
        if self.ledger is None:
            return []
        found = correlations_in(user_message_text(item))
        consumed = [entry.filename for entry in self.ledger.entries.values()
                    if entry.correlation in found and entry.phase < Phase.CONSUMED and entry.negative is None]
        self._apply(consumed, Event.CONSUMED)
        return consumed

    def settle(self, turns: list | None, binding: str) -> None:
        """Settle the ambiguous entries bound to ``binding`` from that thread's complete history
        (``thread/read`` with turns); ``None`` (no history could be read) keeps them holding, and
        so does an entry bound to another thread — only its own thread's history can prove or
        disprove it."""
        if self.ledger is None or turns is None:
            return
        seen: set[str] = set()
        for turn in turns:
            for item in (turn.get("items") or []) if isinstance(turn, dict) else []:
                if isinstance(item, dict) and item.get("type") == "userMessage":
                    seen |= correlations_in(user_message_text(item))
        for entry in self.ambiguous():
            if entry.binding != binding:
                continue
            if entry.correlation in seen:
                self._apply([entry.filename], Event.CONSUMED)
            elif entry.attestation.value == "observed":
                self._apply([entry.filename], Event.ABSENT)
        self.unsettled = bool(self.ambiguous())
        if self.unsettled:
            self.log("ambiguous deliveries remain after reading the thread's history; they hold")
