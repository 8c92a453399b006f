"""What every lab test needs: a pinned harness that is really installed, or a clear verdict.

A harness that is not installed is installed here (under a file lock, so parallel workers
share one npm run). When npm itself is missing the lab tests are skipped with a loud reason;
when npm is present but cannot install the pinned version they FAIL with npm's output.
"""

from __future__ import annotations

import pytest

from harnesses import Harness, InstallFailed, install, load_manifest, npm_available

MANIFEST = load_manifest()


def measured_builds(name: str) -> tuple[str, ...]:
    """The measured builds of harness ``name`` beside its pin (harnesses.toml ``measured``): the
    parameters of a test that pins one build's numbers (``require_harness(name, version)``)."""
    return MANIFEST[name].measured


def require_harness(name: str, version: str | None = None) -> Harness:
    """Return the installed harness ``name`` at its pin (or at the measured build ``version``);
    skip loudly without npm, fail on npm errors."""
    harness = MANIFEST[name] if version is None else MANIFEST[name].build(version)
    if not npm_available():
        pytest.skip(f"LAB TIER NOT RUN: npm is not on PATH, so {harness.package}@{harness.version} "
                    "cannot be installed; install Node.js/npm to run the lab tier")
    try:
        install(harness, retry_recorded_failure=False)
    except InstallFailed as failure:
        pytest.fail(f"lab harness {name} is not installed:\n{failure}", pytrace=False)
    return harness
