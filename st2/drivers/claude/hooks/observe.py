"""``st2 driver claude-observe --identity I --event E [--catalog C] [--runtime-id R]``: apply one
Claude hook event (payload on stdin) to the seat's observed state and compaction accounting.

Registered by the rendered ``.claude/settings.local.json`` through ``hooks/claude-observe.sh``
for every event :data:`st2.drivers.claude.events.OBSERVED_EVENTS` names. Fail-open: it always
exits 0 and never writes to stdout (Claude reads a hook's stdout as context for some events), so
observing can never block or steer the harness; problems go to stderr, which Claude keeps out of
the conversation for a zero exit. Standard library and the record modules only (hot path).
"""

from __future__ import annotations

import os
import sys

from st2.records import decoding
from st2.drivers.claude import recording, seat as seat_module

USAGE = "usage: st2 driver claude-observe --identity <host.identity> --event <HookEvent> [--catalog DIR] [--runtime-id ID]"
OPTIONS = ("--identity", "--event", "--catalog", "--runtime-id")


def parse_options(argv: list[str], names: tuple[str, ...]) -> dict[str, str]:
    """``--name value`` / ``--name=value`` pairs; raise ValueError for anything else."""
    values: dict[str, str] = {}
    words = list(argv)
    while words:
        word = words.pop(0)
        name, equals, value = word.partition("=")
        if name not in names:
            raise ValueError(f"unexpected argument {word!r}")
        if not equals:
            if not words:
                raise ValueError(f"{name} needs a value")
            value = words.pop(0)
        values[name] = value
    return values


def main(argv: list[str]) -> int:
    """Hot-path entry. Always 0 once the arguments parse; 2 for misuse."""
    try:
        options = parse_options(argv, OPTIONS)
    except ValueError as error:
        sys.stderr.write(f"st2 claude-observe: {error}\n{USAGE}\n")
        return 2
    event = options.get("--event", "")
    if not event:
        sys.stderr.write(f"st2 claude-observe: --event is required\n{USAGE}\n")
        return 2
    raw = sys.stdin.buffer.read()
    try:
        payload = decoding.load_json(raw) if raw.strip() else None
    except ValueError:
        sys.stderr.write(f"st2 claude-observe: {event}: the payload is not JSON; nothing recorded\n")
        return 0
    try:
        from st2.base.clock import Clock

        environ = os.environ
        seat = seat_module.resolve(seat_module.catalog_root(options.get("--catalog"), environ),
                                   options.get("--identity") or environ.get("ST_AGENT"))
        session = seat_module.session(environ, payload, seat, options.get("--runtime-id"))
        if session.token is None:
            sys.stderr.write(f"st2 claude-observe: {event}: no session to write as (no wrapper session and "
                             "no session_id in the payload); observed state not recorded\n")
        recording.apply_hook(seat, session, event, payload, Clock())
    except Exception as error:  # fail-open: observing must never break the harness
        sys.stderr.write(f"st2 claude-observe: {event}: not recorded: {error}\n")
    return 0
