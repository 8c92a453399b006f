"""The launch gate every driver that gates its harness's version runs before the harness starts
(a package's ``VERSION_GATE``, :data:`st2.base.harnesses.CONTRACT`): one verdict, one record, one exit.

- ``exact``: the probed build must be one of the package's ``SUPPORTED_VERSIONS``;
  ``minor``: its ``MAJOR.MINOR`` must be one of them (a patch inside an admitted series costs no
  new evidence).
- A refusal publishes the ``versionGate`` stage of ``driver-diagnostic`` (``versionProbeFailed``
  when the probe found no version, ``unsupportedVersion`` otherwise; source ``versionProbe``),
  says one line on the PTY naming the found and the supported versions, and the wrapper exits
  :data:`EXIT_UNSUPPORTED` without starting the harness. An admitted build clears the stage.
"""

from __future__ import annotations

from st2.drivers.lifecycle import say

EXIT_UNSUPPORTED = 78
"""The exit status of a wrapper whose harness the gate (or a native API gate) refused."""
EXACT, MINOR = "exact", "minor"


def admits(policy: str, supported: tuple[str, ...], version: str | None) -> bool:
    """Whether a gate of ``policy`` (:data:`EXACT` / :data:`MINOR`) over ``supported`` admits the
    build ``version`` (None: the probe found none, never admitted)."""
    if version is None:
        return False
    if policy == MINOR:
        return ".".join(version.split(".")[:2]) in supported
    return version in supported


def adopt_predecessor_failure(publisher, seat_directory, driver: str, clock) -> None:
    """A predecessor's published failure of this driver stands until its own stage recovers
    here: a rejected credential until a turn reaches its ordinary end, a delivery failure until a
    prompt is accepted, a version refusal until this probe finds a supported build
    (:meth:`st2.records.driver_diagnostic.Publisher.adopt_held`)."""
    publisher.adopt_held()


def version_gate(seat_directory, driver: str, clock, version: str | None, problem: str | None,
                 supported: tuple[str, ...], product: str, prefix: str, adopt=adopt_predecessor_failure,
                 policy: str = EXACT):
    """Run the gate: ``(publisher, ok)``, the ``versionGate`` stage published (probe failed /
    not admitted) or cleared, and a refusal said on the PTY (``prefix``) naming both versions.
    ``problem`` says why the probe found no version; ``adopt`` takes over a predecessor's record
    before the verdict (None: start from no record)."""
    from st2.records import driver_diagnostic

    ok = admits(policy, supported, version)
    support = "supported" if ok else ("unsupported" if version else "unknown")
    publisher = driver_diagnostic.Publisher(seat_directory, driver, clock, producer_version=version, support=support)
    if adopt is not None:
        adopt(publisher, seat_directory, driver, clock)
    if version is None:
        publisher.publish("versionGate", "versionProbeFailed", "versionProbe")
        say(prefix, f"{problem}; refusing to drive it (supported: {', '.join(supported)})")
        return publisher, False
    if not ok:
        publisher.publish("versionGate", "unsupportedVersion", "versionProbe")
        say(prefix, f"{product} {version} is not a supported version (supported: {', '.join(supported)}); "
                    "refusing to drive it")
        return publisher, False
    publisher.clear("versionGate")
    return publisher, True


def gate_session(session):
    """A wrapper's launch gate, run the same way for every wrapper: ``(publisher, ok)`` under the
    policy and versions its driver's package declares, the version from ``session.probe_version()``
    (``(version, None)`` or ``(None, why not)``), the refusal naming ``session.product`` (or the
    harness) on the PTY as ``st2 <session.label>``. A driver that declares no gate: ``(None, True)``,
    nothing probed."""
    from st2.drivers import package

    driver = package(session.harness)
    if getattr(driver, "VERSION_GATE", None) is None:
        return None, True
    version, problem = session.probe_version()
    return version_gate(session.seat.directory, driver.HARNESS, session.clock, version, problem,
                        driver.SUPPORTED_VERSIONS, session.product or session.harness, f"st2 {session.label}",
                        policy=driver.VERSION_GATE)
