"""The catalog's own declaration, ``<catalog>/catalog.kdl``::

    catalog {
        pty-root "/run/agents/pty"     // where PTY session sockets live (relative: under the catalog)
        archive-after "7d"             // retired seats are archived this long after retirement; "0" disables
        notify {                       // an operator hook over fleet events (`st2 events`); repeatable
            on "blocked" "parked" "pause"      // the event kinds it runs for (st2.declarations.event_kinds)
            argv "notify-send" "st2"           // or: command "<sh>", or: apprise "ntfy://…" … — exactly one
            timeout "10s"                      // optional: killed (its process group) past this
            rate-limit "1m"                    // optional: at most one run per seat and kind per
        }
        resource-provider "git" { interval "30s" }     // resource providers and the commands cmd:
        resource-command "pr" { argv "gh" "pr" "view" }  // bindings run (st2.declarations.resource_providers)
        admit-unmeasured "codex" "0.160.0"     // launch a build outside the driver's measured set; its
                                               // context is withheld (st2.declarations.builds)
        account "main" { … }                   // a model account: config locations, scoped usage knobs,
                                               // hold, failover, relaunch admission (st2.declarations.accounts)
    }

An absent file is the default declaration. The field set is closed: a misspelt field is an error,
because a typo such as ``pty_root`` would otherwise fall back silently to the default. Standard
library only until a file is parsed (then ckdl).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import NamedTuple

from st2.declarations.diagnostics import CATALOG, ERROR, SYNTAX, Diagnostic
from st2.fs.read import DECLARATION_LIMIT, read_text

# The declaration's name under the catalog root and the source its diagnostics name. The layout
# (st2.catalog.layout.CATALOG_DECLARATION) sits above this package, which imports no catalog code.
SOURCE = "catalog.kdl"
DEFAULT_ARCHIVE_AFTER = "7d"
CATALOG_FIELDS = ("pty-root", "archive-after", "notify", "resource-provider", "resource-command", "admit-unmeasured",
                  "account")
NOTIFY_FIELDS = ("on", "argv", "command", "apprise", "timeout", "rate-limit")
NOTIFY_RUNS = ("argv", "command", "apprise")  # what a hook runs: exactly one
# An apprise URL's shape (``scheme://rest``, nothing unprintable, bounded). Whether apprise can
# use it is checked when the hook runs (st2.events.apprise_send): importing apprise and loading
# its plugins costs 0.1-0.5 s of CPU (``python -X importtime``), too much for every parse.
APPRISE_URL = r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\x00-\x1f\x7f]+"  # re's syntax, compiled on first use
APPRISE_URL_LIMIT = 4096
DEFAULT_NOTIFY_TIMEOUT_SECONDS = 10.0
DEFAULT_NOTIFY_RATE_LIMIT_SECONDS = 60.0


class NotifyHook(NamedTuple):
    """One ``notify`` block: run ``argv`` (or ``sh -c command``) with the event's JSON line on
    stdin for events of ``kinds``, or (``argv`` empty) send the event to the ``apprise`` URLs.
    ``where`` is ``catalog.kdl:line:column`` of the block."""

    kinds: tuple[str, ...]
    argv: tuple[str, ...]
    timeout_seconds: float = DEFAULT_NOTIFY_TIMEOUT_SECONDS
    rate_limit_seconds: float = DEFAULT_NOTIFY_RATE_LIMIT_SECONDS
    where: str = SOURCE
    apprise: tuple[str, ...] = ()


class CatalogDeclaration(NamedTuple):
    pty_root: str | None = None
    archive_after: str = DEFAULT_ARCHIVE_AFTER
    notify: tuple[NotifyHook, ...] = ()
    resource_providers: dict | None = None   # scheme -> ResourceProvider; None: the built-ins
    resource_commands: dict | None = None    # name -> ResourceCommand
    unmeasured: dict | None = None           # harness -> exact builds admitted outside its measured set
    accounts: dict | None = None             # name -> Account (st2.declarations.accounts); None: none declared

    def admits_unmeasured(self, harness: str, build: str | None) -> bool:
        """Whether ``admit-unmeasured`` names ``build`` of ``harness`` (docs/drivers.md §Measured builds)."""
        return build is not None and build in (self.unmeasured or {}).get(harness, ())

    @property
    def providers(self) -> dict:
        """Every resource provider by scheme: the built-ins, as declared here."""
        from st2.declarations.resource_providers import built_ins

        return dict(self.resource_providers) if self.resource_providers is not None else built_ins()

    @property
    def commands(self) -> dict:
        return dict(self.resource_commands or {})

    @property
    def archive_after_seconds(self) -> float | None:
        """Seconds after retirement before archival; ``None`` when archival is disabled (``"0"``)."""
        from st2.declarations.durations import parse_duration_seconds

        seconds = parse_duration_seconds(self.archive_after)
        return None if not seconds else seconds

    def resolved_pty_root(self, catalog_root: Path) -> Path | None:
        """The declared pty root with ``$CATALOG`` and ``~`` expanded; a relative value anchors at
        the catalog, never at the caller's working directory. ``None`` when undeclared."""
        if self.pty_root is None:
            return None
        value = self.pty_root.replace("${CATALOG}", str(catalog_root)).replace("$CATALOG", str(catalog_root))
        return Path(catalog_root) / Path(value).expanduser()


def load_catalog_declaration(catalog_root: Path) -> tuple[CatalogDeclaration, list[Diagnostic]]:
    """Read ``<catalog_root>/catalog.kdl``. On any error the default declaration is returned with
    the diagnostics, so runtime callers keep working while ``st2 validate`` reports the problem."""
    source = SOURCE
    path = Path(catalog_root) / source
    try:
        text = read_text(path, DECLARATION_LIMIT)
    except FileNotFoundError:
        return CatalogDeclaration(), []
    except (OSError, UnicodeDecodeError) as error:
        return CatalogDeclaration(), [Diagnostic(code="unreadable-declaration", severity=ERROR, layer=CATALOG,
                                                 source=source, span=None, field_path=None,
                                                 message=f"cannot read catalog.kdl: {error}")]
    return parse_catalog_declaration(text, source)


def parse_catalog_declaration(text: str, source: str = SOURCE) -> tuple[CatalogDeclaration, list[Diagnostic]]:
    import ckdl

    from st2.declarations import fields
    from st2.declarations.context import NAME, Context, argument
    from st2.declarations.durations import MAX_DURATION, DurationRefused, parse_duration
    from st2.declarations.spans import SourceText, locate_syntax_error

    context = Context(text, source)
    try:
        document = ckdl.parse(text, version=2)
    except ckdl.ParseError:
        start, end, message = locate_syntax_error(text)
        return CatalogDeclaration(), [Diagnostic(code="kdl-syntax", severity=ERROR, layer=SYNTAX,
                                                 source=source, span=SourceText(text).span(start, end),
                                                 field_path=None, message=message)]
    from st2.declarations.spans import nesting_refusal

    deep = nesting_refusal(text, document.nodes)
    if deep is not None:
        return CatalogDeclaration(), [Diagnostic(code="nesting-too-deep", severity=ERROR, layer=SYNTAX,
                                                 source=source, span=SourceText(text).span(deep[0], deep[1]),
                                                 field_path=None, message=deep[2])]
    from st2.declarations import resource_providers

    values: dict[str, str] = {}
    providers = resource_providers.built_ins()
    commands: dict = {}
    unmeasured: dict[str, tuple[str, ...]] = {}
    accounts: dict = {}
    failovers: dict = {}
    account_names: set = set()
    hooks: list[tuple[tuple[int, ...], NotifyHook]] = []
    blocks = 0
    for index, node in enumerate(document.nodes):
        if node.name != "catalog":
            context.report("unexpected-top-level-node", (index,), NAME, (node.name,),
                           f"catalog.kdl accepts only a top-level `catalog` node, found `{node.name}`",
                           layer=CATALOG)
            continue
        blocks += 1
        if blocks > 1:
            context.report("duplicate-field", (index,), NAME, ("catalog",),
                           "catalog.kdl declares `catalog` more than once", layer=CATALOG)
            continue
        fields.no_arguments(context, node, (index,), ("catalog",))
        fields.no_properties(context, node, (index,), ("catalog",))
        for child_index, child in enumerate(node.children):
            child_path = (index, child_index)
            field_path = ("catalog", child.name)
            if child.name not in CATALOG_FIELDS:
                context.report("unknown-node", child_path, NAME, field_path,
                               f"unknown catalog field `{child.name}` (expected pty-root, archive-after, notify, "
                               "resource-provider, resource-command, admit-unmeasured or account)",
                               layer=CATALOG, help=partial(fields.suggestion, child.name, CATALOG_FIELDS))
                continue
            if child.name == "resource-provider":
                resource_providers.provider_block(context, child, child_path, providers)
                continue
            if child.name == "resource-command":
                resource_providers.command_block(context, child, child_path, commands)
                continue
            if child.name == "admit-unmeasured":
                from st2.declarations.builds import admit_node

                admit_node(context, child, child_path, unmeasured)
                continue
            if child.name == "account":
                from st2.declarations.accounts import account_block

                account_block(context, child, child_path, accounts, failovers, account_names)
                continue
            if child.name == "notify":
                hook = _notify_block(context, child, child_path)
                if hook is not None:
                    hooks.append((child_path, hook))
                continue
            if child.name in values:
                context.report("duplicate-field", child_path, NAME, field_path,
                               f"`{child.name}` is declared more than once", layer=CATALOG)
                continue
            value = fields.one_value(context, child, child_path, field_path, "string")
            if value is None:
                continue
            if value == "":
                context.report("invalid-value", child_path, argument(0), field_path,
                               f"`{child.name}` needs a non-empty value", layer=CATALOG)
                continue
            if child.name == "archive-after":
                try:
                    parse_duration(value)
                except DurationRefused as refusal:
                    context.report("invalid-value", child_path, argument(0), field_path, f"archive-after {refusal}",
                                   layer=CATALOG, help=f'write e.g. "7d", "12h" (at most {MAX_DURATION}), '
                                                       'or "0" to disable archival')
                    continue
            values[child.name] = value
    if failovers:
        from st2.declarations.accounts import check_failovers

        check_failovers(context, accounts, failovers)
    diagnostics = context.diagnostics()
    if any(diagnostic.severity == ERROR for diagnostic in diagnostics):
        return CatalogDeclaration(), diagnostics
    return CatalogDeclaration(pty_root=values.get("pty-root"),
                              archive_after=values.get("archive-after", DEFAULT_ARCHIVE_AFTER),
                              notify=_placed(hooks, text, source), resource_providers=providers,
                              resource_commands=commands, unmeasured=unmeasured,
                              accounts=accounts or None), diagnostics


def _notify_block(context, node, path: tuple[int, ...]) -> NotifyHook | None:
    """One ``notify { on …; argv …|command …|apprise …; timeout …; rate-limit … }`` block (its ``where``
    still unset), or None after reporting what is wrong with it (each problem at its own line
    and column)."""
    import re

    from st2.declarations import fields
    from st2.declarations.context import NAME, argument
    from st2.declarations.event_kinds import KINDS

    field_path = ("catalog", "notify")
    fields.no_arguments(context, node, path, field_path)
    fields.no_properties(context, node, path, field_path)
    seen: dict[str, object] = {}
    accepted, clean = fields.closed_children(context, node, path, field_path, NOTIFY_FIELDS,
                                             "on, argv, command, apprise, timeout or rate-limit", CATALOG)
    declared = {child.name for _, child in accepted}  # named at all (a malformed one is reported once, by itself)
    for index, child in accepted:
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name in ("on", "argv", "apprise"):
            words = fields.strings(context, child, child_path, child_field)
            if words is None:
                clean = False
                continue
            if not words:
                context.report("empty-argv" if child.name == "argv" else "invalid-value", child_path, NAME, child_field,
                               f"`{child.name}` needs at least one string", layer=CATALOG)
                clean = False
                continue
            if child.name == "apprise":
                for word_index, word in enumerate(words):
                    if len(word) > APPRISE_URL_LIMIT or not re.fullmatch(APPRISE_URL, word):
                        # The URL itself is not repeated: it may hold a token.
                        context.report("invalid-value", child_path, argument(word_index), child_field,
                                       f"`apprise` URL {word_index + 1} is not an apprise URL (scheme://…, at most "
                                       f"{APPRISE_URL_LIMIT} characters, nothing unprintable)", layer=CATALOG,
                                       help='write e.g. "ntfy://my-topic", "json://127.0.0.1:8080/st2" '
                                            '(https://github.com/caronc/apprise/wiki)')
                        clean = False
            if child.name == "on":
                for word_index, word in enumerate(words):
                    if word not in KINDS:
                        context.report("invalid-value", child_path, argument(word_index), child_field,
                                       f"`on` names no event kind {word!r} (kinds: {', '.join(KINDS)})",
                                       layer=CATALOG, help=partial(fields.suggestion, word, KINDS))
                        clean = False
            seen[child.name] = words
            continue
        value = fields.one_value(context, child, child_path, child_field, "string")
        if value is None:
            clean = False
            continue
        if child.name in ("timeout", "rate-limit"):
            seconds = fields.duration(context, child, child_path, child_field, value, positive=child.name == "timeout",
                                      example='"10s", "1m"', layer=CATALOG)
            if seconds is None:
                clean = False
                continue
            seen[child.name] = seconds
        elif value == "":
            context.report("invalid-value", child_path, argument(0), child_field,
                           "`command` needs a non-empty shell command", layer=CATALOG)
            clean = False
        else:
            seen[child.name] = value
    if "on" not in declared:
        context.report("invalid-value", path, NAME, field_path,
                       "`notify` needs `on` naming the event kinds it runs for", layer=CATALOG)
        clean = False
    runs = [name for name in NOTIFY_RUNS if name in declared]
    if len(runs) != 1:
        context.report("argv-and-command" if runs == ["argv", "command"] else "invalid-value", path, NAME, field_path,
                       "`notify` needs exactly one of `argv`, `command` or `apprise`", layer=CATALOG)
        clean = False
    if not clean:
        return None
    if "apprise" in seen:
        argv: tuple[str, ...] = ()
    else:
        argv = seen["argv"] if "argv" in seen else ("sh", "-c", seen["command"])
    return NotifyHook(kinds=tuple(dict.fromkeys(seen["on"])), argv=tuple(argv),
                      timeout_seconds=float(seen.get("timeout", DEFAULT_NOTIFY_TIMEOUT_SECONDS)),
                      rate_limit_seconds=float(seen.get("rate-limit", DEFAULT_NOTIFY_RATE_LIMIT_SECONDS)),
                      apprise=tuple(seen.get("apprise", ())))


def _placed(hooks: list[tuple[tuple[int, ...], NotifyHook]], text: str, source: str) -> tuple[NotifyHook, ...]:
    """The hooks with ``where`` set to ``catalog.kdl:<line>:<column>`` of their blocks (for the
    hook's log lines). The text is walked and indexed once for all of them: per block it would be
    quadratic in the number of blocks."""
    if not hooks:
        return ()
    from st2.declarations.context import NAME, resolve_span
    from st2.declarations.spans import KdlSyntaxError, SourceText, locate

    try:
        tree = locate(text, hooks[-1][0])
    except KdlSyntaxError:
        return tuple(hook._replace(where=source) for _, hook in hooks)
    source_text = SourceText(text)
    placed = []
    for path, hook in hooks:
        span = resolve_span(tree, source_text, path, NAME)
        placed.append(hook._replace(where=source if span is None else f"{source}:{span.line}:{span.column}"))
    return tuple(placed)
