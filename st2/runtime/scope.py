"""The runtime scope of one catalog on one host.

``runtime_state_dir()/scopes/<catalog-digest>/<host>/`` holds:

- ``tasks/<runtime-id>.json``    launch records
- ``parks/<runtime-id>.json``    park markers
- ``unpark/<runtime-id>.json``   unpark requests, consumed by the running supervisor
- ``s/<runtime-id>``             tmux sockets (one tmux server per PTY task), unless the catalog
                                 declares a ``pty-root``: then ``<pty-root>/<catalog-digest>/``
                                 resolved on this host holds them
- ``staging/``                   staging for atomic publication of the above
- ``scope.json``                 names the catalog and host, so a digest is never guessed at

The catalog digest keeps the prefix short (tmux sockets must fit the 104-byte ``sun_path``)
while two catalogs on one host never share a channel. Which directory that is — the same from
every environment and every path to the catalog — is :mod:`st2.runtime.runtime_home`'s rule.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from st2.fs.atomic import ensure_directory, publish
from st2.runtime import layout, runtime_home
from st2.runtime.runtime_home import catalog_digest

SCOPE_SCHEMA = "st2.runtime-scope.v1"
# Portable sun_path size (macOS/BSD); Linux allows 108. The path plus its NUL must fit.
SUN_PATH_BYTES = 104


@dataclass(frozen=True)
class RuntimeScope:
    catalog: Path
    host: str
    state_dir: Path | None = None

    # Cached: a pass asks for hundreds of record paths, and the digest and the environment
    # lookup behind the directory are fixed for the scope's lifetime.
    @cached_property
    def directory(self) -> Path:
        return runtime_home.scope_directory(self.catalog, self.host, self.state_dir)

    @cached_property
    def tasks(self) -> Path:
        return layout.tasks(self.directory)

    @cached_property
    def parks(self) -> Path:
        return layout.parks(self.directory)

    @cached_property
    def unpark_requests(self) -> Path:
        return layout.unpark_requests(self.directory)

    @cached_property
    def pty_root(self) -> Path | None:
        """The catalog's declared ``pty-root`` resolved on this host (``catalog.kdl``), or None
        when undeclared. A malformed catalog.kdl resolves to None here: the runtime keeps
        working on the default and ``st2 validate`` reports the declaration."""
        from st2.declarations.catalog import load_catalog_declaration

        declaration, _ = load_catalog_declaration(self.catalog)
        return declaration.resolved_pty_root(Path(os.path.abspath(self.catalog)))

    @cached_property
    def sockets(self) -> Path:
        """The directory of this scope's PTY session sockets: under the declared pty root (one
        directory per catalog, so catalogs sharing a root never share a socket), else ``s/``."""
        if self.pty_root is not None:
            return self.pty_root / catalog_digest(self.catalog)
        return layout.sockets(self.directory)

    @cached_property
    def staging(self) -> Path:
        return layout.staging(self.directory)

    def launch_record(self, runtime_id: str) -> Path:
        return self.tasks / f"{runtime_id}.json"

    def park_marker(self, runtime_id: str) -> Path:
        return self.parks / f"{runtime_id}.json"

    def unpark_request(self, runtime_id: str) -> Path:
        return self.unpark_requests / f"{runtime_id}.json"

    def socket(self, runtime_id: str) -> Path:
        return self.sockets / runtime_id

    def socket_admission_error(self, runtime_id: str) -> str | None:
        """None when ``runtime_id``'s session socket can be bound; otherwise the diagnostic
        naming the resolved path, the byte overage and what to shorten."""
        remedy = "the catalog's pty-root" if self.pty_root is not None else "XDG_STATE_HOME"
        return socket_admission_error(self.socket(runtime_id), remedy)

    def exists(self) -> bool:
        return self.directory.is_dir()

    def ensure(self) -> None:
        """Create the scope's directories (never called by read-only observers), first claiming
        the catalog's pointer to it so every other environment finds this one scope."""
        if self.state_dir is None:
            claimed = runtime_home.claim_pointer(self.catalog, self.host, self.directory)
            if claimed != self.directory:  # another environment won the claim: use its scope
                for name in ("directory", "tasks", "parks", "unpark_requests", "sockets", "staging"):
                    self.__dict__.pop(name, None)
                self.__dict__["directory"] = claimed
        for directory in (self.tasks, self.parks, self.unpark_requests, self.sockets, self.staging):
            ensure_directory(directory, mode=0o700)
        marker = layout.scope_record(self.directory)
        if not marker.exists():
            body = {"schema": SCOPE_SCHEMA, "catalog": str(self.catalog), "host": self.host}
            self.publish(marker, json.dumps(body).encode() + b"\n")

    def publish(self, target: Path, data: bytes) -> None:
        publish(target, data, self.staging, root=self.directory, mode=0o600)


def socket_path_overage(path: Path) -> int:
    """How many bytes ``path`` (plus its terminating NUL) exceeds the portable ``sun_path``
    bound by; zero or less means it fits."""
    return len(os.fsencode(str(path))) + 1 - SUN_PATH_BYTES


def socket_admission_error(path: Path, remedy: str = "XDG_STATE_HOME") -> str | None:
    """None when a unix socket can be bound at ``path``; otherwise a diagnostic naming the
    resolved path and the overage, and ``remedy`` (what holds the path's prefix) to shorten."""
    overage = socket_path_overage(path)
    if overage <= 0:
        return None
    length = len(os.fsencode(str(path)))
    return (
        f"session socket path {path} is {length} bytes; with its NUL it exceeds the portable "
        f"{SUN_PATH_BYTES}-byte sun_path bound by {overage} byte{'s' if overage != 1 else ''}, "
        f"so the PTY could never start (shorten {remedy}, the host or the identity)"
    )
