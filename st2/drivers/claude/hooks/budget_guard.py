"""`st2 hook budget-guard`: the PreToolUse hook on the Agent matcher that prices every dispatch.

It runs the usage verdict in process (the same :func:`st2.kit.usage.verdict.verdict` the CLI
prints) and routes on its status:

* PAUSE (1) → block: exit 2 with the verdict line plus its corrective on stderr, which the
  harness feeds back to the dispatching agent. PAUSE needs a fresh, readable, over-threshold
  snapshot, so blocking can never wedge a consumer that has no snapshot producer.
* everything else — OK / RESET-OK (0), STALE / unreadable (2) → advise: exit 0 with the line as
  ``additionalContext`` in the hook JSON on stdout, so the live reading rides in context at every
  dispatch. Budget-unknown is decision-relevant, never disqualifying.

The guard reads no stdin (the payload carries nothing it decides on) and keeps no state. The
line is relayed verbatim behind a fixed prefix. Registration is the opt-in; raising a threshold
goes through the settings overlay's env block, which hooks re-read on every fire.

Standard library only (hot path).
"""

from __future__ import annotations

import json
import sys

from st2.kit.usage.verdict import verdict

NAME = "budget-guard"
CORRECTIVE = (
    "corrective: the verdict names the axis that fired — a 5h PAUSE clears when that window resets"
    " (hours); a 7-day PAUSE costs days, so stop delegating and let the supervisor carry the week."
    " To override deliberately, raise the matching knob (DELEGATION_KIT_PAUSE_PCT for the 5h axis,"
    " DELEGATION_KIT_PAUSE_PCT_7D for the weekly axis) in the env block of the harness's local"
    " settings, which this hook re-reads on every fire."
)


def decide(line: str, status: int) -> tuple[int, str, str]:
    """Route one verdict: return (exit status, stdout text, stderr text)."""
    if status == 1:
        return 2, "", f"{line}\n{CORRECTIVE}\n"
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": f"budget verdict ({NAME}): {line}",
        }
    }
    return 0, json.dumps(output, ensure_ascii=False) + "\n", ""


def main(argv: list[str]) -> int:
    """Hot-path entry (`st2 hook budget-guard`)."""
    line, status = verdict([])
    exit_status, out, err = decide(line, status)
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    return exit_status
