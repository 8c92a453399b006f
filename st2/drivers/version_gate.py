"""The launch gate every driver that gates its harness's version runs before the harness starts
(a package's ``VERSION_GATE``, :data:`st2.base.harnesses.CONTRACT`): one verdict, one record, one exit.

- ``exact``: the probed build must be one of the package's ``SUPPORTED_VERSIONS``;
  ``minor``: its ``MAJOR.MINOR`` must be one of them (a patch inside an admitted series costs no
  new evidence).
- A refusal publishes the ``versionGate`` stage of ``driver-diagnostic`` (``versionProbeFailed``
  when the probe found no version, ``unsupportedVersion`` otherwise; source ``versionProbe``),
  says one line on the PTY naming the found and the supported versions, and the wrapper exits
  :data:`EXIT_UNSUPPORTED` without starting the harness. An admitted build clears the stage.
- A build the gate refuses but the catalog's ``admit-unmeasured`` names (docs/drivers.md
  §Measured builds) launches unmeasured: the ``context`` stage is published (``unmeasuredBuild``,
  Doctor's ``context-withheld``), one line on the PTY says so, and the session's context producer
  withholds (``session.context_withheld``: its harness-context writer publishes nothing). A
  measured build clears that stage too.
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
                 policy: str = EXACT, unmeasured: tuple[str, ...] = ()):
    """Run the gate: ``(publisher, ok)``, the ``versionGate`` stage published (probe failed /
    not admitted) or cleared, and a refusal said on the PTY (``prefix``) naming both versions.
    ``problem`` says why the probe found no version; ``adopt`` takes over a predecessor's record
    before the verdict (None: start from no record). A build in ``unmeasured`` (the operator's
    ``admit-unmeasured``) that the gate refuses is admitted with the ``context`` stage published
    (the caller's producer withholds)."""
    from st2.records import driver_diagnostic

    ok = admits(policy, supported, version)
    if not ok and version is not None and version in unmeasured:
        publisher = driver_diagnostic.Publisher(seat_directory, driver, clock, producer_version=version,
                                                support="unsupported")
        if adopt is not None:
            adopt(publisher, seat_directory, driver, clock)
        publisher.clear("versionGate")
        publisher.publish("context", "unmeasuredBuild", "versionProbe")
        say(prefix, f"{product} {version} is not a measured build (measured: {', '.join(supported)}); "
                    "admitted by catalog.kdl admit-unmeasured, so no context reading is published")
        return publisher, True
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
    publisher.clear("context")
    return publisher, True


def gate_session(session):
    """A wrapper's launch gate, run the same way for every wrapper: ``(publisher, ok)`` under the
    policy and versions its driver's package declares, the version from ``session.probe_version()``
    (``(version, None)`` or ``(None, why not)``), the refusal naming ``session.product`` (or the
    harness) on the PTY as ``st2 <session.label>``. A driver that declares no gate: ``(None, True)``,
    nothing probed. A build launched through the catalog's ``admit-unmeasured`` (``session.catalog``)
    sets ``session.context_withheld``."""
    from st2.drivers import package

    driver = package(session.harness)
    if getattr(driver, "VERSION_GATE", None) is None:
        return None, True
    version, problem = session.probe_version()
    unmeasured = admitted_unmeasured(getattr(session, "catalog", None), driver.HARNESS)
    publisher, ok = version_gate(session.seat.directory, driver.HARNESS, session.clock, version, problem,
                                 driver.SUPPORTED_VERSIONS, session.product or session.harness,
                                 f"st2 {session.label}", policy=driver.VERSION_GATE, unmeasured=unmeasured)
    session.context_withheld = ok and not admits(driver.VERSION_GATE, driver.SUPPORTED_VERSIONS, version)
    return publisher, ok


def admitted_unmeasured(catalog, harness: str) -> tuple[str, ...]:
    """The builds of ``harness`` the catalog's ``admit-unmeasured`` names (none without a catalog or
    with a malformed ``catalog.kdl``: an admission is never guessed)."""
    if catalog is None:
        return ()
    from st2.declarations.catalog import load_catalog_declaration

    declaration, _ = load_catalog_declaration(catalog)
    return (declaration.unmeasured or {}).get(harness, ())
