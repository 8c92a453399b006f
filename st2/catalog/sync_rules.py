"""The rules a replication engine (Syncthing, rsync, unison) needs to carry a catalog between
hosts, derived from :data:`st2.catalog.layout.REPLICATED_NAMES` (docs/records.md
§Placement and replicated paths).

st2 never replicates anything itself; an operator configures the engine from
``st2 catalog sync-rules --format syncthing|rsync|unison [--with-declarations]``. Every format is
an allow-list, so a name st2 adds later stays host-local until it is pinned:

- carried: each seat's ``status``, ``harness-state`` and ``harness-context`` and its whole
  ``resources/`` tree (inbox, archive receipts, message receipts, the seat's sent ledger, working
  context) and its ``resource-state/`` tree (one state record per resource binding), and each principal's ``resources/`` tree (typed replies land in its inbox);
- with ``--with-declarations`` also ``catalog.kdl``, ``_templates/``, every ``agent.kdl`` and
  every ``principal.kdl``;
- never: the control plane ``.st2/`` (staging, archived seats, the operators' sent ledgers,
  stream cursors), ``logs/``, the per-host ``.st2.<host>.lock``, every record lock,
  ``driver-diagnostic``, anything else at a seat's root, and the engines' own files
  (:data:`st2.catalog.engine_files.ENGINE_GLOBS`) even inside ``resources/``.

Host-local runtime (launch records, DING ownership, delivery ledgers, PTY sockets) lives outside
the catalog altogether. Standard library only; pure functions of the two arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.catalog.engine_files import ENGINE_GLOBS, ENGINE_MARKERS
from st2.catalog.layout import (
    AGENTS_DIR,
    CATALOG_DECLARATION,
    CONTROL_DIR,
    DECLARATION,
    LOGS_DIR,
    PRINCIPAL_DECLARATION,
    PRINCIPALS_DIR,
    REPLICATED_NAMES,
    REPLICATED_TREES,
    RESOURCES,
    TEMPLATES_DIR,
)

FORMATS = ("syncthing", "rsync", "unison")

# What each seat carries below agents/<host>/<identity>/: the pinned names, directories last.
SEAT_FILES = tuple(name for name in REPLICATED_NAMES if name not in REPLICATED_TREES)
SEAT_TREES = REPLICATED_TREES
# A principal is only a bus endpoint: its mailboxes replicate, nothing else of it exists.
PRINCIPAL_TREES = (RESOURCES,)


def replicated_paths(with_declarations: bool) -> tuple[list[str], list[str]]:
    """``(files, trees)``: catalog-relative paths with ``*`` standing for one host, identity or
    principal name; a tree is carried with everything below it."""
    files = [f"{AGENTS_DIR}/*/*/{name}" for name in SEAT_FILES]
    trees = [f"{AGENTS_DIR}/*/*/{name}" for name in SEAT_TREES]
    trees += [f"{PRINCIPALS_DIR}/*/*/{name}" for name in PRINCIPAL_TREES]
    if with_declarations:
        files += [CATALOG_DECLARATION, f"{AGENTS_DIR}/*/*/{DECLARATION}",
                  f"{PRINCIPALS_DIR}/*/*/{PRINCIPAL_DECLARATION}"]
        trees.append(TEMPLATES_DIR)
    return files, trees


def _header(engine: str, with_declarations: bool, comment: str) -> list[str]:
    flag = " --with-declarations" if with_declarations else ""
    return [
        f"{comment} st2 catalog sync-rules --format {engine}{flag}",
        f"{comment} Generated from st2's pinned replicated names; regenerate rather than edit.",
    ]


def syncthing(with_declarations: bool) -> str:
    """A complete ``.stignore`` for the catalog folder. The first matching pattern decides; a
    pattern also covers everything below a directory it matches; ``(?d)`` lets Syncthing delete
    the ignored file when it is all that keeps a directory from being removed."""
    files, trees = replicated_paths(with_declarations)
    lines = _header("syncthing", with_declarations, "//")
    lines.append("// The engines' own files stay where they were made, even inside resources/.")
    lines += [glob if glob in ENGINE_MARKERS else f"(?d){glob}" for glob in ENGINE_GLOBS]
    lines.append("// Never carried: the control plane, exec logs and the supervisor locks.")
    lines += [f"/{CONTROL_DIR}", f"/{LOGS_DIR}", f"/{CONTROL_DIR}.*.lock"]
    lines.append("// Carried.")
    lines += [f"!/{path}" for path in files + trees]
    lines.append("// Everything else is host-local.")
    lines.append("*")
    return "\n".join(lines) + "\n"


def rsync(with_declarations: bool) -> str:
    """An rsync filter file (``rsync -a --filter='merge RULES' …``): the first matching rule
    decides, so every ancestor directory is included before the ``- *`` that ends the list, and
    ``***`` carries a directory with everything below it."""
    files, trees = replicated_paths(with_declarations)
    lines = _header("rsync", with_declarations, "#")
    lines += [f"- {glob}" for glob in ENGINE_GLOBS]
    lines += [f"- /{CONTROL_DIR}/", f"- /{LOGS_DIR}/", f"- /{CONTROL_DIR}.*.lock"]
    ancestors: list[str] = []
    for path in files + trees:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            ancestor = "/".join(parts[:depth]) + "/"
            if ancestor not in ancestors:
                ancestors.append(ancestor)
    lines += [f"+ /{ancestor}" for ancestor in ancestors]
    lines += [f"+ /{path}" for path in files]
    lines += [f"+ /{path}/***" for path in trees]
    lines.append("- *")
    return "\n".join(lines) + "\n"


def unison(with_declarations: bool) -> str:
    """The ``path``/``ignore``/``ignorenot`` lines of a unison profile. ``path`` roots the
    synchronization at the namespaces; every entry of a host directory and of a seat's or
    principal's directory is ignored by a regular expression (unison's ``*`` would skip the
    dotfiles, and a lock is one), and the names that are carried are taken back by
    ``ignorenot``, which overrides ``ignore`` for exactly the path it names (what lies below a
    carried directory is not matched by the depth-bounded expressions)."""
    files, trees = replicated_paths(with_declarations)
    lines = _header("unison", with_declarations, "#")
    roots = [AGENTS_DIR, PRINCIPALS_DIR]
    if with_declarations:
        roots += [CATALOG_DECLARATION, TEMPLATES_DIR]
    lines += [f"path = {root}" for root in roots]
    lines += [f"ignore = Name {glob}" for glob in ENGINE_GLOBS]
    for namespace in (AGENTS_DIR, PRINCIPALS_DIR):
        lines.append(f"ignore = Regex {namespace}/[^/]+/[^/]+")
        lines.append(f"ignore = Regex {namespace}/[^/]+/[^/]+/[^/]+")
    for namespace in (AGENTS_DIR, PRINCIPALS_DIR):
        lines.append(f"ignorenot = Regex {namespace}/[^/.][^/]*/[^/.][^/]*")
    lines += [f"ignorenot = Path {path}" for path in files + trees if "/" in path]
    return "\n".join(lines) + "\n"


RENDERERS = {"syncthing": syncthing, "rsync": rsync, "unison": unison}


def render(engine: str, with_declarations: bool = False) -> str:
    """The rules for ``engine`` (one of :data:`FORMATS`). Raise ``ValueError`` for another."""
    try:
        renderer = RENDERERS[engine]
    except KeyError:
        raise ValueError(f"unknown sync engine {engine!r}; expected one of {', '.join(FORMATS)}") from None
    return renderer(with_declarations)


STIGNORE = ".stignore"
STFOLDER = ".stfolder"  # Syncthing's folder marker at the folder root
_INCLUDE = "#include"
_MAX_INCLUDES = 8


def stignore_patterns(text: str) -> list[str]:
    """The patterns of a ``.stignore`` text in order: blank lines and ``//`` comments dropped,
    surrounding whitespace trimmed (Syncthing trims it too)."""
    patterns = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            patterns.append(stripped)
    return patterns


def stignore_disagreement(catalog_root: Path) -> str | None:
    """Why ``<catalog>/.stignore`` does not carry exactly st2's Syncthing rules (in either
    declaration mode), or None when it does or there is none (unless ``.stfolder`` says
    Syncthing shares the catalog: then everything would be carried). ``#include <file>`` lines are
    expanded from files inside the catalog; order matters (the first match decides)."""
    from st2.fs.read import SNAPSHOT_LIMIT, read_text

    root = Path(catalog_root)
    try:
        text = read_text(root / STIGNORE, SNAPSHOT_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        if os.path.lexists(root / STFOLDER):
            return (f"the catalog is a Syncthing folder ({STFOLDER}) without a {STIGNORE}, so Syncthing carries "
                    f"everything, host-local files included; write one with "
                    f"`st2 catalog sync-rules --format syncthing > {STIGNORE}`")
        return None
    except (OSError, UnicodeDecodeError) as error:
        return f"{STIGNORE} is unreadable ({error})"
    have: list[str] = []
    includes = 0
    for pattern in stignore_patterns(text):
        if not pattern.startswith(_INCLUDE + " "):
            have.append(pattern)
            continue
        includes += 1
        name = pattern[len(_INCLUDE):].strip()
        if includes > _MAX_INCLUDES or name.startswith("/") or ".." in Path(name).parts:
            return f"{STIGNORE} includes {name!r}, which is not a file inside the catalog"
        try:
            have += stignore_patterns(read_text(root / name, SNAPSHOT_LIMIT, follow_symlinks=False))
        except (OSError, UnicodeDecodeError) as error:
            return f"{STIGNORE} includes {name!r}, which is unreadable ({error})"
    candidates = []
    for with_declarations in (False, True):
        want = stignore_patterns(syncthing(with_declarations))
        if have == want:
            return None
        missing = [pattern for pattern in want if pattern not in have]
        extra = [pattern for pattern in have if pattern not in want]
        candidates.append((len(missing) + len(extra), with_declarations, missing, extra))
    _, with_declarations, missing, extra = min(candidates)
    flag = " --with-declarations" if with_declarations else ""
    parts = []
    if missing:
        parts.append("missing " + ", ".join(missing))
    if extra:
        parts.append("extra " + ", ".join(extra))
    if not parts:
        parts.append("the same patterns in another order (the first match decides)")
    return (f"{STIGNORE} disagrees with `st2 catalog sync-rules --format syncthing{flag}`: "
            + "; ".join(parts) + "; regenerate it from that command")
