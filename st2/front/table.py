"""The hot-path dispatch table and its click-free dispatcher.

Hot paths (the status-line tee, harness hooks, `usage verdict`) run hundreds of times an hour
per seat, so :mod:`st2.entry` recognizes them from ``sys.argv`` and runs them through
:func:`dispatch` before anything imports click or pydantic. The click CLI's listing of the same
verbs (``st2 hook --help``) dispatches here too, so both routes run one code path. This module
sits below both :mod:`st2.entry` and :mod:`st2.cli`, so neither imports the other's caller.
"""

from __future__ import annotations

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
    ("driver", "claude-statusline"): "st2.drivers.claude.statusline:main",
    ("driver", "claude-observe"): "st2.drivers.claude.hooks.observe:main",
    ("driver", "claude-statusline-arm"): "st2.drivers.claude.statusline_arm:main",
    ("check", "wait-probe"): "st2.kit.wait_probe:main",
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
    # __import__ with a fromlist returns the submodule itself; importlib's package is one
    # import more on every firing.
    module = __import__(module_name, fromlist=[function_name])
    if asks_for_help(argv):
        sys.stdout.write(help_text(module))
        return 0
    return int(getattr(module, function_name)(argv) or 0)
