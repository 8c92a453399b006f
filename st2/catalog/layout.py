"""Where everything lives in a catalog. Every reader derives its paths from here.

The names a replication engine must carry between hosts are pinned in one constant,
:data:`REPLICATED_NAMES`; :func:`sync_include_rules` lists them as include globs, and
:mod:`st2.catalog.sync_rules` renders each engine's rules from them (``st2 catalog sync-rules``).
Nothing else in st2 spells these names. Standard library only: hot paths import this.
"""

from __future__ import annotations

import os
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the paths below are the caller's own (a Path root gives Paths)
    from pathlib import Path

# The pinned replicated names (docs/records.md §Placement and replicated paths). A transport include list
# that drops one of these silently loses presence, observed state, context or mail.
STATUS = "status"
HARNESS_STATE = "harness-state"
HARNESS_CONTEXT = "harness-context"
RESOURCES = "resources"
RESOURCE_STATE = "resource-state"           # one state record per resource binding (docs/resources.md)
REPLICATED_NAMES: tuple[str, ...] = (RESOURCES, STATUS, HARNESS_STATE, HARNESS_CONTEXT, RESOURCE_STATE)
REPLICATED_TREES: tuple[str, ...] = (RESOURCES, RESOURCE_STATE)
"""The replicated names that are directories, carried with everything below them."""

# Not replicated.
DRIVER_DIAGNOSTIC = "driver-diagnostic"
DECLARATION = "agent.kdl"
PRINCIPAL_DECLARATION = "principal.kdl"
CATALOG_DECLARATION = "catalog.kdl"
CONTROL_DIR = ".st2"
AGENTS_DIR = "agents"
PRINCIPALS_DIR = "principals"
TEMPLATES_DIR = "_templates"
LOGS_DIR = "logs"
INBOX = "inbox"
ARCHIVE = "archive"
CONTEXT = "context"
HARNESS_CONTEXT_STAGING = "harness-context-staging"
RESOURCE_STATE_STAGING = "resource-state-staging"
CATALOG_GENERATION = "catalog-generation"
CATALOG_AUTHORING_LOCK = "catalog-authoring.lock"
RETIRED_OBSERVED = "retired-observed.json"
CATALOG_ARCHIVE = "archive"                 # .st2/archive/<host>/<identity>/ + <identity>.tombstone.json


def sync_include_rules() -> list[str]:
    """The include rules a replication engine needs, derived from :data:`REPLICATED_NAMES`."""
    rules = []
    for name in REPLICATED_NAMES:
        rules.append(f"**/{name}/**" if name in REPLICATED_TREES else f"**/{name}")
    return rules


class SeatPaths(namedtuple("SeatPaths", ("catalog", "host", "identity"))):
    """The files of one seat, ``<catalog>/agents/<host>/<identity>``. (namedtuple classes, not
    dataclasses: hot paths import this module, and dataclasses cost them milliseconds.)"""

    __slots__ = ()
    catalog: Path
    host: str
    identity: str

    @property
    def directory(self) -> Path:
        return self.catalog / AGENTS_DIR / self.host / self.identity

    @property
    def declaration(self) -> Path:
        return self.directory / DECLARATION

    @property
    def status(self) -> Path:
        return self.directory / STATUS

    @property
    def harness_state(self) -> Path:
        return self.directory / HARNESS_STATE

    @property
    def harness_context(self) -> Path:
        return self.directory / HARNESS_CONTEXT

    @property
    def driver_diagnostic(self) -> Path:
        return self.directory / DRIVER_DIAGNOSTIC

    @property
    def resources(self) -> Path:
        return self.directory / RESOURCES

    @property
    def resource_state(self) -> Path:
        return self.directory / RESOURCE_STATE

    @property
    def inbox(self) -> Path:
        return self.resources / INBOX

    @property
    def archive(self) -> Path:
        return self.resources / ARCHIVE

    @property
    def context(self) -> Path:
        return self.resources / CONTEXT

    @property
    def runtime_id(self) -> str:
        return f"{self.host}.{self.identity}"


class CatalogPaths(namedtuple("CatalogPaths", ("root",))):
    """The catalog-level files."""

    __slots__ = ()
    root: Path

    @property
    def declaration(self) -> Path:
        return self.root / CATALOG_DECLARATION

    @property
    def agents(self) -> Path:
        return self.root / AGENTS_DIR

    @property
    def principals(self) -> Path:
        return self.root / PRINCIPALS_DIR

    @property
    def templates(self) -> Path:
        return self.root / TEMPLATES_DIR

    @property
    def logs(self) -> Path:
        return self.root / LOGS_DIR

    @property
    def control(self) -> Path:
        return self.root / CONTROL_DIR

    @property
    def harness_context_staging(self) -> Path:
        return self.control / HARNESS_CONTEXT_STAGING

    @property
    def catalog_generation(self) -> Path:
        return self.control / CATALOG_GENERATION

    @property
    def catalog_authoring_lock(self) -> Path:
        return self.control / CATALOG_AUTHORING_LOCK

    @property
    def retired_observed(self) -> Path:
        return self.control / RETIRED_OBSERVED

    @property
    def archive_root(self) -> Path:
        """``.st2/archive``: archived seats, out of discovery's reach by construction."""
        return self.control / CATALOG_ARCHIVE

    def supervisor_lock(self, host: str) -> Path:
        return self.root / f".st2.{host}.lock"

    def seat(self, host: str, identity: str) -> SeatPaths:
        return SeatPaths(self.root, host, identity)

    def log(self, runtime_id: str) -> Path:
        return self.logs / f"{runtime_id}.log"


def state_home_text() -> str:
    """``${XDG_STATE_HOME:-~/.local/state}`` as text (what hot paths use: no pathlib)."""
    return os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")


def state_home() -> Path:
    """:func:`state_home_text` as a ``Path`` (pathlib is imported here, not by the module: hot
    paths import this module for its names)."""
    from pathlib import Path

    return Path(state_home_text())


def runtime_state_text() -> str:
    """Host-local runtime state (launch records, park markers, DING ownership, ledgers), as text."""
    return os.path.join(state_home_text(), "st2")


def runtime_state_dir() -> Path:
    """:func:`runtime_state_text` as a ``Path``."""
    from pathlib import Path

    return Path(runtime_state_text())
