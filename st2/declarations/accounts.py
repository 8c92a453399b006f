"""``account`` blocks of ``catalog.kdl`` (docs/accounts.md)::

    catalog {
        account "main" {
            config-dir claude="~/.claude-main" codex="~/.codex-main"   // each harness's own config location
            DELEGATION_KIT_USAGE_FILE "~/.claude-main/usage.txt"       // the usage knobs, scoped to this account
            DELEGATION_KIT_REFRESH_CMD "st2" "usage" "poll" "--account" "main"
            DELEGATION_KIT_PAUSE_PCT "80"
            hold-on-pause #true            // hold new deliveries to its seats while its verdict is PAUSE
            failover "spare"               // the account its seats move to while this one is PAUSEd
            relaunch spacing="3s" concurrency=1   // at most `concurrency` starts of its seats per `spacing`
        }
    }

A seat names its account with ``account "main"`` in ``agent.kdl``; an account nobody declared is
an error at that line and column (:mod:`st2.authoring.validation`). With no account declared,
nothing changes: the host's one usage snapshot, no hold, no admission.

The usage knobs are the kit's own rows (:data:`st2.base.knob_rows.TABLE`), spelt as the knob file
spells them and checked by the same validators; an account's value wins over the environment and
the knob file for that account only. ``config-dir`` takes one property per harness of
:mod:`st2.base.harnesses`; the variable it sets is the driver's ``CONFIG_ENV``. Each problem is
reported at its own line and column. Standard library only.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from st2.base import harnesses
from st2.declarations.diagnostics import CATALOG

FIELD = "account"
FIELDS = ("config-dir", "hold-on-pause", "failover", "relaunch")
# The kit's usage knobs an account scopes (docs/kit.md §Knobs): the snapshot, its producer, the
# verdict's thresholds and clocks. Every other knob is the host's.
SCOPED_KNOBS = (
    "DELEGATION_KIT_USAGE_FILE", "DELEGATION_KIT_CRED_FILE", "DELEGATION_KIT_ACCOUNT_CONFIG",
    "DELEGATION_KIT_USAGE_ENDPOINT", "DELEGATION_KIT_PAUSE_PCT", "DELEGATION_KIT_PAUSE_PCT_7D",
    "DELEGATION_KIT_STALE_AGE", "DELEGATION_KIT_LOGIN_WINDOW", "DELEGATION_KIT_LOGIN_SETTLE",
    "DELEGATION_KIT_REFRESH_CMD", "DELEGATION_KIT_REFRESH_MIN_AGE", "DELEGATION_KIT_USAGE_HISTORY",
)
NAME_PATTERN = r"[a-z0-9][a-z0-9_-]{0,62}"
DEFAULT_SPACING_SECONDS = 3.0
DEFAULT_CONCURRENCY = 1
MAX_CONCURRENCY = 64


class Account(NamedTuple):
    """One declared account. ``knobs`` maps a scoped knob to its value (a tuple for an indexed
    knob); ``config_dirs`` maps a harness to its config location as written (``~`` and
    ``$CATALOG`` expanded by :meth:`config_dir`)."""

    name: str
    config_dirs: dict
    knobs: dict
    hold_on_pause: bool = False
    failover: str | None = None
    spacing_seconds: float = DEFAULT_SPACING_SECONDS
    concurrency: int = DEFAULT_CONCURRENCY

    def config_dir(self, harness: str, catalog_root) -> str | None:
        """The harness's config location on this account, expanded; None when undeclared. A
        relative value anchors at the catalog."""
        import os

        value = self.config_dirs.get(harness)
        if value is None:
            return None
        root = str(catalog_root)
        value = os.path.expanduser(value.replace("${CATALOG}", root).replace("$CATALOG", root))
        return os.path.normpath(os.path.join(root, value))


def account_block(context, node, path: tuple[int, ...], accounts: dict[str, Account],
                  failovers: dict[str, tuple[int, ...]], names: set[str]) -> None:
    """Read one ``account "<name>" { … }`` into ``accounts`` or report why not, each problem at
    its own position. ``names`` collects every name read (a malformed block's too, so a second
    block of that name is still a duplicate); ``failovers`` collects where each ``failover`` is written, for
    :func:`check_failovers` to check once every block is read."""
    import re

    from st2.declarations import fields
    from st2.declarations.context import NAME, argument, plain
    from st2.base.knob_rows import TABLE

    field_path = ("catalog", FIELD)
    fields.no_properties(context, node, path, field_path)
    if len(node.args) != 1 or not isinstance(plain(node.args[0]), str):
        context.report("invalid-value", path, NAME, field_path,
                       '`account` takes exactly one string, its name: account "main" { … }', layer=CATALOG)
        return
    name = plain(node.args[0])
    if not re.fullmatch(NAME_PATTERN, name):
        context.report("invalid-value", path, argument(0), field_path,
                       f"account name {name!r} must be 1-63 of a-z, 0-9, '_' and '-', beginning with a letter or digit",
                       layer=CATALOG)
        return
    if name in names:
        context.report("duplicate-field", path, argument(0), field_path,
                       f"account {name!r} is declared more than once", layer=CATALOG)
        return
    names.add(name)
    field_path = field_path + (name,)
    clean = True
    config_dirs: dict[str, str] = {}
    knobs: dict[str, object] = {}
    values: dict[str, object] = {}
    seen: set[str] = set()
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name in seen:
            context.report("duplicate-field", child_path, NAME, child_field,
                           f"`{child.name}` is declared more than once in account {name!r}", layer=CATALOG)
            clean = False
            continue
        seen.add(child.name)
        knob = TABLE.get(child.name) if child.name in SCOPED_KNOBS else None
        if knob is not None:
            words = fields.strings(context, child, child_path, child_field)
            if words is None:
                clean = False
            elif knob.indexed:
                empty = [i for i, word in enumerate(words) if not word.strip()] if knob.non_empty_elements else []
                if not words or empty:
                    context.report("invalid-value", child_path, argument(empty[0] if empty else 0), child_field,
                                   f"`{child.name}` needs non-empty strings (an argv)", layer=CATALOG)
                    clean = False
                else:
                    knobs[child.name] = words
            elif len(words) != 1:
                context.report("invalid-value", child_path, NAME, child_field,
                               f"`{child.name}` takes exactly one string", layer=CATALOG)
                clean = False
            else:
                problem = knob.validate(words[0])
                if problem:
                    context.report("invalid-value", child_path, argument(0), child_field,
                                   f"`{child.name}` {words[0]!r} {problem}", layer=CATALOG)
                    clean = False
                else:
                    knobs[child.name] = words[0]
            continue
        if child.name in TABLE:
            context.report("unknown-node", child_path, NAME, child_field,
                           f"`{child.name}` is the host's knob, not an account's (an account scopes only the usage "
                           f"knobs: {', '.join(SCOPED_KNOBS)})", layer=CATALOG,
                           help="set it in the environment or the knob file (docs/kit.md §Knobs)")
            clean = False
            continue
        if child.name not in FIELDS:
            choices = FIELDS + SCOPED_KNOBS
            context.report("unknown-node", child_path, NAME, child_field,
                           f"unknown account field `{child.name}` (expected {', '.join(FIELDS)} or one of the "
                           f"scoped usage knobs {', '.join(SCOPED_KNOBS)})",
                           layer=CATALOG, help=partial(fields.suggestion, child.name, choices))
            clean = False
            continue
        if child.name == "config-dir":
            clean = _config_dirs(context, child, child_path, child_field, config_dirs) and clean
        elif child.name == "hold-on-pause":
            value = fields.one_value(context, child, child_path, child_field, "boolean")
            clean = value is not None and clean
            values[child.name] = bool(value)
        elif child.name == "failover":
            value = fields.one_value(context, child, child_path, child_field, "string")
            if value == name:
                context.report("invalid-value", child_path, argument(0), child_field,
                               f"account {name!r} cannot fail over to itself", layer=CATALOG)
                value = None
            clean = value is not None and clean
            values[child.name] = (value, child_path)
        elif child.name == "relaunch":
            relaunch = _relaunch(context, child, child_path, child_field)
            clean = relaunch is not None and clean
            values[child.name] = relaunch
    if not clean:
        return
    spacing, concurrency = values.get("relaunch") or (DEFAULT_SPACING_SECONDS, DEFAULT_CONCURRENCY)
    failover, failover_path = values.get("failover") or (None, None)
    accounts[name] = Account(name=name, config_dirs=config_dirs, knobs=knobs,
                             hold_on_pause=bool(values.get("hold-on-pause")), failover=failover,
                             spacing_seconds=spacing, concurrency=concurrency)
    if failover is not None:
        failovers[name] = failover_path


def _config_dirs(context, node, path, field_path, config_dirs: dict[str, str]) -> bool:
    from st2.declarations import fields
    from st2.declarations.context import NAME, plain, property_

    clean = fields.no_arguments(context, node, path, field_path)
    clean = fields.no_children(context, node, path, field_path) and clean
    if not node.properties:
        context.report("invalid-value", path, NAME, field_path,
                       '`config-dir` needs one property per harness, e.g. config-dir claude="~/.claude-main"',
                       layer=CATALOG)
        return False
    for harness, value in node.properties.items():
        value = plain(value)
        if harness not in harnesses.names():
            context.report("invalid-value", path, property_(harness), field_path,
                           f"`config-dir` names no harness {harness!r} (harnesses: {', '.join(harnesses.names())})",
                           layer=CATALOG, help=partial(fields.suggestion, harness, harnesses.names()))
            clean = False
        elif not isinstance(value, str) or not value or "\x00" in value:
            context.report("invalid-value", path, property_(harness), field_path,
                           f"`config-dir` {harness}= must be a non-empty path", layer=CATALOG)
            clean = False
        else:
            config_dirs[harness] = value
    return clean


def _relaunch(context, node, path, field_path) -> tuple[float, int] | None:
    from st2.declarations import fields
    from st2.declarations.context import NAME, plain, property_

    clean = fields.no_arguments(context, node, path, field_path)
    clean = fields.no_children(context, node, path, field_path) and clean
    clean = fields.no_properties(context, node, path, field_path, ("spacing", "concurrency")) and clean
    spacing, concurrency = DEFAULT_SPACING_SECONDS, DEFAULT_CONCURRENCY
    if "spacing" in node.properties:
        value = plain(node.properties["spacing"])
        seconds = None
        if isinstance(value, str):
            from st2.declarations.durations import DurationRefused, parse_duration

            try:
                seconds = parse_duration(value)
            except DurationRefused:
                seconds = None
        if seconds is None or seconds <= 0 or seconds > 3600:
            context.report("invalid-value", path, property_("spacing"), field_path,
                           "`relaunch` spacing= must be a duration above zero and at most 1h, e.g. \"3s\", \"500ms\"",
                           layer=CATALOG)
            clean = False
        else:
            spacing = seconds
    if "concurrency" in node.properties:
        value = plain(node.properties["concurrency"])
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_CONCURRENCY:
            context.report("invalid-value", path, property_("concurrency"), field_path,
                           f"`relaunch` concurrency= must be an integer from 1 to {MAX_CONCURRENCY}", layer=CATALOG)
            clean = False
        else:
            concurrency = value
    if not node.properties and clean:
        context.report("invalid-value", path, NAME, field_path,
                       '`relaunch` needs spacing= and/or concurrency=, e.g. relaunch spacing="3s" concurrency=1',
                       layer=CATALOG)
        return None
    return (spacing, concurrency) if clean else None


def check_failovers(context, accounts: dict[str, Account], failovers: dict[str, tuple[int, ...]]) -> None:
    """Each ``failover`` names a declared account (reported at the failover's argument)."""
    from st2.declarations.context import argument

    for name, child_path in failovers.items():
        target = accounts[name].failover
        if target not in accounts:
            context.report("undeclared-account", child_path, argument(0), ("catalog", FIELD, name, "failover"),
                           f"account {name!r} fails over to {target!r}, which catalog.kdl does not declare",
                           layer=CATALOG, help=partial(_suggest, target, tuple(accounts)))


def _suggest(word: str, choices: tuple[str, ...]) -> str | None:
    from st2.declarations import fields

    return fields.suggestion(word, choices)
