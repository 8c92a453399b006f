"""Doctor's wake-up check: every live DING notifier wakes on inotify — registered with the
scope's seat host (one shared instance, :mod:`st2.seathost`) or holding an instance of its own —
and never silently on its timer alone. (A native wrapper's pump registers the same way and says
in its PTY when it cannot; its pane process is not told apart from other PTY tasks here.)

``fs.inotify.max_user_instances`` (128 by default) caps instances per user, so a fleet without
its seat host runs out past ~128 seats; the process that cannot get one says so in its log, and
this check names it: a failure per process that has neither (``wake-timer-only``), a failure when
the seat host itself has no instance, and an advisory when no seat host answers while per-seat
processes run (each then holds its own instance; the count in use is given against the limit).
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.doctor.findings import Finding, Severity
from st2.runtime import launch_record
from st2.runtime.launch_record import MalformedRecord
from st2.runtime.scope import RuntimeScope

LIMIT_FILE = Path("/proc/sys/fs/inotify/max_user_instances")


def inotify_instances(pid: int) -> int:
    """How many inotify instances ``pid`` holds (0 when its descriptors cannot be read)."""
    count = 0
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for name in names:
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}") == "anon_inode:inotify":
                count += 1
        except OSError:
            pass
    return count


def _waiters(scope: RuntimeScope) -> dict[str, int]:
    """runtime id -> pid of every live DING companion."""
    from st2.process.identity import Liveness, liveness

    found = {}
    for runtime_id in launch_record.recorded_ids(scope):
        try:
            record = launch_record.read(scope, runtime_id)
        except MalformedRecord:
            continue
        if record is None or liveness(record.identity) != Liveness.ALIVE:
            continue
        if runtime_id.endswith(".ding"):
            found[runtime_id] = record.pid
    return found


def wake_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.seathost import wire

    scope = RuntimeScope(catalog_root, host)
    if not scope.exists():
        return []
    waiters = _waiters(scope)
    try:
        hello = wire.request(wire.socket_path(scope.directory), {"op": "hello"}, timeout=2.0)
    except OSError:
        hello = None
    registrants = set(hello.get("registrants") or ()) if hello else set()
    findings = []
    if hello is not None and hello.get("inotify") is False:
        findings.append(Finding(Severity.FAILURE, "supervisor", "wake-timer-only",
                                f"the seat host (pid {hello.get('pid')}) has no inotify instance: every seat "
                                "registered with it wakes on its timer only"))
    own = {rid: inotify_instances(pid) for rid, pid in waiters.items() if pid not in registrants}
    for runtime_id, count in sorted(own.items()):
        if count == 0:
            findings.append(Finding(Severity.FAILURE, runtime_id, "wake-timer-only",
                                    f"pid {waiters[runtime_id]} holds no inotify instance and is not registered "
                                    "with the seat host: it wakes on its timer only"))
    if hello is None and waiters:
        try:
            limit = LIMIT_FILE.read_text().strip()
        except OSError:
            limit = "unknown"
        findings.append(Finding(Severity.ADVISORY, "supervisor", "seat-host",
                                f"no seat host answers on {wire.socket_path(scope.directory)}: {len(own)} per-seat "
                                f"processes hold {sum(own.values())} inotify instances of their own "
                                f"(fs.inotify.max_user_instances {limit}); the next `st2 up` pass starts one"))
    return findings
