"""The pinned harness manifest and its installer.

`tests/lab/harnesses.toml` names each harness's npm package and exact version (the pin), and the
further builds the lab measures beside it (``measured``: earlier builds users run). `install()` puts one
build into ``<cache>/<name>-<version>/`` with ``npm install --prefix`` only when it is missing or
at another version, so a second run costs one stat per build, and several builds of one harness
sit side by side. :func:`builds` lists a harness's builds, the pin first. The cache is
``$ST2_LAB_CACHE`` or ``~/.cache/st2/lab`` (:func:`cache_root`).

Run as a script (``python tests/lab/harnesses.py install [names…]``) it installs every build of
the named harnesses (all by default) in parallel and exits 0 even when npm fails: the failure is recorded next to the
prefix (``<name>-<version>.failed``) and the lab tests then fail naming it, instead of the whole
suite aborting before it starts. It needs only the standard library (Python 3.11+), so it can
run before the project's venv exists.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("harnesses.toml")
INSTALL_TIMEOUT_SECONDS = 600
# A recorded install failure younger than this is reported as is instead of retried, so that a
# registry outage costs one npm timeout per harness, not one per test.
FAILURE_MEMORY_SECONDS = 1800


class InstallFailed(RuntimeError):
    """npm could not install a pinned harness; the message carries npm's own output."""


@dataclass(frozen=True)
class Harness:
    name: str
    package: str
    version: str
    bin: str
    needs: tuple[str, ...]
    run: str
    measured: tuple[str, ...] = ()
    """Further exact builds measured beside the pin (each a :meth:`build` of this harness)."""

    def build(self, version: str) -> "Harness":
        """This harness at ``version`` (the pin or one of :attr:`measured`), in a prefix of its own."""
        if version != self.version and version not in self.measured:
            raise ValueError(f"{self.name}: {version} is neither the pin nor a measured build")
        return replace(self, version=version, measured=())

    @property
    def prefix(self) -> Path:
        return cache_root() / f"{self.name}-{self.version}"

    @property
    def bin_dir(self) -> Path:
        return self.prefix / "node_modules" / ".bin"

    @property
    def executable(self) -> Path:
        return self.bin_dir / self.bin

    @property
    def failure_record(self) -> Path:
        return cache_root() / f"{self.name}-{self.version}.failed"


def cache_root() -> Path:
    """Where the pinned builds live: ``$ST2_LAB_CACHE``, else ``$XDG_CACHE_HOME/st2/lab``
    (``~/.cache/st2/lab``). One install per machine and pinned version, shared by every clone and
    worktree: the five builds are ~2 GB of files, which a fresh clone paid 40–60 s of npm for."""
    explicit = os.environ.get("ST2_LAB_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "st2" / "lab"


def load_manifest(path: Path = MANIFEST) -> dict[str, Harness]:
    """Return the harnesses of the manifest by name, refusing anything but exact versions."""
    data = tomllib.loads(path.read_text())
    harnesses = {}
    for name, entry in data.items():
        version = entry["version"]
        measured = tuple(entry.get("measured", ()))
        for build in (version, *measured):
            parts = build.split(".")
            if len(parts) != 3 or not all(part.isdigit() for part in parts):
                raise ValueError(f"{name}: version {build!r} is not an exact x.y.z pin")
        if version in measured or len(set(measured)) != len(measured):
            raise ValueError(f"{name}: a measured build is named twice")
        harnesses[name] = Harness(
            name=name,
            package=entry["package"],
            version=version,
            bin=entry["bin"],
            needs=tuple(entry.get("needs", ())),
            run=entry.get("run", ""),
            measured=measured,
        )
    return harnesses


def builds(harness: Harness) -> tuple[Harness, ...]:
    """Every build the lab runs of ``harness``: the pin, then each measured build."""
    return (harness, *(harness.build(version) for version in harness.measured))


def installed_version(prefix: Path, package: str) -> str | None:
    """The version of ``package`` installed under ``prefix``, or None when absent or unreadable."""
    try:
        manifest = json.loads((prefix / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version")
    return version if isinstance(version, str) else None


def _split_spec(spec: str) -> tuple[str, str]:
    name, _, version = spec.rpartition("@")
    return name, version


def is_installed(harness: Harness) -> bool:
    """True when the pinned package and every extra need sit in the prefix at their versions."""
    wanted = [(harness.package, harness.version), *map(_split_spec, harness.needs)]
    if any(installed_version(harness.prefix, name) != version for name, version in wanted):
        return False
    return harness.executable.exists()


def npm_available() -> bool:
    return shutil.which("npm") is not None


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive ``flock`` on ``path`` (the lock ``filelock`` takes on Linux, so an older
    installer waits on it too). Standard library only: the installer runs before the project's
    venv exists, beside its creation (``scripts/dev test``)."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def install(harness: Harness, *, retry_recorded_failure: bool = True) -> Path:
    """Install ``harness`` unless it is already there; return its executable.

    Raise InstallFailed with npm's output when npm fails (and record that failure), or with
    the recorded failure when ``retry_recorded_failure`` is false and one is recent.
    """
    cache_root().mkdir(parents=True, exist_ok=True)
    with locked(Path(str(harness.prefix) + ".lock")):
        if is_installed(harness):
            return harness.executable
        if not retry_recorded_failure and harness.failure_record.exists():
            age = time.time() - harness.failure_record.stat().st_mtime
            if age < FAILURE_MEMORY_SECONDS:
                raise InstallFailed(harness.failure_record.read_text())
        command = [
            "npm", "install", "--prefix", str(harness.prefix), "--save-exact",
            "--no-audit", "--no-fund", "--loglevel=error",
            # An unreachable registry should cost minutes, not npm's default of retries with
            # five-minute request timeouts.
            "--fetch-timeout=120000", "--fetch-retries=1",
            f"{harness.package}@{harness.version}", *harness.needs,
        ]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS,
                stdin=subprocess.DEVNULL,
            )
            output = result.stdout + result.stderr
            failed = result.returncode != 0
        except subprocess.TimeoutExpired as timeout:
            output = f"timed out after {INSTALL_TIMEOUT_SECONDS}s\n{timeout.stderr or ''}"
            failed = True
        if failed or not is_installed(harness):
            message = (
                f"npm could not install {harness.package}@{harness.version} into {harness.prefix}\n"
                f"command: {' '.join(command)}\n{output[-4000:]}"
            )
            harness.failure_record.write_text(message)
            raise InstallFailed(message)
        harness.failure_record.unlink(missing_ok=True)
        return harness.executable


def environment_path(harness: Harness) -> str:
    """A PATH with the harness's own bin dir (and so its extra needs, e.g. bun) first."""
    return f"{harness.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "install":
        print("usage: harnesses.py install [name…]", file=sys.stderr)
        return 2
    harnesses = load_manifest()
    names = argv[1:] or list(harnesses)
    every = [build for name in names for build in builds(harnesses[name])]
    if not npm_available():
        print("lab setup: npm is not on PATH; the lab tests will be skipped and say so", file=sys.stderr)
        return 0
    from concurrent.futures import ThreadPoolExecutor

    def one(harness: Harness) -> str:
        name = harness.name
        started = time.monotonic()
        already = is_installed(harness)
        try:
            install(harness)
        except InstallFailed as failure:
            return f"lab setup: FAILED {name} {harness.version}: {str(failure).splitlines()[0]}"
        state = "present" if already else f"installed in {time.monotonic() - started:.0f}s"
        return f"lab setup: {name} {harness.version} {state}"

    with ThreadPoolExecutor(max_workers=len(every)) as pool:
        for line in pool.map(one, every):
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
