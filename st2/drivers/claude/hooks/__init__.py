"""Claude Code's hooks: the one home of every process Claude spawns per hook event. Each is a hot
path (standard library and its own record module only), dispatched from ``st2.entry.HOT_PATHS``.

- :mod:`.observe` — ``st2 driver claude-observe``, registered for every event st2 observes
  (UserPromptSubmit, PreToolUse, Stop, PermissionRequest, PreCompact …): one event → harness-state
  and the compaction edges of harness-context.
- :mod:`.subagent_stop_liveness` — ``st2 hook subagent-stop-liveness``, the SubagentStop hook
  (docs/kit.md §Turn-end liveness hook).
- :mod:`.budget_guard` — ``st2 hook budget-guard``, PreToolUse on the Agent matcher: the usage
  verdict priced into every dispatch.
- :mod:`.dispatch_guard` — ``st2 hook dispatch-guard``, PreToolUse on the Agent matcher, rules
  D1–D6.
- :mod:`.output` — the PreToolUse hook JSON envelopes the two guards write.
"""
