"""Claude hook events → observed harness state and compaction edges (docs/drivers.md §Hook events,
docs/drivers.md §Compaction accounting). Pure functions of (event name, payload).

State, for a top-level event:

=========================================  =================================================
event                                      observation
=========================================  =================================================
SessionStart (source startup/resume/clear)  idle, reason ``sessionStart`` — a session boundary
SessionStart (source compact)              nothing: the same compaction seen a third time
UserPromptSubmit, PreToolUse, PostToolUse  active, blockedOn none (the exit edge of blocked)
PermissionRequest                          active, blockedOn human, ask ``question`` for the
                                           AskUserQuestion tool else ``permission``
Notification ``permission_prompt``         nothing: it follows PermissionRequest by a fixed
                                           ~6 s and corroborates; too slow to drive
Stop                                       idle
StopFailure                                idle, reason ``stopFailure <error>`` (the turn
                                           ended on an API error; the model is stopped);
                                           with ``error`` ``authentication_failed``, also the
                                           seat's ``providerAuth`` driver diagnostic
SubagentStop, PreCompact, PostCompact,     nothing
anything else
=========================================  =================================================

Nesting. Any event whose payload carries a non-empty ``agent_id`` belongs to a subagent and never
moves top-level state (nor counts a compaction of the top-level window). This rests on an
undocumented, unversioned emergent property of Claude Code: the phantom SubagentStop that trails
every completed turn (1.5–2.9 s after Stop on 2.1.2xx; 0.2 s after PreCompact on 2.1.197, with
an empty ``agent_type`` and no subagent run) happens to carry an ``agent_id``. If a future build
omits it, that phantom reads as top-level activity again — a session would read active forever
after every turn — and nothing in the captures would catch it. The fixture tests replay the
captured phantom so at least the measured builds stay pinned.

Blocked exit. PermissionRequest carries no ``tool_use_id``, so the exit edge is the next
PreToolUse / PostToolUse / Stop / UserPromptSubmit. Pinned by the batched-tool capture
(captures/claude-code/2.1.197/batched-tool/, Claude Code 2.1.197 in its TUI, one assistant turn
with two Bash calls, one allowed and one asking, in both orders): tool execution serializes around
the open prompt. The asking call's PreToolUse comes *before* its PermissionRequest, no hook of the
batch's other call runs while the prompt is open (it shows "Waiting…"), and on Yes the very next
event is the granted call's own PostToolUse; the other call's PreToolUse follows it. On No every
call of the batch is interrupted and the turn ends with no further event (no Stop, PostToolUse or
PermissionDenied), so ``blocked`` then stands until the next prompt: a stated limit, not a rule.
Blocked is vacuous under ``--permission-mode bypassPermissions``.

Rejected credential. StopFailure's ``error`` is Claude Code's own typed class of the API
failure that ended the turn; only ``authentication_failed`` (what a 401 yields) is the credential
class. ``rate_limit`` (a 429), ``billing_error``, ``server_error`` and the others never are, and no
prose (``error_details``, ``last_assistant_message``, the transcript) is ever read for it. A
top-level Stop — a turn that reached its ordinary end — is the only recovery.

Compaction (the dedupe is positional, so it needs no memory between hook processes):
PreCompact is the sole counting edge (writes trigger and lastCompactionMs); PostCompact advances
lastCompactionMs and counts only when no counted compaction exists; SessionStart
``source: compact`` is inert.
"""

from __future__ import annotations

from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Any

SESSION_START = "SessionStart"
USER_PROMPT_SUBMIT = "UserPromptSubmit"
PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
PERMISSION_REQUEST = "PermissionRequest"
NOTIFICATION = "Notification"
STOP = "Stop"
STOP_FAILURE = "StopFailure"
SUBAGENT_STOP = "SubagentStop"
PRE_COMPACT = "PreCompact"
POST_COMPACT = "PostCompact"

# The events the rendered settings register to ``claude-observe``, in registration order.
OBSERVED_EVENTS = (
    SESSION_START, USER_PROMPT_SUBMIT, PRE_TOOL_USE, POST_TOOL_USE, PERMISSION_REQUEST, NOTIFICATION,
    STOP, STOP_FAILURE, SUBAGENT_STOP, PRE_COMPACT, POST_COMPACT,
)

QUESTION_TOOL = "AskUserQuestion"
COMPACT_TRIGGERS = ("manual", "auto")


class Observation(namedtuple("Observation", ("state", "blocked_on", "input_buffer", "ask", "reason"),
                             defaults=("none", "unknown", "none", None))):
    """Keyword arguments for :meth:`st2.records.harness_state.Writer.observe`."""

    __slots__ = ()
    state: str
    blocked_on: str  # = "none"
    input_buffer: str  # = "unknown"
    ask: str  # = "none"
    reason: str | None  # = None


class Compaction(namedtuple("Compaction", ("edge", "trigger"))):
    """One compaction edge: ``counts`` is True only for PreCompact (see the module docstring)."""

    __slots__ = ()
    edge: str  # "pre" | "post"
    trigger: str  # manual | auto | unknown


def is_nested(payload: Any) -> bool:
    """Whether the event belongs to a subagent (a non-empty ``agent_id``)."""
    agent_id = payload.get("agent_id") if isinstance(payload, dict) else None
    return isinstance(agent_id, str) and agent_id != ""


def _word(value: Any) -> str | None:
    if isinstance(value, str) and value and value.isascii() and all(c.isalnum() or c in "_-." for c in value):
        return value
    return None


def observation(event: str, payload: Any) -> Observation | None:
    """The top-level observation ``event`` makes, or None when it says nothing about it."""
    if is_nested(payload):
        return None
    fields = payload if isinstance(payload, dict) else {}
    if event == SESSION_START:
        if fields.get("source") == "compact":
            return None
        return Observation("idle", reason="sessionStart")
    if event in (USER_PROMPT_SUBMIT, PRE_TOOL_USE, POST_TOOL_USE):
        return Observation("active")
    if event == PERMISSION_REQUEST:
        ask = "question" if fields.get("tool_name") == QUESTION_TOOL else "permission"
        return Observation("active", blocked_on="human", ask=ask, reason="permissionRequest")
    if event == STOP:
        return Observation("idle")
    if event == STOP_FAILURE:
        error = _word(fields.get("error"))
        return Observation("idle", reason=f"stopFailure {error}" if error else "stopFailure")
    return None


CREDENTIAL_REJECTED = "authentication_failed"


def credential_rejected(event: str, payload: Any) -> bool:
    """Whether ``event`` is a top-level StopFailure whose typed ``error`` is the credential class."""
    return (event == STOP_FAILURE and isinstance(payload, dict) and not is_nested(payload)
            and payload.get("error") == CREDENTIAL_REJECTED)


def turn_ended(event: str, payload: Any) -> bool:
    """Whether ``event`` is a top-level Stop: a turn that reached its ordinary end."""
    return event == STOP and not is_nested(payload)


def compaction(event: str, payload: Any) -> Compaction | None:
    """The compaction edge ``event`` carries, or None (SessionStart ``compact`` is inert)."""
    if event not in (PRE_COMPACT, POST_COMPACT) or is_nested(payload):
        return None
    trigger = payload.get("trigger") if isinstance(payload, dict) else None
    return Compaction("pre" if event == PRE_COMPACT else "post",
                      trigger if trigger in COMPACT_TRIGGERS else "unknown")
