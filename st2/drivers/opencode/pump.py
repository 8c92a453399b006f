"""The opencode delivery pump: the seat's unread mail → one prompt through the session message API
(``POST /session/{id}/prompt_async``), through the durable ledger (:mod:`st2.delivery.ledger`,
opencode profile: observes attempted, transportAccepted, persisted; never releases).

The prompt text is the shared bounded, escaped batch (:mod:`st2.delivery.batch`); each message
line carries its ledger correlation. Order of evidence:

1. :meth:`Pump.next_batch` owns the batch — the ledger is on disk at ``attempted`` before the
   transport call is made.
2. The server's 2xx answer → ``transportAccepted``; a definite refusal (4xx) → ``rejected``,
   which re-authorizes exactly one new attempt. No answer (a timeout, a dropped connection) is
   evidence of nothing: the entry holds.
3. ``persisted`` only by reading the message back: a user message in ``GET /session/{id}/message``
   whose text part carries the correlation (:meth:`Pump.read_back`).

After a crash an entry still at attempted or transportAccepted is ambiguous and is settled by read
back, never by re-sending: the correlation present → persisted; a complete history of the bound
session without it → ``absent`` (one retry); no history (unreachable, no such session) → it holds.
The wrapper's server dies with the wrapper (``PR_SET_PDEATHSIG``), so a successor's read-back
reads a history no predecessor's request can still add to. A persisted entry holds further
delivery until the recipient settles the message (this profile never releases); the pump never
archives. Standard library only.
"""

from __future__ import annotations

from st2.delivery.batch import Batch, correlations_in, own_next_batch
from st2.delivery.ledger import OPENCODE, Event, Phase
from st2.delivery.pump import LedgerPump


def user_texts(messages) -> set[str] | None:
    """Every correlation in the user messages' text parts of a ``GET /session/{id}/message``
    answer; None when the answer is not a message list (no history was read)."""
    if not isinstance(messages, list):
        return None
    found: set[str] = set()
    for message in messages:
        info = message.get("info") if isinstance(message, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        if not isinstance(info, dict) or info.get("role") != "user" or not isinstance(parts, list):
            continue
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                found |= correlations_in(part["text"])
    return found


class Pump(LedgerPump):
    profile = OPENCODE

    def next_batch(self, session_id: str) -> Batch | None:
        """Own and encode the next batch (the ledger is written before this returns), or None."""
        if self.ledger is None or self.still_ambiguous():
            return None
        return own_next_batch(self.ledger, self.seat_directory, session_id, self.log)

    def transport_answer(self, batch: Batch, accepted: bool) -> None:
        """The server's definite answer to the prompt call."""
        self._apply(batch.filenames, Event.TRANSPORT_ACCEPTED if accepted else Event.REJECTED)

    def read_back(self, session_id: str, messages, complete: bool) -> tuple[list[str], list[str]]:
        """Settle the unsettled entries bound to ``session_id`` from its message history:
        ``(persisted, absent)`` filenames. ``complete`` says the history is quiescent (a
        predecessor's server is gone, or the turn the prompt started has ended), so a missing
        correlation is an authoritative ``absent``; otherwise a missing one keeps holding."""
        found = user_texts(messages)
        if self.ledger is None or found is None:
            return [], []
        persisted, absent = [], []
        for entry in self.ambiguous():
            if entry.binding != session_id:
                continue
            if entry.correlation in found:
                self._apply([entry.filename], Event.PERSISTED)
                persisted.append(entry.filename)
            elif complete and entry.attestation.value == "observed":
                self._apply([entry.filename], Event.ABSENT)
                absent.append(entry.filename)
        return persisted, absent

    def phase_of(self, filename: str) -> Phase | None:
        entry = self.ledger.get(filename) if self.ledger is not None else None
        return entry.phase if entry is not None else None
