"""``st2 driver omp-session --identity I --runtime-id R -- omp …``: the omp wrapper. The channel
session (:class:`st2.drivers.channel.session.ChannelSession`) with omp's extension, behind the launch
gate every gating driver runs (:mod:`st2.drivers.version_gate`, policy ``minor`` over
:data:`st2.drivers.omp.SUPPORTED_VERSIONS`): ``<omp> --version`` must name a build of an admitted
minor series, else the ``versionGate`` driver-diagnostic, one line on the terminal, and exit
:data:`~st2.drivers.version_gate.EXIT_UNSUPPORTED` before omp starts.
"""

from __future__ import annotations

import re
from pathlib import Path

from st2.drivers.channel.session import ChannelSession
from st2.drivers.channel.session import run_session as run_channel_session
from st2.drivers.omp import HARNESS

VERSION_PROBE_TIMEOUT_SECONDS = 30.0
_VERSION = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?![\d.])")


def parse_version(text: str) -> str | None:
    """The first ``MAJOR.MINOR.PATCH`` in ``omp --version``'s output (``omp/18.2.3``)."""
    match = _VERSION.search(text)
    return ".".join(match.groups()) if match else None


def probe_version(argv0: str, environment: dict[str, str]) -> tuple[str | None, str | None]:
    """``(version, None)`` from ``<argv0> --version`` (stdout or stderr), or ``(None, why not)``,
    asked once per build (:mod:`st2.drivers.version_probe`)."""
    from st2.drivers.version_probe import probe

    return probe(argv0, environment, parse_version, "omp version", timeout=VERSION_PROBE_TIMEOUT_SECONDS,
                 stderr=True, exit_zero=False)


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

    def probe_version(self) -> tuple[str | None, str | None]:
        return probe_version(self.argv[0], dict(self.environment))


def run_session(catalog: Path, identity: str, runtime_id: str | None, argv: list[str], clock=None) -> int:
    """The ``omp-session`` verb's core (:func:`st2.drivers.child_session.run_child_session`)."""
    return run_channel_session(catalog, identity, runtime_id, argv, clock, OmpSession)
