"""Native-driver diagnostics: the ``driver-diagnostic`` record (docs/records.md
§Driver diagnostic).

One JSON object, ``st2.driver-diagnostic.v1``: schema, driver, stage, reason, source,
[producerVersion], support, observedAt, recovery. Every word comes from a closed vocabulary,
each reason belongs to exactly one stage and accepts only the sources that can carry it. A
driver's :class:`Publisher` keeps one failure per stage and publishes the earliest failing one;
recovering a stage clears only that stage, and recovering the last removes the record.

Reading (:func:`read`, pure): nothing here ever reads healthy.

===============================================  ===========================================
evidence                                         status (reason)
===============================================  ===========================================
no record                                        ``absent``
bytes that do not decode as the record shape     ``indeterminate`` (``malformedRecord``)
another schema or recovery word                  ``indeterminate`` (``unsupportedSchema``)
an unknown or wrongly paired vocabulary word     ``indeterminate`` (``unknownVocabulary``)
``observedAt`` more than 60 s in the future      ``indeterminate`` (``futureSkew``)
otherwise                                        ``failure``, with ``evidenceAgeMs``
===============================================  ===========================================

The reader imports only the standard library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from st2.base import harnesses
from st2.catalog import layout
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import decoding

SCHEMA = "st2.driver-diagnostic.v1"
RECORD_NAME = layout.DRIVER_DIAGNOSTIC
STAGING_NAME = "driver-diagnostic-staging"
RECOVERY = "clearsOnStageRecovery"
DRIVER_DIAGNOSTIC_FUTURE_SKEW_MS = 60 * 1000
"""An ``observedAt`` further ahead than this is untrusted evidence."""

ABSENT, FAILURE, INDETERMINATE = "absent", "failure", "indeterminate"

RECOVERY_ABSENT = "publishFailureOrClearOnStageRecovery"
RECOVERY_INDETERMINATE = "replaceWithValidRecordOrClearOnStageRecovery"

DRIVERS: tuple[str, ...] = harnesses.names()
"""The ``driver`` words a record may carry: every driver's (:mod:`st2.base.harnesses`)."""
# Projection order, earliest boundary first: the four gates st2 owns, then the rejected
# credential (the cause), then the delivery and read-back symptoms it produces.
# ``resume`` is the relaunch's resume of the recorded harness session, refused. ``context`` comes
# last: a build the operator admitted outside the driver's measured set (``catalog.kdl``
# ``admit-unmeasured``) runs with its context producer withholding; last, it hides no other failure.
STAGES: tuple[str, ...] = ("versionGate", "apiGate", "sse", "seed", "resume", "providerAuth", "delivery",
                           "readBack", "context")
SOURCES: tuple[str, ...] = (
    "versionProbe", "openApiDocument", "eventStream", "statusSnapshot", "permissionSnapshot",
    "questionSnapshot", "promptTransport", "messageReadBack", "turnResult", "resumeAttempt",
)
SUPPORTS: tuple[str, ...] = ("supported", "unsupported", "unknown")

# reason -> (stage, sources it accepts)
REASONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "versionProbeFailed": ("versionGate", ("versionProbe",)),
    "unsupportedVersion": ("versionGate", ("versionProbe",)),
    "apiUnavailable": ("apiGate", ("openApiDocument",)),
    "incompatibleApi": ("apiGate", ("openApiDocument",)),
    "sseConnectFailed": ("sse", ("eventStream",)),
    "sseDisconnected": ("sse", ("eventStream",)),
    "unknownEvent": ("sse", ("eventStream",)),
    "statusUnavailable": ("seed", ("statusSnapshot",)),
    "malformedStatus": ("seed", ("statusSnapshot",)),
    "unknownStatus": ("seed", ("statusSnapshot",)),
    "permissionUnavailable": ("seed", ("permissionSnapshot",)),
    "malformedPermissions": ("seed", ("permissionSnapshot",)),
    "questionUnavailable": ("seed", ("questionSnapshot",)),
    "malformedQuestions": ("seed", ("questionSnapshot",)),
    "missingAskId": ("seed", ("permissionSnapshot", "questionSnapshot")),
    "resumeRefused": ("resume", ("resumeAttempt",)),
    "providerAuthRejected": ("providerAuth", ("turnResult",)),
    "deliveryUnavailable": ("delivery", ("promptTransport",)),
    "deliveryRejected": ("delivery", ("promptTransport",)),
    "readBackUnavailable": ("readBack", ("messageReadBack",)),
    "notDurable": ("readBack", ("messageReadBack",)),
    "unmeasuredBuild": ("context", ("versionProbe",)),
}

INVALID_MALFORMED = "malformedRecord"
INVALID_UNSUPPORTED_SCHEMA = "unsupportedSchema"
INVALID_UNKNOWN_VOCABULARY = "unknownVocabulary"
INVALID_FUTURE_SKEW = "futureSkew"


def valid_pairing(stage: str, reason: str, source: str) -> bool:
    """Whether ``reason`` belongs to ``stage`` and can be carried by ``source``."""
    entry = REASONS.get(reason)
    return entry is not None and entry[0] == stage and source in entry[1]


@dataclass(frozen=True)
class Diagnostic:
    """The projection. ``status`` is absent, failure or indeterminate; for indeterminate,
    ``reason`` is why the record could not be trusted."""

    status: str
    driver: str | None = None
    stage: str | None = None
    reason: str | None = None
    source: str | None = None
    producer_version: str | None = None
    support: str = "unknown"
    observed_at: int | None = None
    evidence_age_ms: int | None = None

    @property
    def failed(self) -> bool:
        """Whether a driver published a failure (the Doctor advisory's rule)."""
        return self.status == FAILURE

    @property
    def recovery(self) -> str:
        if self.status == FAILURE:
            return RECOVERY
        if self.status == INDETERMINATE:
            return RECOVERY_INDETERMINATE
        return RECOVERY_ABSENT


ABSENT_DIAGNOSTIC = Diagnostic(ABSENT)


def _indeterminate(reason: str) -> Diagnostic:
    return Diagnostic(INDETERMINATE, reason=reason)


def read(data: bytes | None, now_ms: int) -> Diagnostic:
    """Project the record at ``now_ms`` (table in the module docstring). Never raises."""
    if data is None:
        return ABSENT_DIAGNOSTIC
    try:
        record = decoding.load_object(data)
        schema = decoding.string(record, "schema")
        words = {name: decoding.string(record, name) for name in ("driver", "stage", "reason", "source", "support")}
        producer_version = decoding.optional_string(record, "producerVersion")
        observed_at = decoding.unsigned(record, "observedAt")
        recovery = decoding.string(record, "recovery")
    except Exception:  # never raise, whatever the bytes
        return _indeterminate(INVALID_MALFORMED)
    if schema != SCHEMA or recovery != RECOVERY:
        return _indeterminate(INVALID_UNSUPPORTED_SCHEMA)
    if (
        words["driver"] not in DRIVERS
        or words["stage"] not in STAGES
        or words["source"] not in SOURCES
        or words["support"] not in SUPPORTS
        or not valid_pairing(words["stage"], words["reason"], words["source"])
    ):
        return _indeterminate(INVALID_UNKNOWN_VOCABULARY)
    if observed_at > now_ms + DRIVER_DIAGNOSTIC_FUTURE_SKEW_MS:
        return _indeterminate(INVALID_FUTURE_SKEW)
    return Diagnostic(
        FAILURE,
        driver=words["driver"],
        stage=words["stage"],
        reason=words["reason"],
        source=words["source"],
        producer_version=producer_version,
        support=words["support"],
        observed_at=observed_at,
        evidence_age_ms=max(0, now_ms - observed_at),
    )


def read_file(path: Path, now_ms: int) -> Diagnostic:
    """:func:`read` applied to a file; a file that exists but cannot be read is indeterminate."""
    try:
        data = read_bounded(path, RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return ABSENT_DIAGNOSTIC
    except OSError:
        return _indeterminate(INVALID_MALFORMED)
    return read(data, now_ms)


def to_wire(diagnostic: Diagnostic) -> dict[str, Any]:
    """The roster's ``driverDiagnostic`` object: the same field set in every state, so absence
    and unreadable evidence stay visible rather than looking healthy."""
    return {
        "status": diagnostic.status,
        "driver": diagnostic.driver,
        "stage": diagnostic.stage,
        "reason": diagnostic.reason,
        "source": diagnostic.source,
        "producerVersion": diagnostic.producer_version,
        "support": diagnostic.support,
        "observedAt": diagnostic.observed_at,
        "evidenceAgeMs": diagnostic.evidence_age_ms,
        "recovery": diagnostic.recovery,
    }


REPAIR_TEXT_BY_STAGE: dict[str, str] = {
    "versionGate": "install a supported producer version and restart the seat",
    "apiGate": "restore the producer API contract, then restart the seat",
    "sse": "restore the producer event stream; recovery clears this advisory",
    "seed": "restore readable producer state snapshots; recovery clears this advisory",
    "resume": "the recorded harness session could not be resumed and the seat started fresh once; "
              "st2 doctor names the lost session id, which st2 never retries",
    "delivery": "restore the native prompt transport; the queued message remains retryable",
    "readBack": "restore message read-back; st2 reconciles without duplicating the prompt",
    "context": "run a measured build, or measure this one in the lab and admit it in the driver's gate; "
               "until then no context reading is published",
}
REPAIR_TEXT_BY_INVALID: dict[str, str] = {
    INVALID_MALFORMED: "replace the malformed driver-diagnostic record by restarting the seat",
    INVALID_UNSUPPORTED_SCHEMA: "upgrade this st2 or restart the seat with a compatible diagnostic writer",
    INVALID_UNKNOWN_VOCABULARY: "upgrade this st2; unknown diagnostic vocabulary is not healthy evidence",
    INVALID_FUTURE_SKEW: "correct the writer's clock or restart the seat after the clock recovers",
}


# A rejected provider credential gets no text: no credential knowledge or remedy text enters st2
# (docs/records.md §Driver diagnostic); its stage and reason say it.
NO_REMEDY_STAGES = ("providerAuth",)


def repair_text(diagnostic: Diagnostic) -> str | None:
    """Driver-agnostic operator guidance for Doctor; None for a stage st2 must not advise on
    (:data:`NO_REMEDY_STAGES`)."""
    if diagnostic.status not in (ABSENT, INDETERMINATE) and diagnostic.stage in NO_REMEDY_STAGES:
        return None
    if diagnostic.status == ABSENT:
        return "no diagnostic evidence exists; wait for the native driver to publish a boundary result or restart the seat"
    if diagnostic.status == INDETERMINATE:
        return REPAIR_TEXT_BY_INVALID.get(diagnostic.reason or "", REPAIR_TEXT_BY_INVALID[INVALID_MALFORMED])
    return REPAIR_TEXT_BY_STAGE.get(diagnostic.stage or "", "upgrade this st2; an unknown stage is not healthy evidence")


# --- telemetry ----------------------------------------------------------------------------------

PUBLISHED, RECOVERED = "published", "recovered"
OUTCOMES = (PUBLISHED, RECOVERED)
TELEMETRY_AXES = ("driver", "stage", "reason", "source", "support", "outcome")
COUNTS: dict[tuple[str, ...], int] = {}
"""This process's count of each failure published and recovered, keyed by :func:`telemetry_labels`
in :data:`TELEMETRY_AXES` order: what a metrics registry exports. Nothing else enters a label —
never a version, an identity, a prompt, a message or a path."""


def telemetry_labels(record: dict[str, Any], outcome: str) -> dict[str, str]:
    """The bounded labels of one publication or recovery: each a word of a closed vocabulary."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}")
    labels = {axis: record[axis] for axis in TELEMETRY_AXES[:-1]}
    labels["outcome"] = outcome
    return labels


def count(record: dict[str, Any], outcome: str) -> None:
    key = tuple(telemetry_labels(record, outcome).values())
    COUNTS[key] = COUNTS.get(key, 0) + 1


# --- writer -------------------------------------------------------------------------------------


class Publisher:
    """One native driver session's stage set. Keeps one failure per stage, publishes the earliest
    failing stage, and removes the record once every stage has recovered. Persistence failures
    are logged and never change the driver's behaviour."""

    def __init__(self, seat_dir: Path, driver: str, clock, producer_version: str | None = None,
                 support: str = "unknown") -> None:
        if driver not in DRIVERS or support not in SUPPORTS:
            raise ValueError(f"unknown driver {driver!r} or support {support!r}")
        self.seat_dir = Path(seat_dir)
        self.driver = driver
        self.clock = clock
        self.producer_version = producer_version
        self.support = support
        self.failures: dict[str, dict[str, Any]] = {}
        path = self.seat_dir / RECORD_NAME
        # A successor removes a predecessor's unreadable snapshot rather than leaving it to read
        # indeterminate forever.
        if read_file(path, clock.wall_ms()).reason == INVALID_MALFORMED:
            path.unlink(missing_ok=True)

    def publish(self, stage: str, reason: str, source: str) -> bool:
        """Record a failure on ``stage``. Returns False (writing nothing) for a wrongly paired
        word, or when the same failure is already held."""
        if stage not in STAGES or not valid_pairing(stage, reason, source):
            return False
        held = self.failures.get(stage)
        if held is not None and held["reason"] == reason and held["source"] == source:
            return False
        record: dict[str, Any] = {"schema": SCHEMA, "driver": self.driver, "stage": stage, "reason": reason,
                                  "source": source}
        if self.producer_version is not None:
            record["producerVersion"] = self.producer_version
        record.update(support=self.support, observedAt=self.clock.wall_ms(), recovery=RECOVERY)
        self.failures[stage] = record
        self._persist()
        count(record, PUBLISHED)
        return True

    def clear(self, stage: str) -> bool:
        """Recover ``stage``: clear only its failure and reveal the next outstanding one. Return
        whether a held failure was cleared."""
        held = self.failures.pop(stage, None)
        if held is None:
            return False
        self._persist()
        count(held, RECOVERED)
        return True

    def adopt_held(self) -> None:
        """Hold the failure the record on disk publishes when this driver wrote it, so that it
        stands until its own stage recovers here: a predecessor's failure across a relaunch, or the
        last hook's for a driver whose every event is a fresh process (Claude's hooks)."""
        path = self.seat_dir / RECORD_NAME
        found = read_file(path, self.clock.wall_ms())
        if found.status != FAILURE or found.driver != self.driver:
            return
        try:
            self.failures[found.stage] = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return

    def _persist(self) -> None:
        import logging

        from st2.records.placement import publish_record

        path = self.seat_dir / RECORD_NAME
        try:
            earliest = next((self.failures[stage] for stage in STAGES if stage in self.failures), None)
            if earliest is None:
                path.unlink(missing_ok=True)
            else:
                data = json.dumps(earliest, separators=(",", ":")).encode() + b"\n"
                publish_record(self.seat_dir, RECORD_NAME, data, STAGING_NAME)
        except OSError as error:
            logging.getLogger("st2.records").warning("st2 driver-diagnostic: persisting %s failed: %s", path, error)
