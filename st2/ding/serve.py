"""Boot one notifier for a target PTY task and run it until stopped or the session is gone.

The target ``<host>.<identity>`` names the seat (``agents/<host>/<identity>``), its tmux socket
(``<runtime scope>/s/<host>.<identity>``, the PTY backend's naming) and its ownership record.
SIGTERM and SIGINT only set a flag and wake the loop through a pipe; the loop acts.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from st2.catalog.layout import CatalogPaths, SeatPaths
from st2.base.clock import SYSTEM_CLOCK
from st2.ding.control_client import ControlPool
from st2.ding.harness import adapters_for, declared_harness
from st2.ding.notifier import Notifier, Settings, run
from st2.ding.ownership import store_for
from st2.ding.terminal import Terminal
from st2.drivers import delivery_owner
from st2.runtime.scope import RuntimeScope
from st2.seathost.watch_client import open_seat_watch


class TargetError(ValueError):
    pass


def split_target(runtime_id: str, host: str) -> tuple[str, str]:
    """``(host, identity)`` of a canonical agent runtime id ``<host>.<identity>``."""
    if runtime_id.startswith(f"{host}.") and len(runtime_id) > len(host) + 1:
        return host, runtime_id[len(host) + 1:]
    head, dot, tail = runtime_id.partition(".")
    if not dot or not head or not tail:
        raise TargetError(f"{runtime_id!r} is not a runtime id <host>.<identity>")
    return head, tail


@dataclass
class Prepared:
    """One seat's notifier, built and ready to run: what :func:`serve` and the DING service's
    seat threads (:mod:`st2.ding.service`) both start from."""

    notifier: Notifier
    seat: SeatPaths
    scope: RuntimeScope
    target: str
    socket_path: str
    harness: str | None

    def announce(self) -> None:
        self.notifier.log(f"watching {self.seat.inbox} for {self.target} on {self.socket_path} "
                          f"(harness {self.harness or 'shell'})")


def prepare(catalog: Path, host: str, runtime_id: str, *, socket: str | None = None,
            settings: Settings = Settings(), log: Callable[[str], None] | None = None,
            pool: ControlPool | None = None) -> Prepared:
    """Build the notifier of ``runtime_id``; raise :class:`TargetError` when there is no such
    seat. ``log`` receives the notifier's lines (default: ``st2 ding: …`` on stderr); ``pool``
    keeps the seat's control client (none: a client is spawned per command list)."""
    seat_host, identity = split_target(runtime_id, host)
    seat = CatalogPaths(Path(catalog)).seat(seat_host, identity)
    if not seat.directory.is_dir():
        raise TargetError(f"no seat {seat.directory}")
    target = f"{seat_host}.{identity}"
    scope = RuntimeScope(Path(os.path.abspath(catalog)), seat_host)
    socket_path = socket or str(scope.socket(target))
    harness, error = declared_harness(seat.declaration)
    owner = delivery_owner(seat.declaration)
    notifier = Notifier(seat, Terminal(socket_path, pool=pool), store_for(catalog, seat_host, target),
                        adapters_for(harness) if error is None and owner is None else (), SYSTEM_CLOCK, settings,
                        log=log, scope=scope.directory)
    if owner is not None:
        notifier.log(f"delivery belongs to the {owner} driver's native pump; DING holds and never types here")
    elif error is not None:
        notifier.log(f"{error}; no screen can be proven, so delivery holds")
    elif not notifier.adapters:
        notifier.log(f"no maintained screen grammar for harness {harness!r}; delivery holds")
    return Prepared(notifier, seat, scope, target, socket_path, harness)


def serve(catalog: Path, host: str, runtime_id: str, *, socket: str | None = None,
          settings: Settings = Settings()) -> int:
    prepared = prepare(catalog, host, runtime_id, socket=socket, settings=settings)
    notifier = prepared.notifier

    stopping = []
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)

    def on_stop(signum, frame):  # only records; the loop acts
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    prepared.announce()
    watch = open_seat_watch(prepared.seat.directory, prepared.scope.directory, notifier.log)
    return run(notifier, watch, prepared.socket_path, lambda: bool(stopping), read_end)
