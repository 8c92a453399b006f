"""The click-free verbs' one table, ``verb → accepted shape → core function``, and the routing
of a command line through it.

Each row of :data:`ROUTES` names the doors that try it:

- :data:`CONSOLE`, the ``st2`` process entry (:mod:`st2.entry`): first the hot paths (a row
  whose shape is :data:`RAW`: ``st2 <verb> <subverb> …`` as the first words, the rest handed to
  the core untouched as its ``argv``; ``-h``/``--help`` before any ``--`` prints the core
  module's help instead), then the parsed verbs after any ``st2 --catalog C --host H``, when
  stdout and stderr are UTF-8;
- :data:`FORKED`, a process the seat host forks (``st2 ding`` for its stubs, ``st2
  resource-runtime <scheme>`` for the built-in provider runtimes): the verb first;
- :data:`FORKED_SESSION`, a session wrapper the seat host forks: root options allowed.

A parsed row's core is called with a :class:`Call` and returns an exit status, or None before
anything has run or been printed (a catalog that is not a directory, a name that does not
resolve) to let the click CLI handle the words exactly as it would have. :func:`route` returns
None for anything outside every row, and the caller runs the click CLI. Every click command
naming a parsed row takes the same options, flags and choices (tests/front/test_table.py).

Cores are ``"module:function"`` strings imported when their row runs, so a hot path loads only
its own module (each may import only the standard library and its own record modules).
"""

from __future__ import annotations

import sys

from st2.front import Parsed, Shape, ShapeRefusal, parse

CONSOLE, FORKED, FORKED_SESSION = "console", "forked", "forked-session"
RAW = None   # a hot path's shape: its words reach ``core(argv)`` untouched


class Route:
    """One row: the accepted ``shape`` (:data:`RAW` for a hot path), the ``core`` function as
    ``"module:function"``, and the ``doors`` that try the row."""

    __slots__ = ("shape", "core", "doors")

    def __init__(self, shape: Shape | None, core: str, doors: tuple[str, ...] = (CONSOLE,)) -> None:
        self.shape, self.core, self.doors = shape, core, doors


class Call:
    """What a parsed row's core gets: the whole command line (``words``, after ``st2``), the
    ``verb`` words, the ``root`` option values given before the verb, the verb's reading
    (``parsed``), and whether the seat host forked this process (``forked``)."""

    __slots__ = ("words", "verb", "root", "parsed", "forked")

    def __init__(self, words: list[str], verb: tuple[str, ...], root: dict[str, str], parsed: Parsed,
                 forked: bool) -> None:
        self.words, self.verb, self.root, self.parsed, self.forked = words, verb, root, parsed, forked


def presences() -> tuple[str, ...]:
    from st2.records.status import PRESENCES

    return PRESENCES


CATALOG = ("--catalog", "--host")
ROOT = Shape(CATALOG)   # ``st2 [--catalog C] [--host H]`` before the verb
SESSION = ("--identity", "--runtime-id") + CATALOG


def session(*own: str, choices: dict | None = None) -> Shape:
    """A session wrapper in the shape the driver blocks launch it: ``--name value`` options,
    each once, ``--identity`` given, then ``--`` and the harness argv."""
    return Shape(SESSION + own, equals=False, tail=True, required=("--identity",), choices=choices)


ROUTES: dict[tuple[str, ...], Route] = {
    ("usage", "verdict"): Route(RAW, "st2.kit.usage.verdict:main"),
    ("usage", "poll"): Route(RAW, "st2.kit.usage.poll:main"),
    ("usage", "trend"): Route(RAW, "st2.kit.usage.trend:main"),
    ("hook", "budget-guard"): Route(RAW, "st2.drivers.claude.hooks.budget_guard:main"),
    ("hook", "subagent-stop-liveness"): Route(RAW, "st2.drivers.claude.hooks.subagent_stop_liveness:main"),
    ("hook", "dispatch-guard"): Route(RAW, "st2.drivers.claude.hooks.dispatch_guard:main"),
    ("check", "producer-liveness"): Route(RAW, "st2.kit.delegation.producer_liveness:main"),
    ("check", "gate-tamper"): Route(RAW, "st2.kit.gate_tamper:main"),
    ("driver", "claude-statusline"): Route(RAW, "st2.drivers.claude.statusline:main"),
    ("driver", "claude-observe"): Route(RAW, "st2.drivers.claude.hooks.observe:main"),
    ("driver", "claude-statusline-arm"): Route(RAW, "st2.drivers.claude.statusline_arm:main"),
    ("check", "wait-probe"): Route(RAW, "st2.kit.wait_probe:main"),
    ("message", "send"): Route(Shape(("--to-id", "--message", "--subject", "--in-reply-to", "--tags", "--priority",
                                      "--idempotency-key", "--as") + CATALOG, ("--json",), aliases={"-m": "--message"},
                                     choices={"--priority": ("low", "normal", "high")}, positionals=1),
                               "st2.front.verbs:message_send"),
    ("agents",): Route(Shape(("--status", "--identity") + CATALOG, ("--json", "--enrich"),
                             choices={"--status": presences}),
                       "st2.front.verbs:agents"),
    ("up",): Route(Shape(("--interval", "--agent", "--task") + CATALOG, ("--once", "--materialize-only", "--resume")),
                   "st2.fleet:up"),
    ("down",): Route(Shape(CATALOG, positionals=None), "st2.fleet:down"),
    ("tasks",): Route(Shape(CATALOG, ("--json",)), "st2.fleet:tasks"),
    ("validate",): Route(Shape(CATALOG, ("--strict", "--json")), "st2.fleet:validate"),
    ("doctor",): Route(Shape(CATALOG), "st2.fleet:doctor"),
    ("ding",): Route(Shape(("--socket", "--poll-interval", "--retry-backoff") + CATALOG, ("--trace-progress",),
                           numbers=("--poll-interval", "--retry-backoff"), leading=1, equals=False),
                     "st2.ding.route:run", (FORKED,)),
    ("resource-runtime",): Route(Shape(leading=1), "st2.resources.runtime:route", (FORKED,)),
}

# `st2 usage <subverb> --account A`: a declared account's run of the same verb. The kit sits
# below the accounts (which read the catalog), so the front door picks the account core: for
# verdict and trend only when ``--account`` is among the words (the verdict's hot path never
# loads it otherwise), for every `usage poll` (it also polls each declared account).
ACCOUNT_CORES: dict[tuple[str, ...], str] = {
    ("usage", "verdict"): "st2.accounts.usage:verdict",
    ("usage", "trend"): "st2.accounts.usage:trend",
    ("usage", "poll"): "st2.accounts.usage:poll",
}
ACCOUNT_OPTION = "--account"

# The wrapper verbs' rows come from the driver table, built by this function (named by string
# like every core, so the front door never imports the drivers until a wrapper verb is routed).
SESSION_ROWS = "st2.drivers.session_route:routes"


def session_routes() -> dict[tuple[str, ...], Route]:
    """``st2 driver <harness>-session`` for every row of the driver table (:data:`SESSION_ROWS`)."""
    module_name, function_name = SESSION_ROWS.split(":")
    return getattr(__import__(module_name, fromlist=[function_name]), function_name)()


def row_for(key: tuple[str, ...]) -> Route | None:
    """The table's row for verb words ``key``; a wrapper verb's from the driver table."""
    row = ROUTES.get(key)
    if row is None and len(key) == 2 and key[0] == "driver" and key[1].endswith("-session"):
        row = session_routes().get(key)
    return row


# (verb, subverb) -> "module:function" of every hot path; each core takes the words after the
# subverb and returns an exit status.
HOT_PATHS: dict[tuple[str, ...], str] = {verb: row.core for verb, row in ROUTES.items() if row.shape is RAW}

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
    account_core = ACCOUNT_CORES.get((verb, subverb))
    if account_core is not None and (subverb == "poll" or any(word.startswith(ACCOUNT_OPTION) for word in argv)):
        module_name, function_name = account_core.split(":")
        module = __import__(module_name, fromlist=[function_name])
    return int(getattr(module, function_name)(argv) or 0)


def utf8(stream) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8"


def verb_at(words: list[str]) -> int | None:
    """The index of the verb: the first word that is no root option or its value."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in ROOT.options:
            index += 2
        elif word.startswith(tuple(option + "=" for option in ROOT.options)):
            index += 1
        elif word.startswith("-"):
            return None
        else:
            return index
    return None


def route(words: list[str], door: str = CONSOLE) -> int | None:
    """Run ``words`` (the argv after ``st2``) through the row of the table they fit, tried by
    ``door``, and return its exit status; None when they fit none (nothing has run)."""
    if door == CONSOLE and len(words) >= 2 and (words[0], words[1]) in HOT_PATHS:
        return dispatch(words[0], words[1], words[2:])
    verb = (verb_at(words) if door != FORKED else 0) if words else None
    if verb is None or (door == CONSOLE and not (utf8(sys.stdout) and utf8(sys.stderr))):
        return None
    key = tuple(words[verb:verb + 2])
    row = row_for(key)
    if row is None:
        key = key[:1]
        row = ROUTES.get(key)
    if row is None or row.shape is RAW or door not in row.doors:
        return None
    try:
        root = parse(words[:verb], ROOT).values
        parsed = parse(words[verb + len(key):], row.shape)
    except ShapeRefusal:
        return None
    module_name, function_name = row.core.split(":")
    core = getattr(__import__(module_name, fromlist=[function_name]), function_name)
    return core(Call(words, key, root, parsed, door != CONSOLE))
