"""``st2 driver omp-session --identity I --runtime-id R -- omp …``: the omp wrapper. The pi
wrapper's channel session (:class:`st2.drivers.pi.session.ChannelSession`) with omp's extension,
behind the launch gate: ``<omp> --version`` must name a build of an admitted minor series
(:data:`st2.drivers.omp.SUPPORTED_OMP_MINORS`), else the seat is refused before omp starts — one
line on the terminal, the terminal record ``ended`` / ``exit 2``, exit status 2.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from st2.drivers.omp import HARNESS, SUPPORTED_OMP_MINORS
from st2.drivers.pi.session import ChannelSession
from st2.drivers.pi.session import run_session as run_channel_session

VERSION_PROBE_TIMEOUT_SECONDS = 30.0
_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?![\d.])")
GATE_REFUSED = 2


class GateRefused(Exception):
    """The omp build is outside every admitted minor series (or says no version)."""


def parse_version(text: str) -> str | None:
    """The first ``MAJOR.MINOR.PATCH`` in ``omp --version``'s output (``omp/18.2.3``)."""
    match = _VERSION.search(text)
    return ".".join(match.groups()) if match else None


def admitted(version: str | None) -> bool:
    """Whether ``version`` belongs to an admitted minor series."""
    return version is not None and ".".join(version.split(".")[:2]) in SUPPORTED_OMP_MINORS


def probe_version(argv0: str, environment: dict[str, str]) -> str | None:
    try:
        result = subprocess.run([argv0, "--version"], capture_output=True, text=True, env=environment,
                                timeout=VERSION_PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(result.stdout + "\n" + result.stderr)


class OmpSession(ChannelSession):
    harness = HARNESS
    label = "omp-session"
    extension = "omp-channel.ts"

    def resume_argv(self, session_id: str) -> list[str]:
        """``omp … --resume=<session file>`` (18.2.3 opens a value holding a ``/`` as a path)."""
        return [*self.argv, f"--resume={session_id}"]

    def sessions_directories(self) -> tuple[str, ...]:
        import os

        from st2.drivers.session_ids import omp_sessions_directories

        return omp_sessions_directories(self.environment, os.getcwd())

    def start(self) -> None:
        version = probe_version(self.argv[0], dict(self.environment))
        if not admitted(version):
            raise GateRefused(f"omp {version or '(no version)'} is outside the admitted minor series "
                              f"({', '.join(SUPPORTED_OMP_MINORS)}); refusing to launch")
        super().start()

    def run(self) -> int:
        try:
            return super().run()
        except GateRefused as refusal:
            self.say(str(refusal))
            self.records.claim()  # the seat's record says this session ended, refused, not what ran before
            self.records.ended(GATE_REFUSED)
            return GATE_REFUSED


def run_session(catalog: Path, identity: str, runtime_id: str | None, argv: list[str], clock=None) -> int:
    """The ``omp-session`` verb's core (see :func:`st2.drivers.pi.session.run_session`)."""
    return run_channel_session(catalog, identity, runtime_id, argv, clock, OmpSession)
