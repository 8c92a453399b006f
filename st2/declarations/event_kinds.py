"""The closed vocabulary of fleet event kinds (``st2.fleet-event.v1``'s ``kind``): what
:mod:`st2.events` emits and what a ``catalog.kdl`` ``notify { on … }`` hook may name
(:mod:`st2.declarations.catalog`). A leaf module, standard library only, so both import it."""

BLOCKED = "blocked"            # harness-state blockedOn becomes or stops being "human"
PARKED = "parked"              # a task's park marker appears or clears ("parked" / "crash-loop")
CONTEXT = "context"            # the context reading crosses HARNESS_CONTEXT_WARN_PERCENT
COMPACTION = "compaction"      # the context record's compaction count grows
PAUSE = "pause"                # the usage verdict becomes or stops being PAUSE
USAGE_STALE = "usage-stale"    # the usage verdict becomes or stops being STALE
DIAGNOSTIC = "diagnostic"      # a driver diagnostic appears, changes status or clears
STALE = "stale"                # a seat's harness-state or harness-context record goes stale or fresh
RESOURCE = "resource"          # a resource binding's accepted revision changes, or its observation fails or recovers
HOLD = "hold"                  # a seat's budget hold (its account PAUSEd, hold-on-pause) starts or lifts
KINDS = (BLOCKED, PARKED, CONTEXT, COMPACTION, PAUSE, USAGE_STALE, DIAGNOSTIC, STALE, RESOURCE, HOLD)
