"""What the Codex wrapper publishes on the driver-diagnostic boundaries: the version probe behind
the ``versionGate`` (``<codex> --version`` → ``codex-cli X``) and the typed turn error behind
``providerAuth``."""

from __future__ import annotations

import re

VERSION_PROBE_SECONDS = 20.0
_VERSION = re.compile(r"codex-cli\s+([0-9][0-9A-Za-z.+-]*)")


def probe_version(executable: str, environment: dict) -> tuple[str | None, str | None]:
    """``(version, problem)`` from ``<codex> --version``, asked once per build
    (:mod:`st2.drivers.version_probe`)."""
    from st2.drivers.version_probe import probe

    def parse(text: str) -> str | None:
        match = _VERSION.search(text)
        return match.group(1) if match else None

    return probe(executable, environment, parse, "codex-cli version", timeout=VERSION_PROBE_SECONDS)


def credential_rejected(info) -> bool:
    """Whether a turn's typed ``codexErrorInfo`` says the provider rejected the credential:
    ``unauthorized``, or — what 0.171.0 actually yields for an HTTP 401 in the lab —
    ``{"httpConnectionFailed": {"httpStatusCode": 401}}`` (or the stream form). Never prose, and
    never a quota or retry class: a 429 arrives as ``responseTooManyFailedAttempts`` (429),
    ``usageLimitExceeded`` or ``rateLimitExceeded``, none of which is auth."""
    if info == "unauthorized":
        return True
    if isinstance(info, dict) and len(info) == 1:
        (kind, detail), = info.items()
        return (kind in ("httpConnectionFailed", "responseStreamConnectionFailed") and isinstance(detail, dict)
                and detail.get("httpStatusCode") == 401)
    return False
