"""``st2 driver claude-statusline --identity I [--catalog C]``: the status-line tee (docs/drivers.md §Status-line tee).

Claude's ``statusLine`` is a single slot, and ``.claude/settings.local.json`` — the file st2
renders for a driver-declared seat — wins it outright. So st2's entry there is a tee:

1. read the payload Claude writes to stdin (all of it);
2. record it: the harness-context reading (:mod:`.payload`) under the write policy, as the
   wrapper's session (``$ST2_CLAUDE_SESSION``, else Claude's ``session_id``);
3. when the payload carries ``rate_limits``, write the usage snapshot (the push producer of the
   usage.txt contract, :func:`st2.records.usage_snapshot.from_rate_limits`) to the usage file the
   DELEGATION_KIT knobs name, with account and tier from the local account config;
4. run the operator's renderer (:mod:`.renderer`) with the same payload and copy its stdout —
   and only its stdout — to ours. When the renderer selected is the kit's status-line arm
   spelled plainly (``st2 driver claude-statusline-arm …``, :func:`.statusline_arm.selected`),
   it runs in process instead of in a second interpreter; it is never a fallback.

stdout is exactly the renderer's line, or empty: when no renderer resolves, when it fails or is
not executable. The payload is machine JSON, so echoing it would be worse than a blank row. Each
degraded arm explains itself on stderr (Claude routes it to its debug log, never the row), naming
both renderer sources. Recording and the usage write are independent of the rendering: a failure
of either is reported on stderr and the line is still rendered. No telemetry, no click, no
pydantic: ~720 runs an hour per seat, and Claude waits for each.
"""

from __future__ import annotations

import os
import sys

from st2.records import decoding
from st2.drivers.claude import recording, renderer, seat as seat_module
from st2.drivers.claude.hooks.observe import parse_options

PREFIX = "st2 claude-statusline: "
USAGE = "usage: st2 driver claude-statusline --identity <host.identity> [--catalog DIR]"


def record(data: bytes, payload, options: dict[str, str], environ, clock) -> None:
    """Step 2 (raises on failure; the caller reports and renders anyway)."""
    if not isinstance(payload, dict):
        raise ValueError("the payload is not a JSON object")
    seat = seat_module.resolve(seat_module.catalog_root(options.get("--catalog"), environ),
                               options.get("--identity") or environ.get("ST_AGENT"))
    session = seat_module.session(environ, payload, seat)
    recording.record_reading(seat, session.token or "", payload, clock)


def write_usage(payload, environ, clock) -> str | None:
    """Step 3: write the snapshot when the payload carries ``rate_limits``; return its path."""
    if not isinstance(payload, dict) or not isinstance(payload.get("rate_limits"), dict):
        return None
    from st2.kit.usage import knobs
    from st2.records import usage_snapshot as snapshot

    paths = knobs.usage_paths(knobs.resolve(environ), environ)
    tier = snapshot.json_field(paths.cred_file, ("claudeAiOauth", "subscriptionType"))
    account = snapshot.json_field(paths.account_config, ("oauthAccount", "accountUuid"))
    reading = snapshot.from_rate_limits(payload["rate_limits"], clock.wall_ms() // 1000, account=account, tier=tier)
    if reading is None:
        raise ValueError("rate_limits carries no readable five_hour window; usage snapshot not written")
    snapshot.write(paths.usage_file, reading)
    return paths.usage_file


def render(data: bytes, environ) -> bytes:
    """Step 4: the bytes for our stdout (empty in every degraded arm, each explained on stderr)."""
    resolution = renderer.resolve(environ)
    if resolution.command is not None:
        from st2.drivers.claude import statusline_arm

        arm_argv = statusline_arm.selected(resolution.command)
        if arm_argv is not None:
            return _render_arm(arm_argv, data, environ, resolution.source)
    if resolution.command is None:
        sys.stderr.write(PREFIX + "no status-line renderer resolved: " + "; ".join(resolution.misses)
                         + f". Set ${renderer.ENVIRONMENT_VARIABLE} or write {{\"command\": …}} to "
                         f"{renderer.FILE_DISPLAY}; the status line stays empty.\n")
        return b""
    outcome = renderer.run(resolution.command, data, environ)
    if outcome.output is None:
        sys.stderr.write(PREFIX + f"the renderer from {resolution.source} {outcome.problem}; its output is "
                         f"discarded and the status line stays empty (renderer sources, in order: "
                         f"${renderer.ENVIRONMENT_VARIABLE}, {renderer.FILE_DISPLAY}).\n")
        return b""
    return outcome.output


def _render_arm(argv: list[str], data: bytes, environ, source: str | None) -> bytes:
    """The kit's status-line arm, selected as the renderer, run in process."""
    import time

    from st2.drivers.claude import statusline_arm

    try:
        options = statusline_arm.parse_arguments(argv)
        try:
            payload = decoding.load_json(data)
        except ValueError:
            payload = None
        return (statusline_arm.render(payload, environ, options, os.getcwd(), int(time.time())) + "\n").encode()
    except Exception as error:  # the renderer failed: the row stays empty, as for a spawned one
        sys.stderr.write(PREFIX + f"the renderer from {source} failed ({error}); the status line stays empty.\n")
        return b""


def main(argv: list[str]) -> int:
    """Hot-path entry. Exit 0 whatever happens once the arguments parse (2 for misuse, after
    still draining stdin so Claude never meets a closed pipe)."""
    try:
        options = parse_options(argv, ("--identity", "--catalog"))
    except ValueError as error:
        sys.stdin.buffer.read()
        sys.stderr.write(f"{PREFIX}{error}\n{USAGE}\n")
        return 2
    data = sys.stdin.buffer.read()
    environ = os.environ
    try:
        payload = decoding.load_json(data)
    except ValueError:
        payload = None
    from st2.base.clock import Clock

    clock = Clock()
    try:
        record(data, payload, options, environ, clock)
    except Exception as error:  # recording never breaks the rendered line
        sys.stderr.write(f"{PREFIX}recording failed ({error}); rendering anyway\n")
    try:
        write_usage(payload, environ, clock)
    except Exception as error:
        sys.stderr.write(f"{PREFIX}usage snapshot not written ({error}); rendering anyway\n")
    output = render(data, environ)
    if output:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    return 0
