#!/bin/sh
# st2's Claude Code PermissionRequest hook: "$ST_HOOKS/claude-permission.sh". It runs beside the
# permission dialog and waits, bounded, for an answer from `st2 web`; the decision it prints is
# Claude's to honour, and a human answering at the pane first wins. With no identity, no catalog
# root or no st2 on PATH it drains stdin and exits 0, printing nothing: the dialog stays.
identity="${ST_AGENT:-}"
root="${ST_ROOT:-${CATALOG:-}}"
if [ -z "$identity" ] || [ -z "$root" ] || ! command -v st2 >/dev/null 2>&1; then
  cat >/dev/null
  exit 0
fi
exec st2 driver claude-permission --identity "$identity" --catalog "$root"
