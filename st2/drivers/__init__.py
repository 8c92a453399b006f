"""Harness drivers: one package per harness (``st2.drivers.claude`` …), named by the one table
:mod:`st2.base.harnesses`.

A driver owns everything harness-specific: the wrapper that runs the harness in its PTY, the
hooks or channels that observe it, the producers of the ``harness-state`` and ``harness-context``
records, the DING screen grammar of its TUI, and the expansion of its typed declaration block
(``claude { … }``) into the seat's argv and render block. Core st2 consumes the records
generically and never branches on a harness.

The lookups below are the only way from outside a driver's package into it (the import-graph
test holds every other ``st2/drivers/*.py`` module to them). A driver exists when the table names
it, never because a module happens to import. Its package is light by contract (the constants of
:data:`st2.base.harnesses.CONTRACT`); every lookup of a heavier module imports it on first use, so a
process pays only for the harness it serves (the DING notifier, the hot-path hooks).

Harness packages (each declaring the contract of :data:`st2.base.harnesses.CONTRACT`):
:mod:`.claude`, :mod:`.codex`, :mod:`.opencode`, :mod:`.pi`, :mod:`.omp`; and :mod:`.channel`,
the channel pi and omp are both observed through.

What every wrapper shares:

- :mod:`.lifecycle` — the lifecycle machine, the session's records (claim, presence, heartbeat,
  ``ended``) and the stop path with its escalation cover.
- :mod:`.child_session` — the wrapper whose harness is its child (Claude, pi, omp).
- :mod:`.native_session` — the wrapper around a harness server in its own process group (Codex,
  opencode): setup, gate, claim, the inbox audit and the select loop.
- :mod:`.version_gate` — the one launch gate: verdict, ``versionGate`` record, exit 78.
- :mod:`.version_probe` — the one ``--version`` probe, asked once per build (the build cache).
- :mod:`.resume_hold` — the wrapper's side of resume, one object for every wrapper.
- :mod:`.human_desk` — the keyboard of a native wrapper's PTY and its one grammar.
- :mod:`.answer_channel` — the owner-only socket through which `st2 web` lists and answers a
  native wrapper's pending asks, each by its identity.
- :mod:`.operator_line` — a line typed in a native seat's PTY, sent as mail from its operator.
- :mod:`.session_ids` — which strings each harness's session store can name.
- :mod:`.seat` — which seat a driver process serves.
- :mod:`.block` — the field grammar every typed driver block shares.
- :mod:`.screen` — one observed terminal screen and what a harness adapter may conclude from it.
- :mod:`.session_route` — the wrapper verbs' core and their rows of the front door's table.
- :mod:`.session_handoff` — the pane's side of a forked native wrapper: hand off, then anchor.
- :mod:`.pane_anchor` — what every pane anchor shares: the signal-relaying prologue and the
  forked wrapper's request channel.
- :mod:`.anchor` — the slim anchor a Claude wrapper execs into while Claude runs.
- :mod:`.session_anchor` — the full wrapper's side of the slim anchor.
- :mod:`.hook_assets` — where the harness-side assets (hook scripts, channel extensions) are.
"""

from __future__ import annotations

from st2.base import harnesses

SHELL = "shell"
COMMON_SESSION_OPTIONS = ("--identity", "--runtime-id", "--catalog", "--host")
# The values a wrapper option may take where it takes only a few (the click verb and the front
# door's shape read this one vocabulary).
SESSION_OPTION_CHOICES = {"--view": ("attach", "transcript")}
"""The options every ``<harness>-session`` verb takes; a driver's ``SESSION_OPTIONS`` add to them."""


def _module(name: str):
    import importlib

    return importlib.import_module(name)


def package(harness: str | None):
    """``harness``'s driver package (light by contract), or None when st2 has no driver for it."""
    row = harnesses.row(harness)
    return None if row is None else _module(row.package)


def driver_module(harness: str | None, name: str):
    """``harness``'s driver module ``name`` (``session``, ``replay`` …), or None without a driver."""
    row = harnesses.row(harness)
    return None if row is None else _module(f"{row.package}.{name}")


def expansion(harness: str | None):
    """The module whose ``expand(declaration, host, st2_command)`` expands ``harness``'s typed
    block, or None when st2 has no driver for that harness."""
    return driver_module(harness, "expansion")


def screen_grammar(harness: str | None):
    """A new instance of ``harness``'s DING screen grammar (:class:`st2.drivers.screen.Harness`),
    or None when its driver maintains none (DING then holds)."""
    driver = package(harness)
    name = getattr(driver, "SCREEN_GRAMMAR", None)
    if name is None:
        return None
    return getattr(driver_module(harness, "screen"), name)()


def screen_grammars() -> tuple:
    """A new instance of every driver's screen grammar, in DING's positional dispatch order
    (:data:`st2.base.harnesses.SCREEN_DISPATCH_ORDER`: on a row tie the later one wins)."""
    return tuple(screen_grammar(harness) for harness in harnesses.SCREEN_DISPATCH_ORDER)


def session_verbs() -> dict[str, tuple[str, ...]]:
    """``{"<harness>-session": its options}`` for every driver, in the table's order."""
    return {f"{harness}-session": COMMON_SESSION_OPTIONS + tuple(package(harness).SESSION_OPTIONS)
            for harness in harnesses.names()}


def session_harness(verb: str) -> str | None:
    """The harness whose wrapper verb ``verb`` (``codex-session``) is, or None."""
    harness = verb[:-len("-session")] if verb.endswith("-session") else None
    return harness if harnesses.row(harness) is not None else None


def run_session(harness: str, catalog, identity: str, runtime_id: str | None, argv: list[str],
                options: dict[str, str]) -> int:
    """Run ``harness``'s wrapper verb core (``<package>.session.run_session``); ``options`` maps
    each of the driver's ``SESSION_OPTIONS`` given (``--operator``) to its value, passed as the
    keyword argument of the same name (``operator``)."""
    keywords = {option[2:].replace("-", "_"): value for option, value in options.items()}
    return driver_module(harness, "session").run_session(catalog, identity, runtime_id, argv, **keywords)


def native_session_verbs() -> tuple[str, ...]:
    """The wrapper verbs of the drivers that own their seat's delivery: native wrappers around a
    harness server (Codex app-server, opencode serve), which the seat host forks
    (:mod:`st2.drivers.session_handoff`)."""
    return tuple(f"{harness}-session" for harness in harnesses.names() if owns_delivery(harness))


def tui_anchor(verb: str, values: dict[str, str]) -> str | None:
    """The pane anchor script that runs the harness's own TUI for wrapper verb ``verb`` with
    option ``values``, or None: a driver whose package declares ``TUI_VIEW`` (the ``--view`` that
    shows the TUI, also the default) keeps the script in its ``attach_anchor`` module."""
    harness = session_harness(verb)
    view = getattr(package(harness), "TUI_VIEW", None)
    if view is None or values.get("--view", view) != view:
        return None
    return driver_module(harness, "attach_anchor").ANCHOR


def expand_driver_blocks(declaration, host: str, st2_command: list[str]):
    """Return ``declaration`` with each typed driver block it declares expanded into argv and
    render operations by that harness's :func:`expansion`. Raise ``ValueError`` naming the
    problem when a block cannot be expanded, including a block for a harness whose driver has
    not landed: ignoring it would launch a seat without the driver its declaration asks for."""
    for harness in sorted(declaration.drivers):
        module = expansion(harness)
        if module is None:
            raise ValueError(f"st2 has no {harness} driver yet: the `{harness} {{ … }}` block cannot be expanded")
        declaration = module.expand(declaration, host, st2_command)
    return declaration


def available_harnesses() -> tuple[str, ...]:
    """The harnesses a new seat can be declared with: ``shell`` (a plain ``argv`` seat, which the
    core runs itself) and every driver's harness, in the table's order."""
    return (SHELL,) + harnesses.names()


def owns_delivery(harness: str | None) -> bool:
    """Whether ``harness``'s driver delivers mail natively (its package's ``OWNS_DELIVERY``), so
    no DING may type into its seat."""
    return bool(getattr(package(harness), "OWNS_DELIVERY", False))


def config_env(harness: str | None) -> str | None:
    """The variable naming ``harness``'s own config location (its package's ``CONFIG_ENV``), which
    an account's ``config-dir`` sets; None when the driver declares none."""
    return getattr(package(harness), "CONFIG_ENV", None) if harness in harnesses.names() else None


def delivery_owner(declaration_path) -> str | None:
    """The harness whose driver block in ``declaration_path`` owns the seat's delivery, or None
    (a plain seat, a render-only ``harness`` field, or an unreadable declaration)."""
    from st2.declarations.agent import load_agent

    declaration, _ = load_agent(declaration_path)
    if declaration is None:
        return None
    return next((harness for harness in sorted(declaration.drivers) if owns_delivery(harness)), None)
