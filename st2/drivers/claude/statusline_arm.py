"""``st2 driver claude-statusline-arm [--identity I] [--catalog C]``: the delegation kit's
status-line arm (docs/kit.md §Status-line arm), a renderer the operator selects as the tee's
downstream renderer — ``ST_CLAUDE_STATUSLINE_RENDERER='st2 driver claude-statusline-arm'`` or
the renderer file's ``command`` — and never the tee's fallback: with no renderer selected the
tee's row stays empty (docs/drivers.md §Status-line tee).

It reads Claude's status-line payload on stdin and prints one line, self-contained ANSI
(``NO_COLOR`` set: plain), groups separated by `` | `` and each dropped when it has no reading:

* ``<model> (<effort>)`` from ``model.display_name`` and ``effort.level``;
* ``ctx <pct>% <gauge>`` from ``context_window.used_percentage``, then ``c<n>`` when the seat's
  harness-context record counts compactions;
* ``5h <pct>% <countdown>`` and ``7d <pct>% <countdown>`` from the payload's ``rate_limits``,
  else from the usage snapshot (``DELEGATION_KIT_USAGE_FILE``, derived when empty);
* one ``<label><n>`` per ``DELEGATION_KIT_STATUSLINE_INBOXES`` element whose file (relative to
  the payload's project dir) holds at least one ``- `` bullet; zero, absent and unreadable
  files render nothing, an empty knob no group;
* ``inbox <n>`` when the seat (``--identity``, else ``$ST_AGENT``) has unread messages.

Exit 0 whatever the payload (a malformed one renders what it can); 2 for a bad argv. Standard
library and st2's record modules only: it runs with the tee on every status-line refresh.
"""

from __future__ import annotations

import os
import sys
import time

from st2.records import decoding

USAGE = "usage: st2 driver claude-statusline-arm [--identity <host.identity>] [--catalog DIR]"
GAUGE_CELLS = 10
RESET, DIM = "\033[0m", "\033[2m"
GREEN, YELLOW, RED = "\033[32m", "\033[33m", "\033[31m"


def countdown(seconds: int) -> str:
    if seconds <= 0:
        return "now"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d{hours}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{max(minutes, 1)}m"


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _percent_text(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


class Painter:
    def __init__(self, color: bool) -> None:
        self.color = color

    def level(self, text: str, percent: float, warn: float = 50.0, alarm: float = 80.0) -> str:
        if not self.color:
            return text
        tone = RED if percent >= alarm else YELLOW if percent >= warn else GREEN
        return f"{tone}{text}{RESET}"

    def dim(self, text: str) -> str:
        return f"{DIM}{text}{RESET}" if self.color else text


def gauge(percent: float) -> str:
    filled = min(GAUGE_CELLS, max(0, int(round(percent / 100 * GAUGE_CELLS))))
    return "[" + "#" * filled + "-" * (GAUGE_CELLS - filled) + "]"


def model_group(payload: dict) -> str | None:
    model = payload.get("model")
    name = model.get("display_name") or model.get("id") if isinstance(model, dict) else None
    if not isinstance(name, str) or not name:
        return None
    effort = payload.get("effort")
    level = effort.get("level") if isinstance(effort, dict) else effort if isinstance(effort, str) else None
    return f"{name} ({level})" if isinstance(level, str) and level else name


def context_group(payload: dict, compactions: int, paint: Painter) -> str | None:
    window = payload.get("context_window")
    percent = _number(window.get("used_percentage")) if isinstance(window, dict) else None
    if percent is None:
        return f"ctx ? c{compactions}" if compactions else None
    text = paint.level(f"ctx {_percent_text(percent)}% {gauge(percent)}", percent, 60.0, 80.0)
    return f"{text} c{compactions}" if compactions else text


def resolved_knobs(environ):
    """The knobs, resolved once per render; None when malformed (that costs the usage fallback
    and the inbox group, never the line)."""
    try:
        from st2.kit import knobs

        return knobs.resolve(environ)
    except Exception:
        return None


def windows(payload: dict, environ, config) -> list[tuple[str, float, int]]:
    """``(label, percent, resets_at)`` for the 5h and 7d windows: the payload's ``rate_limits``,
    else the usage snapshot the tee and the poller write."""
    found: list[tuple[str, float, int]] = []
    limits = payload.get("rate_limits")
    if isinstance(limits, dict):
        for label, name in (("5h", "five_hour"), ("7d", "seven_day")):
            entry = limits.get(name)
            if isinstance(entry, dict):
                percent, resets = _number(entry.get("used_percentage")), _number(entry.get("resets_at"))
                if percent is not None and resets is not None:
                    found.append((label, percent, int(resets)))
        if found:
            return found
    if config is None:
        return found
    from st2.kit.usage import knobs
    from st2.records import usage_snapshot as snapshot

    reading = snapshot.read_file(knobs.usage_paths(config, environ).usage_file)
    if reading.outcome != snapshot.READ:
        return found
    parsed = reading.snapshot
    found.append(("5h", float(parsed.five_hour_used_pct), int(parsed.five_hour_resets_at)))
    if parsed.weekly_armed():
        found.append(("7d", float(parsed.seven_day_used_pct), int(parsed.seven_day_resets_at)))
    return found


def bullet_count(path: str) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.startswith(b"- "))
    except OSError:
        return 0


def inbox_group(payload: dict, config, cwd: str) -> str | None:
    if config is None:
        return None
    elements = config.indexed("DELEGATION_KIT_STATUSLINE_INBOXES")
    workspace = payload.get("workspace")
    root = workspace.get("project_dir") if isinstance(workspace, dict) else None
    root = root if isinstance(root, str) and root else cwd
    tokens = []
    for element in elements:
        label, _, path = element.partition("=")
        count = bullet_count(path if os.path.isabs(path) else os.path.join(root, path))
        if count:
            tokens.append(f"{label}{count}")
    return " ".join(tokens) or None


def seat_readings(options: dict[str, str], environ) -> tuple[int, int]:
    """``(compactions, unread)`` of the seat, 0 each when no seat resolves."""
    identity = options.get("--identity") or environ.get("ST_AGENT")
    if not identity:
        return 0, 0
    try:
        from st2.drivers.claude import seat as seat_module

        seat = seat_module.resolve(seat_module.catalog_root(options.get("--catalog"), environ), identity)
    except Exception:
        return 0, 0
    compactions = 0
    try:
        from st2.records import harness_context

        reading = harness_context.read_file(os.path.join(seat.directory, harness_context.RECORD_NAME), int(time.time() * 1000), seat.agent)
        compactions = reading.compactions if reading is not None else 0
    except Exception:  # an unreadable record costs the compaction count, never the line
        pass
    from st2.bus import boxes  # the bus's one unread set, name-only (no envelope parsing)

    return compactions, len(boxes.unread_names(seat.directory))


def render(payload, environ, options: dict[str, str], cwd: str, now: int) -> str:
    payload = payload if isinstance(payload, dict) else {}
    paint = Painter(not environ.get("NO_COLOR"))
    compactions, unread = seat_readings(options, environ)
    config = resolved_knobs(environ)
    groups = [model_group(payload), context_group(payload, compactions, paint)]
    for label, percent, resets_at in windows(payload, environ, config):
        groups.append(paint.level(f"{label} {_percent_text(percent)}%", percent) + " " + paint.dim(countdown(resets_at - now)))
    groups.append(inbox_group(payload, config, cwd))
    if unread:
        groups.append(f"inbox {unread}")
    return " | ".join(group for group in groups if group)


def parse_arguments(argv: list[str]) -> dict[str, str]:
    """``--identity``/``--catalog`` values; raise ValueError for anything else."""
    import st2.front as argv_grammar

    _, options, positionals = argv_grammar.parse_kit(argv, options=("--identity", "--catalog"))
    if positionals:
        raise ValueError(f"unexpected argument: {positionals[0]}")
    return options


def selected(command: str) -> list[str] | None:
    """The arm's argv when the tee's renderer command is this arm spelled plainly —
    ``[<path>/]st2 driver claude-statusline-arm [--identity I] [--catalog C]`` with no shell
    syntax — else None. The tee then runs the arm in process: a second interpreter would spend
    the whole of the status line's budget (docs/drivers.md §Status-line tee: tee and renderer within 2.5x python)."""
    if any(character in command for character in "|&;<>()$`\\\"'*?[#~=%{}\n"):
        return None
    words = command.split()
    if len(words) < 3 or os.path.basename(words[0]) != "st2" or words[1:3] != ["driver", "claude-statusline-arm"]:
        return None
    return words[3:]


def main(argv: list[str]) -> int:
    try:
        options = parse_arguments(argv)
    except ValueError as error:
        sys.stdin.buffer.read()
        sys.stderr.write(f"claude-statusline-arm: {error}\n{USAGE}\n")
        return 2
    data = sys.stdin.buffer.read()
    try:
        payload = decoding.load_json(data)
    except ValueError:
        payload = None
    line = render(payload, os.environ, options, os.getcwd(), int(time.time()))
    sys.stdout.write(line + "\n")
    return 0
