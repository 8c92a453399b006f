"""``resource-provider`` and ``resource-command`` blocks of ``catalog.kdl`` (docs/resources.md
§Providers)::

    catalog {
        resource-provider "git" { interval "30s" }             // a built-in, its interval changed
        resource-provider "jira" {                              // an operator's own provider runtime
            argv "jira-resource-provider" "--quiet"
            capability "demand"                                 // it answers demanded observations
            interval "5m"                                       // periodic observation
            timeout "30s"                                       // an observation open longer fails
        }
        resource-command "pr" { argv "gh" "pr" "view" "--json" "state,statusCheckRollup"; timeout "20s" }
    }

A seat binds a command with ``resource "pr" uri="cmd:pr"``: the command itself lives only here,
so a seat's ``agent.kdl`` can never make a host run one. The built-in schemes are ``file``,
``git`` and ``cmd``; a block for a built-in may change its interval and timeout, never its argv.
Each problem is reported at its own line and column. Standard library only until parsed.
"""

from __future__ import annotations

import re
from functools import partial
from typing import NamedTuple

from st2.declarations.diagnostics import CATALOG

BUILT_IN_SCHEMES = ("file", "git", "cmd")
PROVIDER_FIELDS = ("argv", "capability", "interval", "timeout")
COMMAND_FIELDS = ("argv", "timeout")
CAPABILITIES = ("demand",)
SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,31}")
COMMAND_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
DEFAULT_INTERVAL_SECONDS = {"file": 5.0, "git": 15.0, "cmd": 300.0}
DEFAULT_EXTERNAL_INTERVAL_SECONDS = 300.0
DEFAULT_TIMEOUT_SECONDS = 30.0


class ResourceProvider(NamedTuple):
    """One scheme's provider. ``argv`` is None for a built-in (the host runs st2's own runtime)."""

    scheme: str
    argv: tuple[str, ...] | None
    capabilities: tuple[str, ...]
    interval_seconds: float
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS

    @property
    def demand(self) -> bool:
        return "demand" in self.capabilities


class ResourceCommand(NamedTuple):
    """A named command a ``cmd:<name>`` binding runs (its stdout bounded, its run timed out)."""

    name: str
    argv: tuple[str, ...]
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS


def built_ins() -> dict[str, ResourceProvider]:
    return {scheme: ResourceProvider(scheme, None, ("demand",), DEFAULT_INTERVAL_SECONDS[scheme])
            for scheme in BUILT_IN_SCHEMES}


def provider_block(context, node, path: tuple[int, ...], providers: dict[str, ResourceProvider]) -> None:
    """Read one ``resource-provider "<scheme>" { … }`` into ``providers`` or report why not."""
    from st2.declarations import fields
    from st2.declarations.context import NAME, argument

    field_path = ("catalog", "resource-provider")
    taken = {name for name, provider in providers.items() if provider != built_ins().get(name)}
    scheme = _block_name(context, node, path, field_path, SCHEME, taken,
                         "scheme {!r} is not a URI scheme (a-z, then a-z 0-9 + . -)")
    if scheme is None:
        return
    seen = _children(context, node, path, field_path, PROVIDER_FIELDS)
    if seen is None:
        return
    built_in = scheme in BUILT_IN_SCHEMES
    if built_in and "argv" in seen:
        context.report("invalid-value", path + (seen["argv"][1],), NAME, field_path + ("argv",),
                       f"`{scheme}` is a built-in provider; its argv cannot be replaced", layer=CATALOG)
        return
    if not built_in and "argv" not in seen:
        context.report("invalid-value", path, NAME, field_path,
                       f"resource-provider {scheme!r} needs `argv` (only file, git and cmd are built in)",
                       layer=CATALOG)
        return
    for index, word in enumerate(seen.get("capability", ((), 0))[0]):
        if word not in CAPABILITIES:
            context.report("invalid-value", path + (seen["capability"][1],), argument(index),
                           field_path + ("capability",), f"unknown capability {word!r} (capabilities: demand)",
                           layer=CATALOG, help=partial(fields.suggestion, word, CAPABILITIES))
            return
    default = built_ins().get(scheme)
    providers[scheme] = ResourceProvider(
        scheme, None if built_in else seen["argv"][0],
        default.capabilities if built_in else tuple(dict.fromkeys(seen.get("capability", ((), 0))[0])),
        seen["interval"][0] if "interval" in seen else (default.interval_seconds if default
                                                        else DEFAULT_EXTERNAL_INTERVAL_SECONDS),
        seen["timeout"][0] if "timeout" in seen else DEFAULT_TIMEOUT_SECONDS)


def command_block(context, node, path: tuple[int, ...], commands: dict[str, ResourceCommand]) -> None:
    """Read one ``resource-command "<name>" { argv …; timeout … }`` or report why not."""
    from st2.declarations import fields
    from st2.declarations.context import NAME

    field_path = ("catalog", "resource-command")
    name = _block_name(context, node, path, field_path, COMMAND_NAME, set(commands),
                       "name {!r} must be lower-case letters, digits, '.', '_' or '-'")
    if name is None:
        return
    seen = _children(context, node, path, field_path, COMMAND_FIELDS)
    if seen is None:
        return
    if "argv" not in seen:
        context.report("invalid-value", path, NAME, field_path, f"resource-command {name!r} needs `argv`",
                       layer=CATALOG)
        return
    commands[name] = ResourceCommand(name, seen["argv"][0],
                                     seen["timeout"][0] if "timeout" in seen else DEFAULT_TIMEOUT_SECONDS)


def _block_name(context, node, path, field_path, pattern, taken: set, malformed: str) -> str | None:
    """The block's one string argument when it matches ``pattern`` and is not ``taken``; else
    None after reporting why at the argument."""
    from st2.declarations import fields
    from st2.declarations.context import argument

    name = fields.one_value(context, _arguments_only(node), path, field_path, "string")
    if name is None:
        return None
    if not pattern.fullmatch(name):
        context.report("invalid-value", path, argument(0), field_path, f"{field_path[-1]} " + malformed.format(name),
                       layer=CATALOG)
        return None
    if name in taken:
        context.report("duplicate-field", path, argument(0), field_path,
                       f"{field_path[-1]} {name!r} is declared more than once", layer=CATALOG)
        return None
    return name


class _ArgumentsOnly:
    """A node seen without its children, so ``fields.one_value`` judges only its arguments."""

    def __init__(self, node) -> None:
        self.name, self.args, self.properties, self.children = node.name, node.args, node.properties, []


def _arguments_only(node):
    return _ArgumentsOnly(node)


def _children(context, node, path, field_path, allowed) -> dict[str, tuple] | None:
    """Each child's value and index, keyed by name; None after reporting a problem."""
    from st2.declarations import fields
    from st2.declarations.context import NAME

    seen: dict[str, tuple] = {}
    accepted, clean = fields.closed_children(context, node, path, field_path, allowed, ", ".join(allowed), CATALOG)
    for index, child in accepted:
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name in ("argv", "capability"):
            words = fields.strings(context, child, child_path, child_field)
            if words is None or (not words and child.name == "argv"):
                if words is not None:
                    context.report("empty-argv", child_path, NAME, child_field, "`argv` needs at least one string",
                                   layer=CATALOG)
                clean = False
                continue
            seen[child.name] = (tuple(words), index)
            continue
        value = fields.one_value(context, child, child_path, child_field, "string")
        if value is None:
            clean = False
            continue
        seconds = fields.duration(context, child, child_path, child_field, value, positive=True,
                                  example='"30s", "5m"', layer=CATALOG)
        if seconds is None:
            clean = False
            continue
        seen[child.name] = (seconds, index)
    return seen if clean else None


def target_problem(uri: str) -> str | None:
    """Why a ``file:``/``git:``/``cmd:`` URI names no target st2 may observe, or None (other
    schemes: None). A path must be absolute (``file:///p`` or ``file:/p``) with no ``.`` or
    ``..`` segment and no percent escape (which could spell one); a command is a name declared
    by ``resource-command``."""
    scheme, _, rest = uri.partition(":")
    if scheme == "cmd":
        return None if COMMAND_NAME.fullmatch(rest) else "a cmd: binding names a resource-command (cmd:<name>)"
    if scheme not in ("file", "git"):
        return None
    path = target_path(uri)
    if path is None:
        return f"a {scheme}: binding names an absolute local path ({scheme}:///path), without a query or fragment"
    if "%" in path:
        return "the path may not contain a percent escape"
    if any(segment in (".", "..") for segment in path.split("/")):
        return "the path may not contain '.' or '..' segments"
    return None


def target_path(uri: str) -> str | None:
    """The local path of a ``file:``/``git:`` URI, or None when it names none."""
    _, _, rest = uri.partition(":")
    if "?" in rest or "#" in rest:
        return None
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost") or not slash:
            return None
        rest = "/" + path
    if not rest.startswith("/") or rest.startswith("//"):
        return None
    return rest
