"""Crash-loop notices: a task parked by a fail-mode restart policy is reported once, over the
bus, to the agent its seat names as ``supervisor``.

The send carries an idempotency key derived from the task and its park time, so a supervisor
that crashes between sending and remembering cannot send a second copy for the same park.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from st2.bus import BusError
from st2.bus.addressing import resolve_seat
from st2.bus.send import send

SENDER = "st2"


@dataclass(frozen=True)
class CrashLoopNotice:
    catalog: Path
    runtime_id: str
    agent: str
    supervisor: str
    attempts: int
    parked_at_ms: int
    recovery: list[str] | None
    reason: str | None = None

    @property
    def subject(self) -> str:
        if self.recovery is None:
            return f"parked: {self.runtime_id} can never start as declared"
        return f"crash-loop: {self.runtime_id} parked"

    @property
    def body(self) -> str:
        if self.recovery is None:
            # A structural park: unparking would relaunch into the identical failure.
            return (
                f"Task {self.runtime_id} of {self.agent} can never start as declared, so st2 parked it "
                f"without launching it: {self.reason}.\n\n"
                f"Unparking would relaunch into the same failure. Fix the cause (the declaration, or "
                f"the catalog's pty-root); st2 up launches the task once it can start.\n"
            )
        recovery = " ".join(self.recovery)
        return (
            f"Task {self.runtime_id} of {self.agent} exited {self.attempts} times within its restart "
            f"interval and its restart policy is mode \"fail\", so st2 parked it and will not relaunch it.\n\n"
            f"Its log and launch record are kept for inspection. After fixing the cause, recover exactly "
            f"this task with:\n\n    {recovery}\n"
        )

    @property
    def idempotency_key(self) -> str:
        return f"crash-loop/{self.runtime_id}/{self.parked_at_ms}"


def send_crash_loop_notice(notice: CrashLoopNotice) -> str | None:
    """Send ``notice`` to its supervisor agent. Return None on success, else why it was not
    sent (never raises: a notice is advisory, the park itself already happened)."""
    try:
        recipient = resolve_seat(notice.catalog, notice.supervisor)
        send(notice.catalog, recipient, sender=SENDER, subject=notice.subject, body=notice.body,
             tags=("crash-loop",), priority="high", idempotency_key=notice.idempotency_key)
    except BusError as error:
        return str(error)
    except OSError as error:
        return f"cannot write the notice: {error}"
    return None
