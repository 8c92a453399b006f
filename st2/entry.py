"""The `st2` console entry point.

Hot paths (the status-line tee, harness hooks, `usage verdict`) run hundreds of times an hour
per seat, so they are recognized from ``sys.argv`` and dispatched before anything imports
click or pydantic. Every other verb goes through the click CLI in :mod:`st2.cli`.
"""

from __future__ import annotations

import importlib
import sys

# (verb, subverb) -> "module:function". Each target takes ``argv`` (the words after the
# subverb) and returns an exit status. Its module may import only the standard library and its
# own record module.
HOT_PATHS: dict[tuple[str, str], str] = {
    ("usage", "verdict"): "st2.usage.verdict:main",
    ("usage", "poll"): "st2.usage.poll:main",
    ("usage", "trend"): "st2.usage.trend:main",
    ("hook", "budget-guard"): "st2.drivers.claude.hooks.budget_guard:main",
    ("hook", "subagent-stop-liveness"): "st2.drivers.claude.hooks.subagent_stop_liveness:main",
    ("hook", "dispatch-guard"): "st2.drivers.claude.hooks.dispatch_guard:main",
    ("check", "producer-liveness"): "st2.delegation.producer_liveness:main",
    ("check", "gate-tamper"): "st2.kit.gate_tamper:main",
    ("check", "wait-probe"): "st2.kit.wait_probe:main",
    ("driver", "claude-statusline"): "st2.drivers.claude.statusline:main",
    ("driver", "claude-observe"): "st2.drivers.claude.hooks.observe:main",
    ("driver", "claude-statusline-arm"): "st2.drivers.claude.statusline_arm:main",
}


HELP_WORDS = ("-h", "--help")


def asks_for_help(argv: list[str]) -> bool:
    """True when ``-h``/``--help`` appears before any ``--`` (after it, a word is a path)."""
    for word in argv:
        if word == "--":
            return False
        if word in HELP_WORDS:
            return True
    return False


def help_text(module) -> str:
    """A hot path's help: its module docstring's first paragraph, then its ``USAGE`` if any."""
    summary = (module.__doc__ or "").strip().split("\n\n", 1)[0]
    usage = getattr(module, "USAGE", "")
    return summary + ("\n\n" + usage.rstrip("\n") if usage else "") + "\n"


def dispatch(verb: str, subverb: str, argv: list[str]) -> int:
    """Run one hot path. ``--help`` prints its help and runs nothing (no stdin read, no write)."""
    module_name, function_name = HOT_PATHS[(verb, subverb)].split(":")
    module = importlib.import_module(module_name)
    if asks_for_help(argv):
        sys.stdout.write(help_text(module))
        return 0
    return int(getattr(module, function_name)(argv) or 0)


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) >= 2 and (words[0], words[1]) in HOT_PATHS:
        return dispatch(words[0], words[1], words[2:])
    from st2.cli import run

    return run(words)


if __name__ == "__main__":
    raise SystemExit(main())
