"""harness-state from opencode's own facts: each session's status (``session.status`` busy |
retry | idle, ``session.idle``) and the pending permissions and questions (``permission.asked`` /
``permission.replied``, ``question.asked`` / ``question.replied`` / ``question.rejected``).

Seeded on every (re)connect from ``GET /session/status`` (a map of the sessions that are not
idle), ``GET /permission`` and ``GET /question`` before any delta is trusted. Projection:

==============================================  ====================================
facts                                           observation
==============================================  ====================================
not seeded and no status event yet              nothing (awaiting status)
a pending permission (else question)            active, blockedOn human, that ask
any session busy or retry                       active
otherwise                                       idle
==============================================  ====================================

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ASK_EVENTS = {"permission.asked": "permission", "question.asked": "question"}
ANSWER_EVENTS = ("permission.replied", "question.replied", "question.rejected")


@dataclass(frozen=True)
class Projection:
    state: str
    blocked_on: str = "none"
    ask: str = "none"


@dataclass
class Observed:
    known: bool = False
    busy: set[str] = field(default_factory=set)
    pending: dict[str, tuple[str, dict]] = field(default_factory=dict)   # request id -> (ask, properties)

    def seed(self, statuses: Any, permissions: Any, questions: Any) -> str | None:
        """Replace every fact from the snapshots; return the seed problem's reason word or None."""
        if not isinstance(statuses, dict):
            return "malformedStatus"
        busy = set()
        for session_id, status in statuses.items():
            kind = status.get("type") if isinstance(status, dict) else None
            if kind not in ("busy", "retry", "idle"):
                return "unknownStatus"
            if kind != "idle":
                busy.add(session_id)
        pending: dict[str, tuple[str, dict]] = {}
        for ask, snapshot, malformed in (("permission", permissions, "malformedPermissions"),
                                         ("question", questions, "malformedQuestions")):
            if not isinstance(snapshot, list):
                return malformed
            for request in snapshot:
                if not isinstance(request, dict) or not isinstance(request.get("id"), str):
                    return "missingAskId"
                pending[request["id"]] = (ask, request)
        self.known, self.busy, self.pending = True, busy, pending
        return None

    def on_event(self, event: dict) -> bool:
        """Fold one SSE event in; True when it was a state fact."""
        kind, properties = event.get("type"), event.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        session_id = properties.get("sessionID")
        if kind == "session.status" and isinstance(session_id, str):
            status = properties.get("status")
            kind_word = status.get("type") if isinstance(status, dict) else None
            if kind_word in ("busy", "retry"):
                self.busy.add(session_id)
            elif kind_word == "idle":
                self.busy.discard(session_id)
            else:
                return False
            self.known = True
            return True
        if kind == "session.idle" and isinstance(session_id, str):
            self.busy.discard(session_id)
            self.known = True
            return True
        if kind in ASK_EVENTS and isinstance(properties.get("id"), str):
            self.pending[properties["id"]] = (ASK_EVENTS[kind], properties)
            return True
        if kind in ANSWER_EVENTS and isinstance(properties.get("requestID"), str):
            self.pending.pop(properties["requestID"], None)
            return True
        return False

    def idle(self) -> bool:
        return self.known and not self.busy and not self.pending

    def project(self) -> Projection | None:
        if not self.known and not self.pending:
            return None
        asks = [ask for ask, _ in self.pending.values()]
        if "permission" in asks:
            return Projection("active", "human", "permission")
        if "question" in asks:
            return Projection("active", "human", "question")
        return Projection("active") if self.busy else Projection("idle")
