#!/bin/sh
# st2's Claude Code hook entry: "$ST_HOOKS/claude-observe.sh" <HookEvent>, registered for each
# event st2 observes. Fail-open and silent on stdout (Claude reads a hook's stdout as context for
# some events): with no identity, no catalog root, or no st2 on PATH it drains stdin and exits 0.
identity="${ST_AGENT:-}"
root="${ST_ROOT:-${CATALOG:-}}"
if [ -z "$identity" ] || [ -z "$root" ] || [ -z "${1:-}" ] || ! command -v st2 >/dev/null 2>&1; then
  cat >/dev/null
  exit 0
fi
st2 driver claude-observe --identity "$identity" --event "$1" --catalog "$root" >/dev/null
exit 0
