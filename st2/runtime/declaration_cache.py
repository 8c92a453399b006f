"""What the roster and the bus take from a seat's declaration, and the host-local cache of it.

A roster row needs ten facts of a declaration (presentation, desired state and reason, id,
address, resource descriptors, the driver block's harness, the worktree's branch, the account) and its errors, the bus its id,
address, desired state and stream names: :func:`facts_of` projects them, JSON-native, from
:func:`st2.declarations.load_agent`'s result. Parsing 627 declarations is a fifth of a roster's
time and most of a send's, so :class:`DeclarationCache` keeps each projection in one host-local
file, ``<runtime state>/cache/declarations.<catalog digest>.json`` (``st2.declaration-cache.v1``),
and a row (or a recipient) from a cached projection is the one from a fresh parse
(tests/runtime/test_declaration_cache.py compares the roster's bytes).

The cache is host-local input, so the hostile-input rules apply to it:

- an entry is keyed by the declaration's full stat identity, ``(st_dev, st_ino, st_size,
  st_mtime_ns, st_ctime_ns)``, and served only while the file's stat still carries that key;
- an entry is stored only when the key can prove the bytes: the file's stat is the same before
  and after the parse, and its mtime and ctime are at least :data:`SETTLE_NS` old at caching
  time (older than any filesystem's timestamp granularity, none in the future). A rewrite after
  that gets a ctime of its own, which nothing but the clock can set; a same-size rewrite within
  the granularity of a recent write is therefore never served from the cache. An unreadable
  declaration is never stored;
- the file is read through :func:`st2.fs.read.read_bounded` (no FIFO wait, no symlink, at most
  :data:`CACHE_LIMIT` bytes), decoded by the strict record decoder, and every entry is checked
  field by field: anything malformed, a schema or parser fingerprint that is not this st2's,
  is a miss (the declaration is parsed), never an error;
- it is published whole through :func:`st2.fs.atomic.publish` (a temp file renamed over it), only
  when an entry changed; a failure to publish is ignored (the roster is read-only on the
  catalog, and the cache is only a saving).

The parser fingerprint is st2's version and the size and mtime of every source file of
:mod:`st2.declarations` and of this module, so a changed parser never serves an old projection.
The roster (:mod:`st2.roster.build`) and the bus's seat list (:func:`st2.bus.addressing.seats`)
read it; both are above :mod:`st2.declarations` and :mod:`st2.catalog`, and so is this module.
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a send imports this module, and pathlib costs it milliseconds
    from pathlib import Path

SCHEMA = "st2.declaration-cache.v1"
SETTLE_NS = 2_000_000_000  # above the coarsest timestamp granularity st2 meets (FAT: 2 s)
CACHE_LIMIT = 16 * 1024 * 1024
UNREADABLE = "unreadable-declaration"
STRING_FACTS = ("name", "description", "desiredState", "desiredStateReason", "id", "address", "harness", "worktree",
                "account")


def facts_of(declaration, diagnostics) -> dict:
    """The facts of one ``load_agent`` result: the declared strings (None when absent or when the
    declaration does not load), the resource descriptors, the stream names, the error messages."""
    from st2.declarations.diagnostics import ERROR

    facts: dict = dict.fromkeys(STRING_FACTS)
    facts["resources"], facts["streams"] = [], []
    if declaration is not None:
        facts.update(name=declaration.name, description=declaration.description,
                     desiredState=declaration.desired_state, desiredStateReason=declaration.desired_state_reason,
                     id=declaration.id, address=declaration.address,
                     harness=next(iter(declaration.drivers), None),
                     worktree=declaration.worktree.branch if declaration.worktree is not None else None,
                     account=declaration.account,
                     resources=[resource.wire() for resource in declaration.resources],
                     streams=[task.name for task in declaration.tasks if task.kind == "stream"])
    facts["loaded"] = declaration is not None
    facts["errors"] = [str(diagnostic) for diagnostic in diagnostics if diagnostic.severity == ERROR]
    return facts


def load_facts(path: str) -> tuple[dict, bool]:
    """``(facts, cacheable)`` of a fresh parse of ``path``; an unreadable file is not cacheable."""
    from st2.declarations import load_agent

    declaration, diagnostics = load_agent(path)
    return facts_of(declaration, diagnostics), not any(diagnostic.code == UNREADABLE for diagnostic in diagnostics)


def stat_key(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns]


def settled(key: list[int], now_ns: int) -> bool:
    """True when the key's mtime and ctime are at least :data:`SETTLE_NS` in the past."""
    newest = max(key[3], key[4])
    return now_ns - newest >= SETTLE_NS


def parser_fingerprint() -> str:
    """st2's version and the size and mtime of each source file of the parser and the projection
    (found beside this module, so an all-hit roster never imports the parser)."""
    import st2

    here = os.path.dirname(os.path.abspath(__file__))
    parts = [st2.__version__]
    for directory, names in ((os.path.join(os.path.dirname(here), "declarations"), None), (here, ("declaration_cache.py",))):
        try:
            for name in sorted(names or (name for name in os.listdir(directory) if name.endswith(".py"))):
                status = os.stat(os.path.join(directory, name))
                parts.append(f"{name}:{status.st_size}:{status.st_mtime_ns}")
        except OSError:
            parts.append(f"{directory}:unreadable")
    return ";".join(parts)


def valid_facts(facts: object) -> bool:
    """True when ``facts`` has exactly the shape :func:`facts_of` produces."""
    if not isinstance(facts, dict) or set(facts) != {*STRING_FACTS, "resources", "streams", "loaded", "errors"}:
        return False
    if not isinstance(facts["streams"], list) or not all(isinstance(name, str) for name in facts["streams"]):
        return False
    if not all(facts[name] is None or isinstance(facts[name], str) for name in STRING_FACTS):
        return False
    if not isinstance(facts["loaded"], bool) or not isinstance(facts["errors"], list):
        return False
    if not all(isinstance(error, str) for error in facts["errors"]) or not isinstance(facts["resources"], list):
        return False
    return all(isinstance(resource, dict) and all(isinstance(value, str) for value in resource.values())
               for resource in facts["resources"])


def valid_key(key: object) -> bool:
    return isinstance(key, list) and len(key) == 5 and all(type(part) is int and part >= 0 for part in key)


class DeclarationCache:
    """The projections of one catalog's declarations on this host (see the module docstring)."""

    def __init__(self, file: Path | None, entries: dict, fingerprint: str) -> None:
        self.file = file
        self.entries = entries
        self.fingerprint = fingerprint
        self.changed = False

    @classmethod
    def open(cls, catalog_root: Path) -> DeclarationCache:
        """The cache of ``catalog_root`` as stored (empty when absent or malformed)."""
        from st2.catalog.layout import runtime_state_dir
        from st2.runtime.runtime_home import catalog_digest
        from st2.runtime import layout

        file = layout.declaration_cache(runtime_state_dir(), catalog_digest(catalog_root))
        fingerprint = parser_fingerprint()
        return cls(file, read_entries(file, fingerprint), fingerprint)

    def facts(self, path: str) -> dict:
        """The facts of the declaration at ``path`` (stored by its absolute path): the stored
        projection while the file's stat identity is the stored key, else a fresh parse (stored
        when the key proves its bytes)."""
        path = os.path.abspath(path)
        key = stat_key(path)
        entry = self.entries.get(path)
        if key is not None and entry is not None and entry["key"] == key:
            return entry["facts"]
        facts, cacheable = load_facts(path)
        if key is not None and cacheable and stat_key(path) == key and settled(key, time.time_ns()):
            self.entries[path] = {"key": key, "facts": facts}
            self.changed = True
        elif entry is not None:
            del self.entries[path]
            self.changed = True
        return facts

    def keep_only(self, paths: set[str]) -> None:
        """Forget the entries of declarations no longer discovered."""
        paths = {os.path.abspath(path) for path in paths}
        for path in [path for path in self.entries if path not in paths]:
            del self.entries[path]
            self.changed = True

    def save(self) -> None:
        """Publish the entries atomically when any changed; a failure leaves the old file."""
        if not self.changed or self.file is None:
            return
        from st2.fs.atomic import ensure_directory, publish

        data = json.dumps({"schema": SCHEMA, "parser": self.fingerprint, "entries": self.entries},
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        try:
            directory = ensure_directory(self.file.parent, 0o700)
            publish(self.file, data, directory, root=directory.parent)
        except (OSError, UnicodeError):  # UnsafePublication is an OSError
            return
        self.changed = False


def read_entries(file: Path, fingerprint: str) -> dict:
    """The well-formed entries stored in ``file`` for this parser; {} when anything is off."""
    from st2.fs.read import read_bounded
    from st2.records.decoding import Malformed, load_object

    try:
        stored = load_object(read_bounded(file, CACHE_LIMIT, follow_symlinks=False))
    except (OSError, Malformed):
        return {}
    if stored.get("schema") != SCHEMA or stored.get("parser") != fingerprint or not isinstance(stored.get("entries"), dict):
        return {}
    return {path: entry for path, entry in stored["entries"].items()
            if isinstance(entry, dict) and set(entry) == {"key", "facts"} and valid_key(entry["key"])
            and valid_facts(entry["facts"])}
