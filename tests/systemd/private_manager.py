"""A private `systemd --user` manager for the opt-in systemd tier, fenced off from the machine.

A user manager started in the wrong place takes over processes that are not ours: started from
the root cgroup it moves every process of the machine into its own scope. So, before anything
starts, :func:`guard_refusals` lists every reason not to run (opt-in variable, root, no systemd
as PID 1 or booted system whose real manager we could reach, tools present, cgroup
hierarchies writable); :class:`PrivateManager` then

1. creates a dedicated cgroup in every mounted hierarchy, nested under the cgroup this process
   is in (so whatever limits apply to us keep applying);
2. snapshots the cgroup membership of PID 1 and of every other process on the machine;
3. starts ``tests/systemd/launch-manager``, which moves *itself* into the dedicated cgroups,
   verifies its own /proc/self/cgroup names them in every hierarchy (and refuses to go on
   otherwise), then, in a private mount namespace (``unshare -m``, private propagation) with a
   tmpfs on /run/systemd, execs ``systemd --user`` with a temporary HOME and XDG_RUNTIME_DIR;
4. on teardown asks the manager to exit (``systemctl --user exit``), kills by PID whatever is
   still in the dedicated cgroups (all of it ours by construction), removes the cgroups, and
   reports every process outside them whose cgroup membership changed.

Every ``systemctl``/``systemd-run`` call goes through :meth:`PrivateManager.environment`, which
carries only the private XDG_RUNTIME_DIR and no D-Bus address, so nothing here can reach the
machine's own manager or session bus. Service output goes to files (there is no journald).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from support import poll_for

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "launch-manager"
MANAGER_BINARIES = (Path("/lib/systemd/systemd"), Path("/usr/lib/systemd/systemd"))
TOOLS = ("unshare", "mount", "systemctl", "systemd-run", "systemd-analyze")
OPT_IN = "ST2_SYSTEMD_TESTS"
# The default.target of the private manager: nothing of the distribution's user units
# (sockets, gpg-agent, tmpfiles) is pulled in; the tests start exactly what they test.
DEFAULT_TARGET = "[Unit]\nDescription=st2 systemd tier: nothing by default\nDefaultDependencies=no\n"


@dataclass(frozen=True)
class Hierarchy:
    """One mounted cgroup hierarchy and where this process sits in it."""

    mount: Path
    version: int
    controllers: str
    own: str  # this process's cgroup, relative to the hierarchy's mount

    @property
    def own_directory(self) -> Path:
        return self.mount / self.own.lstrip("/")


def parse_hierarchies(mountinfo: str, cgroup: str) -> list[Hierarchy]:
    """Match each line of /proc/self/cgroup to its mount in /proc/self/mountinfo. Raise
    ``LookupError`` for a hierarchy that is not mounted (we could not fence it)."""
    mounts = []
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append((tail[0], fields[3], Path(fields[4]), set(tail[2].split(","))))
    hierarchies = []
    for line in cgroup.splitlines():
        identifier, controllers, path = line.split(":", 2)
        if identifier == "0" and controllers == "":
            candidates = [mount for mount in mounts if mount[0] == "cgroup2"]
        else:
            wanted = set(controllers.split(","))
            candidates = [mount for mount in mounts if mount[0] == "cgroup" and wanted <= mount[3]]
        if not candidates:
            raise LookupError(f"cgroup hierarchy {line!r} is not mounted here")
        kind, root, mount_point, _ = candidates[0]
        if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
            raise LookupError(f"cgroup {path} lies outside the mounted root {root} at {mount_point}")
        relative = path[len(root.rstrip("/")):] if root != "/" else path
        hierarchies.append(Hierarchy(mount_point, 2 if kind == "cgroup2" else 1, controllers, relative or "/"))
    return hierarchies


def guard_refusals(environment: dict[str, str], euid: int, pid1_command: str, booted: bool,
                   missing_tools: list[str], hierarchies: list[Hierarchy] | str) -> list[str]:
    """Every reason the tier must not run here; empty when it may. Pure, so the guards
    themselves are tested without starting anything."""
    reasons = []
    if environment.get(OPT_IN) != "1":
        reasons.append(f"opt-in tier: set {OPT_IN}=1 to start a private systemd --user manager")
    if euid != 0:
        reasons.append("needs root (cgroup creation in every hierarchy, unshare -m, mounting /run/systemd)")
    if pid1_command == "systemd" or booted:
        reasons.append("this machine runs systemd (PID 1 or /run/systemd/system): its real managers are "
                       "within reach, so the tier refuses to run here")
    if missing_tools:
        reasons.append(f"missing tools: {', '.join(missing_tools)}")
    if isinstance(hierarchies, str):
        reasons.append(f"cannot fence the manager: {hierarchies}")
    elif not hierarchies:
        reasons.append("no cgroup hierarchy is mounted")
    return reasons


def current_refusals() -> tuple[list[str], list[Hierarchy]]:
    try:
        hierarchies: list[Hierarchy] | str = parse_hierarchies(
            Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text())
    except (OSError, LookupError, ValueError) as error:
        hierarchies = str(error)
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not any(binary.exists() for binary in MANAGER_BINARIES):
        missing.append("systemd (the manager binary)")
    reasons = guard_refusals(dict(os.environ), os.geteuid(), Path("/proc/1/comm").read_text().strip(),
                             Path("/run/systemd/system").exists(), missing, hierarchies)
    return reasons, hierarchies if isinstance(hierarchies, list) else []


def process_start(pid: str) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def cgroup_snapshot() -> dict[tuple[str, str], tuple[str, str]]:
    """(pid, start time) -> (/proc/<pid>/cgroup, command line) for every readable process."""
    snapshot = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        start = process_start(entry)
        try:
            membership = Path(f"/proc/{entry}/cgroup").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if start is not None:
            snapshot[(entry, start)] = (membership, command.strip()[:120])
    return snapshot


def _moved_up(old_line: str, new_line: str) -> bool:
    """True when a hierarchy line changed only by its process moving to an ancestor cgroup,
    which is how an owner dissolves its cgroup. A user manager only ever moves processes *down*
    into its own subtree, so such a move cannot be ours."""
    old_path, new_path = old_line.split(":", 2)[2], new_line.split(":", 2)[2]
    return old_line.split(":", 2)[:2] == new_line.split(":", 2)[:2] and (
        new_path == "/" or old_path.startswith(new_path.rstrip("/") + "/"))


def changed_memberships(before: dict, after: dict, ours: str) -> tuple[list[str], list[str]]:
    """Processes alive in both snapshots whose cgroup membership differs, named by command:
    (unexplained changes or any touching the cgroup named ``ours``, moves to an ancestor)."""
    unexplained, moved_up = [], []
    for key in sorted(set(before) & set(after), key=lambda key: int(key[0])):
        (old, command), (new, _) = before[key], after[key]
        if old == new:
            continue
        pairs = [(line, after_line) for line, after_line in zip(old.splitlines(), new.splitlines()) if line != after_line]
        described = f"pid {key[0]} ({command}): " + "; ".join(f"{line} -> {after_line}" for line, after_line in pairs)
        touches_ours = ours in old or ours in new
        if not touches_ours and len(old.splitlines()) == len(new.splitlines()) and all(_moved_up(*pair) for pair in pairs):
            moved_up.append(described)
        else:
            unexplained.append(described)
    return unexplained, moved_up


@dataclass
class PrivateManager:
    hierarchies: list[Hierarchy]
    # Not under /tmp or /var/tmp: units with PrivateTmp= (the usage poll) would not see it.
    # Short, because the manager's sockets and st2's tmux sockets live below it.
    base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="st2sd.", dir="/var/lib")))
    name: str = field(default_factory=lambda: f"st2-systemd-tier-{os.getpid()}-{secrets.token_hex(3)}")
    process: subprocess.Popen | None = None
    before: dict = field(default_factory=dict)
    created: list[Path] = field(default_factory=list)
    moved_up: list[str] = field(default_factory=list)

    # Paths -------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def runtime(self) -> Path:
        return self.base / "run"

    @property
    def unit_directory(self) -> Path:
        return self.home / ".config" / "systemd" / "user"

    @property
    def logs(self) -> Path:
        return self.base / "logs"

    def environment(self, **extra: str) -> dict[str, str]:
        """The environment of the manager and of every client call: private dirs, no bus."""
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "LANG": "C.UTF-8",
            "SYSTEMD_LOG_TARGET": "console",
            "SYSTEMD_LOG_COLOR": "0",
            "SYSTEMD_PAGER": "",
        }
        environment.update(extra)
        return environment

    # Lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        for directory in (self.home, self.runtime, self.unit_directory, self.logs):
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.unit_directory / "default.target").write_text(DEFAULT_TARGET)
        for hierarchy in self.hierarchies:
            directory = hierarchy.own_directory / self.name
            directory.mkdir()
            self.created.append(directory)
            for setting in ("cpuset.cpus", "cpuset.mems"):
                if (directory / setting).exists():
                    (directory / setting).write_text((hierarchy.own_directory / setting).read_text())
        self.before = cgroup_snapshot()
        manager = next(binary for binary in MANAGER_BINARIES if binary.exists())
        with open(self.logs / "manager.log", "ab") as log:
            self.process = subprocess.Popen(
                [str(LAUNCHER), self.name, str(manager), *(str(path) for path in self.created)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self.environment(), start_new_session=True,
            )
        if not poll_for(lambda: self.process.poll() is not None or (self.runtime / "systemd" / "private").exists(), timeout=30, step=0.1):
            raise RuntimeError("the private manager did not open its socket within 30 s")
        if self.process.poll() is not None:
            raise RuntimeError(f"the launcher exited {self.process.returncode}: {self.manager_log()}")
        # `is-system-running` says "offline" from outside the manager's mount namespace (no
        # /run/systemd/system there), so ask the manager itself.
        if not poll_for(lambda: self.systemctl("show", "--property=SystemState", check=False).stdout.strip()
                    in ("SystemState=running", "SystemState=degraded"), timeout=30, step=0.1):
            raise RuntimeError(f"the private manager never finished starting: {self.manager_log()}")
        adopted = self.adopted_processes()
        if adopted:
            raise RuntimeError(f"the private manager adopted processes that are not ours: {adopted}")

    def stop(self) -> list[str]:
        """Tear everything down; return the problems found (empty when clean)."""
        problems = []
        if self.process is not None and self.process.poll() is None:
            self.systemctl("exit", check=False, timeout=30)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                problems.append("the manager ignored `systemctl --user exit`; killed it by PID")
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        problems += self.adopted_processes()
        for directory in self.created:
            # Only processes that did not exist before the manager started are ours to kill; a
            # pre-existing one here was adopted (reported above) and is moved back instead.
            for pid in self.member_pids(directory):
                if self.existed_before(pid):
                    self._restore(pid, problems)
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not poll_for(lambda: not self.member_pids(directory), timeout=10, step=0.1):
                problems.append(f"processes {self.member_pids(directory)} would not leave {directory}")
        for directory in self.created:
            for child in sorted((path for path in directory.rglob("*") if path.is_dir()),
                                key=lambda path: len(path.parts), reverse=True):
                self._remove_cgroup(child, problems)
            self._remove_cgroup(directory, problems)
        unexplained, self.moved_up = changed_memberships(self.before, cgroup_snapshot(), self.name)
        problems += [f"cgroup membership changed: {change}" for change in unexplained]
        shutil.rmtree(self.base, ignore_errors=True)
        return problems

    def existed_before(self, pid: int) -> bool:
        start = process_start(str(pid))
        return start is not None and (str(pid), start) in self.before

    def adopted_processes(self) -> list[str]:
        """Processes that existed before the manager started and now sit in its cgroups."""
        return [
            f"pre-existing pid {pid} ({self.before[(str(pid), process_start(str(pid)))][1]}) was adopted into {directory}"
            for directory in self.created
            for pid in self.member_pids(directory)
            if self.existed_before(pid)
        ]

    def _restore(self, pid: int, problems: list[str]) -> None:
        """Put an adopted process back where it was in every hierarchy."""
        membership, _ = self.before[(str(pid), process_start(str(pid)))]
        for line in membership.splitlines():
            identifier, controllers, path = line.split(":", 2)
            for hierarchy in self.hierarchies:
                if hierarchy.controllers == controllers:
                    try:
                        (hierarchy.mount / path.lstrip("/") / "cgroup.procs").write_text(str(pid))
                    except OSError as error:
                        problems.append(f"cannot move pid {pid} back to {path}: {error}")

    @staticmethod
    def member_pids(directory: Path) -> list[int]:
        pids = []
        for procs in [directory / "cgroup.procs", *directory.rglob("*/cgroup.procs")]:
            try:
                pids += [int(word) for word in procs.read_text().split()]
            except OSError:
                pass
        return sorted(set(pids))

    @staticmethod
    def _remove_cgroup(directory: Path, problems: list[str]) -> None:
        for _ in range(50):
            try:
                directory.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)
        problems.append(f"cannot remove cgroup {directory}")

    def manager_log(self) -> str:
        try:
            return (self.logs / "manager.log").read_text()[-3000:]
        except OSError:
            return ""

    # Clients -----------------------------------------------------------------------------
    def systemctl(self, *arguments: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run(["systemctl", "--user", "--no-pager", *arguments], capture_output=True, text=True,
                                env=self.environment(), timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"systemctl --user {' '.join(arguments)} exited {result.returncode}: "
                                 f"{result.stderr}{self.manager_log()[-1500:]}")
        return result

    def show(self, unit: str, *properties: str) -> dict[str, str]:
        output = self.systemctl("show", unit, *(f"--property={name}" for name in properties)).stdout
        return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)

    def drop_in(self, unit: str, name: str, text: str) -> Path:
        directory = self.unit_directory / f"{unit}.d"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}.conf"
        path.write_text(text)
        return path

    def cgroup_of(self, pid: int) -> str:
        """The pid's cgroup in the name=systemd (v1) or unified (v2) hierarchy systemd tracks."""
        text = Path(f"/proc/{pid}/cgroup").read_text()
        match = re.search(r"^\d+:name=systemd:(.*)$", text, re.MULTILINE) or re.search(r"^0::(.*)$", text, re.MULTILINE)
        return match.group(1) if match else ""
