"""Doctor's wake-up check: every live DING notifier wakes on inotify — registered with the
scope's seat host (one shared instance, :mod:`st2.seathost`) or holding an instance of its own —
and never silently on its timer alone. (A native wrapper's pump registers the same way and says
in its PTY when it cannot; its pane process is not told apart from other PTY tasks here.)

``fs.inotify.max_user_instances`` (128 by default) caps instances per user, so a fleet without
its seat host runs out past ~128 seats; the process that cannot get one says so in its log, and
this check names it: a failure per process that has neither (``wake-timer-only``), a failure when
the seat host itself has no instance, and an advisory when no seat host answers while per-seat
processes run (each then holds its own instance; the count in use is given against the limit).

A DING task that is a stub (:mod:`st2.ding.stub`) wakes through the DING service's thread for its
seat, which registers with the seat host: a failure when that thread has no shared watch, and an
advisory (``ding-serves-itself``) for a stub forked by the seat host that is not served by the
service (it serves its seat itself, at a whole notifier's memory, until it is restarted), naming
why from the stub's own log (the service gone, SIGKILLed by the stubs' heartbeat, or none to be
had). A DING service that holds its lock but answers no ``hello`` within 2 s (SIGSTOPped, wedged)
is a failure (``ding-service-unresponsive``), and so is each seat whose lock it holds meanwhile:
those seats get no notice until their stubs' heartbeat kills it. Which process serves a seat is
then told by who holds the seat's lock (:func:`st2.fs.lock.holders`), never guessed.
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.doctor.findings import Finding, Severity
from st2.runtime import launch_record
from st2.runtime.launch_record import MalformedRecord
from st2.runtime.scope import RuntimeScope

LIMIT_FILE = Path("/proc/sys/fs/inotify/max_user_instances")
LOG_TAIL_BYTES = 64 * 1024


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


def _waiters(scope: RuntimeScope) -> dict[str, launch_record.LaunchRecord]:
    """runtime id -> launch record of every live DING companion."""
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
            found[runtime_id] = record
    return found


def _served(scope: RuntimeScope) -> tuple[dict[int, dict], int | None]:
    """(stub pid -> its row in the scope's DING service (:mod:`st2.ding.service`), None) when the
    service answers; ({}, its pid) when a process holds the service's lock but no ``hello``
    answer comes within 2 s; ({}, None) when there is none."""
    from st2.ding import service_wire
    from st2.fs.lock import holders
    from st2.seathost import wire

    try:
        hello = wire.request(service_wire.socket_path(scope.directory), {"op": "hello"}, timeout=2.0)
    except wire.WireTimeout:
        holder = holders(service_wire.lock_path(scope.directory))
        return {}, min(holder) if holder else None
    except OSError:
        return {}, None
    rows = hello.get("serving") if hello.get("protocol") == service_wire.PROTOCOL else None
    return {row["stub"]: row for row in rows or () if isinstance(row, dict) and isinstance(row.get("stub"), int)}, None


def _state(pid: int) -> str:
    from st2.process import proc_stat

    try:
        stat = proc_stat.read(pid)
    except proc_stat.ProcUnavailable:
        return "state unknown"
    if stat is None:
        return "gone"
    return "stopped" if stat.state in "Tt" else f"state {stat.state}"


def _why_serving_itself(record: launch_record.LaunchRecord, target: str) -> str:
    """Why the stub's log says it serves ``target`` itself (its last such line, printable and
    bounded); a plain word when the log cannot tell."""
    from st2.seathost import wire

    marker = f"; SERVING {target} MYSELF"
    try:
        with open(record.log or "", "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - LOG_TAIL_BYTES))
            tail = handle.read(LOG_TAIL_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return "its log cannot be read"
    for line in reversed(tail.splitlines()):
        if marker in line:
            return wire.printable(line.split(marker, 1)[0].removeprefix("st2 ding: "))
    return "its log does not say why"


def _forked_stub(pid: int) -> bool:
    """``pid`` was forked by the seat host (it carries the host's command line), so it is a DING
    stub meant to be served by the DING service."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"seat-host" in words


def wake_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.ding import service_wire
    from st2.fs.lock import holders
    from st2.seathost import wire

    scope = RuntimeScope(catalog_root, host)
    if not scope.exists():
        return []
    records = _waiters(scope)
    waiters = {runtime_id: record.pid for runtime_id, record in records.items()}
    try:
        hello = wire.request(wire.socket_path(scope.directory), {"op": "hello"}, timeout=2.0)
    except OSError:
        hello = None
    registrants = set(hello.get("registrants") or ()) if hello else set()
    findings = []
    served, unresponsive = _served(scope)
    held: set[int] = set()
    if unresponsive is not None:
        findings.append(Finding(Severity.FAILURE, "supervisor", "ding-service-unresponsive",
                                f"the DING service (pid {unresponsive}, {_state(unresponsive)}) holds its lock but "
                                f"answers nothing on {service_wire.socket_path(scope.directory)} within 2 s"))
    for runtime_id, pid in sorted(waiters.items()):
        row = served.get(pid)
        target = runtime_id.removesuffix(".ding")
        seat_holders = holders(service_wire.seat_lock_file(scope.directory, target)) if unresponsive else set()
        if row is not None:
            if row.get("watch") is not True:
                findings.append(Finding(Severity.FAILURE, runtime_id, "wake-timer-only",
                                        f"the DING service serves pid {pid}'s seat without a shared watch: "
                                        "it wakes on its timer only"))
        elif unresponsive is not None and unresponsive in seat_holders:
            held.add(pid)   # its seat waits on the service's thread, not on a watch of its own
            findings.append(Finding(Severity.FAILURE, runtime_id, "ding-service-unresponsive",
                                    f"the unresponsive DING service (pid {unresponsive}) holds this seat's lock: no "
                                    f"notice reaches it until pid {pid}'s heartbeat (a ping unanswered "
                                    f"{service_wire.HEARTBEAT_BOUND_SECONDS:g} s) kills the service"))
        elif _forked_stub(pid) and (unresponsive is None or pid in seat_holders):
            findings.append(Finding(Severity.ADVISORY, runtime_id, "ding-serves-itself",
                                    f"pid {pid} serves its seat itself, not through the DING service "
                                    f"({_why_serving_itself(records[runtime_id], target)}): it costs a whole "
                                    "notifier's memory until it is restarted"))
    waiters = {rid: pid for rid, pid in waiters.items() if pid not in served and pid not in held}
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
