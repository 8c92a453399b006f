"""``st2 validate``'s core: every problem in a catalog, one diagnostic each. Read-only. It
predicts the supervisor's own refusals (driver-block expansion, materialization, socket
admission), and the authoring gate admits a prospective catalog through it.

Checks, in order: discovery (layout strictness), ``catalog.kdl``, each ``agent.kdl`` and
``principal.kdl``, ``_templates`` bounds (a replication engine's own files there overlooked), a
replication engine's conflict copy of any declaration (refused: which text is meant is
unknown), and the cross-seat and host-scoped rules (a supervisor
that names no seat; a PTY session socket on the selected host that could never be bound; the
host's worktrees, :mod:`st2.authoring.worktree_rules`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from st2.catalog.discovery import DiscoveredSeat, discover
from st2.catalog.engine_files import is_engine_file
from st2.catalog.layout import AGENTS_DIR, DECLARATION, TEMPLATES_DIR
from st2.declarations import load_agent, parse_agent
from st2.declarations.catalog import load_catalog_declaration
from st2.declarations.diagnostics import CATALOG, ERROR, WARNING, Diagnostic
from st2.declarations.principal import load_principal
from st2.drivers import expand_driver_blocks
from st2.fs.read import DECLARATION_LIMIT, read_text
from st2.runtime.scope import RuntimeScope
from st2.authoring.worktree_rules import worktree_problems

TEMPLATE_MAX_DEPTH = 8
TEMPLATE_MAX_FILES = 256
TEMPLATE_MAX_FILE_BYTES = 1024 * 1024
TEMPLATE_MAX_TOTAL_BYTES = 32 * 1024 * 1024
TEMPLATE_RESERVED_NAMES = (".git", ".st2", "resources", "archive", "inbox", "status")


def validate_catalog(root: Path, host: str, *, strict: bool = False,
                     state_dir: Path | None = None, overlay: Overlay | None = None) -> list[Diagnostic]:
    """Every diagnostic for the catalog at ``root`` as seen from ``host``, sorted by source and
    position. With ``strict`` every warning is promoted to an error. ``overlay`` judges the
    prospective catalog in which one seat's ``agent.kdl`` holds the overlay's text (the seat is
    added when it does not exist yet) without writing anything: the authoring gate."""
    root = Path(root)
    if not root.is_dir():
        # Discovery reads a missing catalog as empty (a fresh catalog is valid); validation is
        # asked about a specific catalog, and a mistyped --catalog must not come back clean.
        return [Diagnostic(code="catalog-unreadable", severity=ERROR, layer=CATALOG, source=None, span=None,
                           field_path=None, message=f"there is no catalog directory at {root}")]
    found = discover(root)
    if overlay is not None:
        _apply_overlay(found, root, overlay)
    diagnostics: list[Diagnostic] = [_at_declaration(root, error) for error in found.errors] + list(found.warnings)
    catalog_declaration, catalog_diagnostics = load_catalog_declaration(root)
    diagnostics.extend(catalog_diagnostics)
    declarations = []
    for seat in found.seats:
        if overlay is not None and (seat.host, seat.identity) == (overlay.host, overlay.identity):
            declaration, seat_diagnostics = parse_agent(
                overlay.text, path=seat.declaration_path, source=f"agents/{seat.host}/{seat.identity}/agent.kdl",
                host=seat.host, identity=seat.identity)
        else:
            declaration, seat_diagnostics = load_agent(seat.declaration_path)
        diagnostics.extend(seat_diagnostics)
        if declaration is not None:
            declarations.append((seat, declaration))
    for principal in found.principals:
        diagnostics.extend(load_principal(principal.declaration_path)[1])
    for seat, declaration in declarations:
        diagnostics.extend(_driver_block_problems(seat, declaration, host, overlay))
        diagnostics.extend(_render_problems(seat, declaration, overlay))
    diagnostics.extend(_template_problems(root))
    diagnostics.extend(_declaration_conflicts(root))
    diagnostics.extend(_dangling_supervisors(found.seats, declarations, overlay))
    diagnostics.extend(_shared_runtime_ids(declarations, overlay))
    diagnostics.extend(_address_collisions(declarations, overlay))
    if not any(diagnostic.severity == ERROR for diagnostic in catalog_diagnostics):
        diagnostics.extend(_undeclared_commands(catalog_declaration, declarations, overlay))
        diagnostics.extend(_undeclared_accounts(catalog_declaration, declarations, overlay))
    diagnostics.extend(_unsafe_mailboxes(found.seats, found.principals))
    diagnostics.extend(_unbindable_sockets(root, host, declarations, state_dir, overlay))
    diagnostics.extend(worktree_problems(root, host, declarations,
                                         lambda seat, *arguments: _located(seat, *arguments, overlay=overlay)))
    if strict:
        diagnostics = [diagnostic.promoted() for diagnostic in diagnostics]
    diagnostics.sort(key=lambda diagnostic: (diagnostic.source or "",
                                             diagnostic.span.offset if diagnostic.span is not None else -1))
    return diagnostics


class Overlay(NamedTuple):
    """One seat's prospective ``agent.kdl`` text, judged in place of what is on disk."""

    host: str
    identity: str
    text: str
    # Where the seat's other files are judged from (a staged bundle); default: the live seat.
    directory: Path | None = None


def _apply_overlay(found, root: Path, overlay: Overlay) -> None:
    directory = overlay.directory or root / AGENTS_DIR / overlay.host / overlay.identity
    found.seats[:] = [seat for seat in found.seats if (seat.host, seat.identity) != (overlay.host, overlay.identity)]
    found.seats.append(DiscoveredSeat(overlay.host, overlay.identity, directory,
                                      root / AGENTS_DIR / overlay.host / overlay.identity / DECLARATION))
    found.seats.sort(key=lambda seat: (seat.host, seat.identity))


def _driver_block_problems(seat, declaration, host: str, overlay: Overlay | None = None) -> list[Diagnostic]:
    """A typed driver block (``claude { … }``) the driver package cannot expand would stop the
    seat at launch; report it now, at the block."""
    if not declaration.drivers:
        return []
    try:
        expand_driver_blocks(declaration, host, ["st2"])
    except ValueError as error:
        # With one block the fault is in it; with several, point at the agent node.
        field = next(iter(declaration.drivers)) if len(declaration.drivers) == 1 else None
        return [_located(seat, field, "driver-block-invalid", ERROR, str(error), None, overlay)]
    return []


def _render_problems(seat, declaration, overlay: Overlay | None = None) -> list[Diagnostic]:
    """Render operations materialization would refuse, and so the seat's launch: a target outside
    the workspace (absolute, or with a ``..`` component), or a ``copy`` whose source (relative to
    the seat directory) is not a regular file. The loader keeps these declarations loadable so
    the supervisor's own refusal stays the last line of defence."""
    problems = []
    for operation in declaration.render:
        target = operation.target
        if target.startswith("/") or ".." in target.replace("\\", "/").split("/"):
            problems.append(_located(seat, "render", "render-invalid", ERROR,
                                     f"render {operation.operation} target \"{target}\" must be a relative path "
                                     "inside the workspace", None, overlay))
        if operation.operation != "copy":
            continue
        source = Path(operation.source)
        source = source if source.is_absolute() else seat.directory / source
        if not source.is_file():
            problems.append(_located(seat, "render", "render-invalid", ERROR,
                                     f"render copy source {operation.source} is not a file (looked at {source})",
                                     "copy sources are relative to the seat directory", overlay))
    return problems


def _dangling_supervisors(seats, declarations, overlay: Overlay | None = None) -> list[Diagnostic]:
    """A supervisor is a bare identity or ``<host>.<identity>`` of a seat in this catalog; a
    dangling one only means crash notices route nowhere, so it is a warning."""
    identities = {seat.identity for seat in seats}
    runtime_ids = {seat.runtime_id for seat in seats}
    problems = []
    for seat, declaration in declarations:
        supervisor = declaration.supervisor
        if supervisor is None or supervisor in identities or supervisor in runtime_ids:
            continue
        problems.append(_located(seat, "supervisor", "dangling-supervisor", WARNING,
                                 f"supervisor \"{supervisor}\" is not a seat in this catalog",
                                 "crash-loop notices for this seat will reach no one", overlay))
    return problems


def _shared_runtime_ids(declarations, overlay: Overlay | None = None) -> list[Diagnostic]:
    """Two tasks claiming one runtime id (seat ``x`` declaring ``ding`` beside a seat ``x.ding``,
    or an explicit ``id`` repeated) would adopt, restart or stop each other's process; the
    supervisor refuses both, so validate refuses them first, naming each claimant."""
    claims: dict[str, list[str]] = {}
    for seat, declaration in declarations:
        for task in declaration.runtime_tasks(seat.host):
            claims.setdefault(task.id, []).append(f"{seat.runtime_id} ({task.name})")
    problems = []
    for seat, declaration in declarations:
        for task in declaration.runtime_tasks(seat.host):
            claimants = claims[task.id]
            if len(claimants) > 1:
                problems.append(_located(seat, None, "duplicate-task", ERROR,
                                         f"runtime id {task.id} is claimed by {len(claimants)} tasks: "
                                         + ", ".join(claimants),
                                         "rename a seat or a task, or give one an explicit distinct `id`", overlay))
    return problems


def _address_collisions(declarations, overlay: Overlay | None = None) -> list[Diagnostic]:
    """A declared ``address`` equal to another seat's identity, bus id or address makes a name
    name two seats (:func:`st2.bus.addressing.matches`): mail to it is refused as ambiguous, so
    the other seat is unreachable by that name. A retired seat is no recipient, so it collides
    with nothing."""
    live = [(seat, declaration) for seat, declaration in declarations if not declaration.retired]
    problems = []
    for seat, declaration in live:
        address = declaration.address
        if address is None:
            continue
        others = [other.runtime_id for other, theirs in live if other is not seat
                  and address in (other.identity, other.runtime_id, theirs.address)]
        if others:
            problems.append(_located(seat, "address", "address-collision", ERROR,
                                     f"address \"{address}\" also names {', '.join(others)}: mail to it would be "
                                     "refused as ambiguous", "declare an address no other seat answers to", overlay))
    return problems


def _undeclared_commands(catalog, declarations, overlay: Overlay | None = None) -> list[Diagnostic]:
    """A ``cmd:<name>`` binding whose name no ``resource-command`` block of ``catalog.kdl``
    declares: its provider would have nothing to run. The caller skips it when ``catalog.kdl``
    has errors of its own (unreadable, malformed): those say why, and its commands are unknown."""
    if catalog is None:
        return []
    commands = catalog.commands
    problems = []
    for seat, declaration in declarations:
        for resource in declaration.resources:
            scheme, _, name = resource.uri.partition(":")
            if scheme == "cmd" and name not in commands:
                problems.append(_located(seat, "resource", "resource-command-undeclared", ERROR,
                                         f"resource \"{resource.name}\" binds cmd:{name}, which catalog.kdl does not "
                                         "declare", f"add `resource-command \"{name}\" {{ argv …; }}` to catalog.kdl",
                                         overlay, matching=resource.uri))
    return problems


def _undeclared_accounts(catalog, declarations, overlay: Overlay | None = None) -> list[Diagnostic]:
    """A seat's ``account`` that no ``account`` block of ``catalog.kdl`` declares: which config
    location, budget and admission it runs under would be unknown. Skipped, like
    :func:`_undeclared_commands`, while ``catalog.kdl`` has errors of its own."""
    from st2.declarations.fields import suggestion

    from st2.drivers import config_env

    accounts = catalog.accounts or {}
    problems = []
    for account in accounts.values():
        for harness in account.config_dirs:
            if config_env(harness) is None:
                problems.append(Diagnostic(
                    code="config-dir-unsupported", severity=ERROR, layer=CATALOG, source="catalog.kdl", span=None,
                    field_path=("catalog", "account", account.name, "config-dir", harness),
                    message=f"account \"{account.name}\": st2 knows no variable that moves {harness}'s config location, "
                            f"so `config-dir {harness}=` cannot be honoured",
                    help=f"remove {harness}= (a {harness} seat on this account then uses the host's own config)"))
    for seat, declaration in declarations:
        if declaration.account is not None and declaration.account not in accounts:
            hint = suggestion(declaration.account, tuple(accounts)) if accounts else None
            problems.append(_located(seat, "account", "undeclared-account", ERROR,
                                     f"account \"{declaration.account}\" is not declared in catalog.kdl",
                                     hint or f"add `account \"{declaration.account}\" {{ … }}` to catalog.kdl's "
                                             "`catalog` block", overlay))
    return problems


def _at_declaration(root: Path, diagnostic: Diagnostic) -> Diagnostic:
    """A seat directory's refused name pointed at its declaration's ``agent`` node when it holds
    one (``file:line:column``); otherwise the diagnostic as discovery made it."""
    parts = (diagnostic.source or "").split("/")
    if diagnostic.code != "catalog-entry-unsafe-name" or len(parts) != 3 or parts[0] != AGENTS_DIR:
        return diagnostic
    directory = root / diagnostic.source
    try:
        if not stat.S_ISREG(os.lstat(directory / DECLARATION).st_mode):
            return diagnostic
    except OSError:
        return diagnostic
    seat = DiscoveredSeat(parts[1], parts[2], directory, directory / DECLARATION)
    return _located(seat, None, diagnostic.code, diagnostic.severity, diagnostic.message, diagnostic.help)


def _unsafe_mailboxes(seats, principals) -> list[Diagnostic]:
    """A seat's or principal's mailbox directory that is a symlink or not a directory."""
    from st2.catalog.mailboxes import unsafe_mailbox

    problems = []
    for owner, namespace in [(seat, AGENTS_DIR) for seat in seats] + [(p, "principals") for p in principals]:
        unsafe = unsafe_mailbox(owner.directory)
        if unsafe is None:
            continue
        source = f"{namespace}/{owner.host}/{Path(owner.directory).name}/{unsafe[0]}"
        problems.append(Diagnostic(code="catalog-entry-symlink", severity=ERROR, layer=CATALOG, source=source,
                                   span=None, field_path=None,
                                   message=f"{source} is {unsafe[1]}; a mailbox must be a real directory inside the catalog",
                                   help="replace it with a real directory (mail is never read or written through a link)"))
    return problems


def _unbindable_sockets(root: Path, host: str, declarations, state_dir: Path | None,
                        overlay: Overlay | None = None) -> list[Diagnostic]:
    """Only this host's PTY tasks are judged, against the socket path the supervisor would use."""
    scope = RuntimeScope(root, host, state_dir)
    problems = []
    for seat, declaration in declarations:
        if seat.host != host:
            continue
        for task in declaration.runtime_tasks(host):
            if task.kind != "pty":
                continue
            error = scope.socket_admission_error(task.id)
            if error is not None:
                problems.append(_located(seat, None, "socket-path-too-long", ERROR,
                                         f"pty task {task.id}: {error}", None, overlay))
    return problems


def _located(seat, field: str | None, code: str, severity: str, message: str, help_text: str | None,
             overlay: Overlay | None = None, matching: str | None = None) -> Diagnostic:
    """A cross-seat diagnostic pointing at ``field``'s node in the seat's declaration (the first
    whose text holds ``matching``, when given; the agent node when ``field`` is None); an overlaid
    seat is located in the overlay's text."""
    from st2.declarations.spans import KdlSyntaxError, SourceText, locate

    source = f"agents/{seat.host}/{seat.identity}/agent.kdl"
    span = None
    try:
        if overlay is not None and (seat.host, seat.identity) == (overlay.host, overlay.identity):
            text = overlay.text
        else:
            text = read_text(seat.declaration_path, DECLARATION_LIMIT)
        tree = locate(text)
        agent = next(node for node in tree if node.name == "agent")
        target = next((node for node in agent.children if node.name == field
                       and (matching is None or matching in text[node.start:node.end])), agent) if field else agent
        span = SourceText(text).span(target.start, target.end)
    except (OSError, UnicodeDecodeError, KdlSyntaxError, StopIteration):
        pass
    field_path = ("agent", seat.identity) + ((field,) if field else ())
    return Diagnostic(code=code, severity=severity, layer=CATALOG, source=source, span=span,
                      field_path=field_path, message=message, help=help_text)


def _template_problems(root: Path) -> list[Diagnostic]:
    """``_templates`` is bounded: depth <= 8, <= 256 files, each <= 1 MiB, <= 32 MiB in all; only
    real directories and single-link regular files; no reserved control or state names."""
    templates = root / TEMPLATES_DIR
    try:
        mode = os.lstat(templates).st_mode
    except FileNotFoundError:
        return []
    except OSError as error:
        return [_template_problem(TEMPLATES_DIR, f"cannot inspect _templates: {error.strerror}")]
    if not stat.S_ISDIR(mode):
        return [_template_problem(TEMPLATES_DIR, "_templates is not a real directory")]
    problems: list[Diagnostic] = []
    totals = {"files": 0, "bytes": 0}
    _walk_templates(templates, TEMPLATES_DIR, 1, totals, problems)
    if totals["files"] > TEMPLATE_MAX_FILES:
        problems.append(_template_problem(TEMPLATES_DIR, f"_templates holds {totals['files']} files; the limit is {TEMPLATE_MAX_FILES}"))
    if totals["bytes"] > TEMPLATE_MAX_TOTAL_BYTES:
        problems.append(_template_problem(TEMPLATES_DIR, f"_templates holds {totals['bytes']} bytes; the limit is {TEMPLATE_MAX_TOTAL_BYTES}"))
    return problems


def _walk_templates(directory: Path, relative: str, depth: int, totals: dict, problems: list) -> None:
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as error:
        problems.append(_template_problem(relative, f"cannot list {relative}: {error.strerror}"))
        return
    for entry in entries:
        path = f"{relative}/{entry.name}"
        if is_engine_file(entry.name, directory=entry.is_dir(follow_symlinks=False)) and not entry.is_symlink():
            continue  # a replication engine's own file; a conflict copy is refused on its own
        if entry.name in TEMPLATE_RESERVED_NAMES:
            problems.append(_template_problem(path, f"{path} uses the reserved name `{entry.name}`"))
            continue
        if depth > TEMPLATE_MAX_DEPTH:
            problems.append(_template_problem(path, f"{path} is deeper than {TEMPLATE_MAX_DEPTH} levels"))
            continue
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _walk_templates(Path(entry.path), path, depth + 1, totals, problems)
        elif stat.S_ISREG(info.st_mode):
            if info.st_nlink != 1:
                problems.append(_template_problem(path, f"{path} is hard-linked; template files must have one link"))
            if info.st_size > TEMPLATE_MAX_FILE_BYTES:
                problems.append(_template_problem(path, f"{path} is {info.st_size} bytes; the limit is {TEMPLATE_MAX_FILE_BYTES}"))
            totals["files"] += 1
            totals["bytes"] += info.st_size
        else:
            what = "a symlink" if stat.S_ISLNK(info.st_mode) else "a special file"
            problems.append(_template_problem(path, f"{path} is {what}; templates hold only directories and regular files"))


def _declaration_conflicts(root: Path) -> list[Diagnostic]:
    """A replication engine's conflict copy of a declaration (``catalog.kdl``, an ``agent.kdl``,
    a ``principal.kdl`` or a template file): two hosts edited it concurrently, so which text is
    meant is unknown until an operator merges the copy and removes it. Readers ignore the copy."""
    from st2.catalog.conflicts import conflict_copies

    return [Diagnostic(code="declaration-conflict-copy", severity=ERROR, layer=CATALOG, source=copy.relative,
                       span=None, field_path=None,
                       message=f"{copy.relative} is a replication engine's conflict copy of "
                               f"{copy.original or 'a declaration'}: it was edited on two hosts at once",
                       help="merge what it holds into the declaration, then delete the copy")
            for copy in conflict_copies(root) if copy.declaration]


def _template_problem(source: str, message: str) -> Diagnostic:
    return Diagnostic(code="templates-invalid", severity=ERROR, layer=CATALOG, source=source, span=None,
                      field_path=None, message=message)


def report(root: Path, host: str, strict: bool, as_json: bool, echo) -> int:
    """``st2 validate [--strict] [--json]``: print every diagnostic through ``echo(text,
    err=False)`` (one JSON array with ``as_json``; else one human line each and an ``N errors, M
    warnings`` summary on stderr) and return the verb's exit status: 1 when any error remains."""
    diagnostics = validate_catalog(root, host, strict=strict)
    errors = sum(1 for diagnostic in diagnostics if diagnostic.severity == ERROR)
    if as_json:
        import json

        echo(json.dumps([diagnostic.wire() for diagnostic in diagnostics], ensure_ascii=False,
                        separators=(",", ":")))
    else:
        for diagnostic in diagnostics:
            echo(diagnostic.human())
        warnings = len(diagnostics) - errors
        echo(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}", err=True)
    return 1 if errors else 0
