"""The runtime scope's paths: PTY session sockets live under the pty root catalog.kdl declares,
resolved on this host, and the sun_path bound is judged against that resolved path."""

from __future__ import annotations

import os
from pathlib import Path

from st2.runtime.scope import SUN_PATH_BYTES, RuntimeScope, catalog_digest


def scope_with(tmp_path: Path, pty_root: str | None) -> RuntimeScope:
    catalog = tmp_path / "c"
    catalog.mkdir(parents=True, exist_ok=True)
    if pty_root is not None:
        (catalog / "catalog.kdl").write_text(f'catalog {{\n    pty-root "{pty_root}"\n}}\n')
    return RuntimeScope(catalog, "h", state_dir=tmp_path / "s")


def test_without_a_declaration_sockets_live_in_the_scope(tmp_path: Path) -> None:
    scope = scope_with(tmp_path, None)
    assert scope.pty_root is None
    assert scope.socket("h.a") == scope.directory / "s" / "h.a"


def test_sockets_live_under_the_declared_root_one_directory_per_catalog(tmp_path: Path) -> None:
    absolute = scope_with(tmp_path, "/run/agents/pty")
    assert absolute.socket("h.a") == Path("/run/agents/pty") / catalog_digest(absolute.catalog) / "h.a"
    relative = scope_with(tmp_path / "two", "pty")
    assert relative.socket("h.a") == relative.catalog / "pty" / catalog_digest(relative.catalog) / "h.a"
    expanded = scope_with(tmp_path / "three", "$CATALOG/sessions")
    assert expanded.sockets.parent == expanded.catalog / "sessions"
    assert absolute.sockets.name != relative.sockets.name   # two catalogs never share a socket


def test_session_socket_overage_is_derived_from_the_resolved_root(tmp_path: Path) -> None:
    root = "/tmp/" + "p" * 90
    scope = scope_with(tmp_path, root)
    path = Path(root) / catalog_digest(scope.catalog) / "h.agent"
    overage = len(os.fsencode(str(path))) + 1 - SUN_PATH_BYTES
    assert overage > 0
    error = scope.socket_admission_error("h.agent")
    assert error.startswith(f"session socket path {path} is {len(os.fsencode(str(path)))} bytes")
    assert f"by {overage} bytes" in error and "shorten the catalog's pty-root" in error
    assert scope_with(tmp_path / "short", "/tmp/p").socket_admission_error("h.agent") is None


def test_a_malformed_catalog_declaration_falls_back_to_the_scope(tmp_path: Path) -> None:
    scope = scope_with(tmp_path, None)
    (scope.catalog / "catalog.kdl").write_text("catalog {\n    pty_root \"/x\"\n}\n")
    assert scope.socket("h.a") == scope.directory / "s" / "h.a"
