"""``<harness> --version``, asked once per build: the one version probe of every gated driver.

A bun-built harness answers ``--version`` in about a CPU-second (opencode 1.18.33: 0.9–1.3 s),
and a fleet's reboot launches every seat at once. So a version found is kept in the host-local
build cache (``cache/harness-builds.json`` under the runtime state directory,
:func:`st2.runtime.layout.harness_builds`), keyed on the build: the file the harness's ``argv[0]``
resolves to (through the session's ``PATH``), by real path, device, inode, size, modification and
change time. A replaced build is a new key and is probed again (npm and package managers write
new files; Nix a new store path; an overwrite in place changes the change time). A failed probe is
never kept. Launches of a build wait (bounded) on the cache's lock while the first of them probes,
so a reboot of many seats of one build probes it once. A cache that does not parse reads as empty
and is replaced; one that cannot be written costs only the next probe.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Callable

SCHEMA = "st2.harness-builds.v1"
KEPT_BUILDS = 64          # the newest builds kept; an older one is probed again
_READ_LIMIT = 1 << 16


def build_key(argv0: str, environment: dict) -> str | None:
    """The identity of the build ``argv0`` runs, or None when it resolves to no regular file."""
    found = argv0 if os.sep in argv0 else shutil.which(argv0, path=environment.get("PATH"))
    if not found:
        return None
    try:
        real = os.path.realpath(found)
        status = os.stat(real)
    except OSError:
        return None
    if not os.path.isfile(real):
        return None
    return (f"{real}\0{status.st_dev}:{status.st_ino}:{status.st_size}:{status.st_mtime_ns}:"
            f"{status.st_ctime_ns}")


def probe(argv0: str, environment: dict, parse: Callable[[str], str | None], name: str, *,
          timeout: float, stderr: bool = False, exit_zero: bool = True) -> tuple[str | None, str | None]:
    """``(version, None)`` for the build ``argv0`` runs — from the cache, or from ``<argv0>
    --version`` whose output (stdout, and stderr too when ``stderr``) ``parse`` reads, its exit
    status 0 when ``exit_zero`` — or ``(None, why not)``, naming what it looked for as ``name``
    (``"codex-cli version"``)."""
    from st2.catalog.layout import runtime_state_dir
    from st2.fs.lock import LockTimeout, record_lock
    from st2.runtime import layout

    key = build_key(argv0, environment)
    if key is None:
        return _ask(argv0, environment, parse, name, timeout, stderr, exit_zero)
    cache = layout.harness_builds(runtime_state_dir())
    try:
        os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
        with record_lock(cache, timeout=timeout + 5.0):
            builds = _read(cache)
            if key in builds:
                return builds[key], None
            version, problem = _ask(argv0, environment, parse, name, timeout, stderr, exit_zero)
            if version is not None:
                builds.pop(key, None)
                builds[key] = version
                try:
                    _write(cache, dict(list(builds.items())[-KEPT_BUILDS:]))
                except OSError:
                    pass   # not kept: the next launch probes again
            return version, problem
    except (OSError, LockTimeout):
        return _ask(argv0, environment, parse, name, timeout, stderr, exit_zero)


def _ask(argv0: str, environment: dict, parse, name: str, timeout: float, stderr: bool, exit_zero: bool):
    try:
        result = subprocess.run([argv0, "--version"], capture_output=True, text=True, env=environment,
                                timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"cannot run {argv0} --version: {error}"
    version = parse((result.stdout or "") + ("\n" + (result.stderr or "") if stderr else ""))
    if version is None or (exit_zero and result.returncode != 0):
        return None, f"{argv0} --version printed no {name} (exit {result.returncode})"
    return version, None


def _read(cache: str) -> dict[str, str]:
    from st2.fs.read import read_optional

    try:
        value = json.loads(read_optional(cache, _READ_LIMIT, follow_symlinks=False) or b"null")
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict) or value.get("schema") != SCHEMA or not isinstance(value.get("builds"), dict):
        return {}
    return {key: version for key, version in value["builds"].items()
            if isinstance(key, str) and isinstance(version, str)}


def _write(cache: str, builds: dict[str, str]) -> None:
    from st2.fs.atomic import publish

    data = json.dumps({"schema": SCHEMA, "builds": builds}, separators=(",", ":")).encode()
    directory = os.path.dirname(cache)
    publish(cache, data, directory, root=os.path.dirname(directory), mode=0o600, durable=False)
