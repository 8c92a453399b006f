"""Where one catalog's host-local runtime scope lives, whatever path or environment names it.

One catalog directory on one host has exactly one fleet. The scope directory (launch records,
park markers, DING ownership, sockets) is therefore found the same way from every environment:

1. the catalog's control plane holds a pointer, ``<catalog>/.st2/runtime-scope.<host>``, one line
   naming the scope directory the first environment that ensured the scope created. Every later
   environment — another ``XDG_STATE_HOME`` (a systemd unit and a login shell, sudo) or another
   path to the catalog (a symlink) — reads it and uses that directory;
2. without a pointer, the scope is ``<runtime state>/scopes/<digest>/<host>`` where the digest
   is of the catalog's *resolved* path (``realpath``), so every symlink to one directory names
   one scope;
3. a scope an older st2 created under the digest of the literal (unresolved) path is still
   found when it exists and the resolved one does not (migration by adoption: its records keep
   being found; the pointer then names it).

The pointer is claimed with an exclusive create, so two environments ensuring the scope at once
agree on the winner's directory. Standard library only (the roster's session probe reads it).
"""

from __future__ import annotations

import errno
import os

from st2.catalog.layout import CONTROL_DIR, runtime_state_dir
from st2.base.digest import sha256
from st2.fs.atomic import write_all
from st2.fs.read import RUNTIME_LIMIT, read_optional
from st2.runtime import layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a send reads catalog_digest, and pathlib costs it milliseconds
    from pathlib import Path

POINTER_PREFIX = "runtime-scope."


def digest_of(path: str) -> str:
    return sha256(path.encode()).hexdigest()[:12]  # st2.base.digest: no OpenSSL on the notifier's path


def catalog_digest(catalog: Path) -> str:
    """The digest of the catalog's resolved path: every path to one directory shares it."""
    return digest_of(os.path.realpath(catalog))


def pointer_path(catalog: Path, host: str) -> Path:
    from pathlib import Path

    return Path(os.path.realpath(catalog)) / CONTROL_DIR / f"{POINTER_PREFIX}{host}"


def read_pointer(catalog: Path, host: str) -> Path | None:
    """The scope directory the pointer names, or None (absent, unreadable or not an absolute
    path ending in ``/<host>``: a malformed pointer is ignored, never followed)."""
    try:
        data = read_optional(pointer_path(catalog, host), RUNTIME_LIMIT, follow_symlinks=False)
    except OSError:
        return None
    if data is None:
        return None
    text = data.decode("utf-8", "replace").strip()
    if "\n" in text or not text.startswith("/") or not text.endswith(f"/{host}"):
        return None
    from pathlib import Path

    return Path(text)


def default_directory(catalog: Path, host: str, state_dir: Path | None = None) -> Path:
    """The scope directory of this environment when no pointer names one: the resolved-path
    digest's, or an existing legacy (literal-path digest) scope when only that one exists."""
    base = layout.scopes(state_dir if state_dir is not None else runtime_state_dir())
    resolved = base / catalog_digest(catalog) / host
    legacy = base / digest_of(os.path.abspath(catalog)) / host
    if legacy != resolved and not resolved.is_dir() and legacy.is_dir():
        return legacy
    return resolved


def scope_directory(catalog: Path, host: str, state_dir: Path | None = None) -> Path:
    """Where the catalog's scope on ``host`` is (read-only: nothing is created). An explicit
    ``state_dir`` (a test's, the demo's) is authoritative; otherwise the pointer, else the
    default."""
    if state_dir is not None:
        return default_directory(catalog, host, state_dir)
    return read_pointer(catalog, host) or default_directory(catalog, host)


def claim_pointer(catalog: Path, host: str, directory: Path) -> Path:
    """Make the pointer name ``directory`` unless another environment claimed it first; return
    the directory the pointer names afterwards (the winner's)."""
    pointer = pointer_path(catalog, host)
    current = read_pointer(catalog, host)
    if current is not None:
        return current
    pointer.parent.mkdir(parents=True, exist_ok=True)
    temporary = pointer.parent / f".{pointer.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        write_all(descriptor, f"{directory}\n".encode(), temporary)  # an OSError names the file
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        os.close(descriptor)
    try:
        if os.path.lexists(pointer):  # a malformed pointer: replace it (atomically)
            os.replace(temporary, pointer)
        else:
            try:
                os.link(temporary, pointer)
            except OSError as error:
                if error.errno != errno.EEXIST:
                    raise
    finally:
        temporary.unlink(missing_ok=True)
    return read_pointer(catalog, host) or directory
