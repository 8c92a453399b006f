#!/bin/sh
# st2's Claude Code status-line entry (statusLine.command in the rendered
# .claude/settings.local.json). It tees: st2 records the reading and then runs the operator's
# own renderer ($ST_CLAUDE_STATUSLINE_RENDERER, else ~/.claude/statusline-renderer.json), so
# stdout is the renderer's line or nothing.
#
# Outermost fallback: with no identity, no catalog root, or no st2 on PATH, drain stdin and
# print nothing. Draining rather than exiting, because Claude writes the payload into this
# process every few seconds and an unread stdin would earn it an EPIPE each time.
identity="${ST_AGENT:-}"
root="${ST_ROOT:-${CATALOG:-}}"
if [ -z "$identity" ] || [ -z "$root" ] || ! command -v st2 >/dev/null 2>&1; then
  cat >/dev/null
  exit 0
fi
exec st2 driver claude-statusline --identity "$identity" --catalog "$root"
