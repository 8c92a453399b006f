"""The ``DELEGATION_KIT_*`` knobs the delegation hooks read (docs/kit.md §Knobs; names and
defaults kept exactly), through st2's one knob table and reader
(:mod:`st2.kit.knobs`), which the usage budget reads too: one knob file serves both sides, and a
malformed one is refused by both with the same findings.

Where a value comes from (:mod:`st2.kit.knobs` owns the whole statement): a scalar knob (stop log,
require tier, agent dir) is the environment under its own name (empty reads as unset), then the
knob file, then the default. An indexed knob (liveness command, the two rosters, tier classes,
tier binding) is its knob-file ``NAME[] = element`` lines, replacing the default whole, and has
no environment spelling.

The validator checks the whole table at once: a malformed knob is a broken machine, and a
broken machine gates nothing. The dispatch guard turns a fault into loud non-enforcement of
the roster rules (never a wedged dispatch); the turn-end hook declines loudly.

Every accessor takes either resolved :class:`Knobs` (a hook resolves once per firing) or an
environment mapping, which it resolves (raising :class:`KnobError`).

Standard library only: both hooks import this.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections import namedtuple

from st2.kit.knobs import TABLE, KnobError, Knobs, resolve, tier_binding_findings  # noqa: F401 - re-exported

STOP_LOG = "DELEGATION_KIT_STOP_LOG"
LIVENESS_CMD = "DELEGATION_KIT_LIVENESS_CMD"
READONLY_TYPES = "DELEGATION_KIT_READONLY_TYPES"
MUTATING_TYPES = "DELEGATION_KIT_MUTATING_TYPES"
REQUIRE_TIER = "DELEGATION_KIT_REQUIRE_TIER"
AGENT_DIR = "DELEGATION_KIT_AGENT_DIR"
TIER_CLASSES = "DELEGATION_KIT_TIER_CLASSES"
TIER_MODEL = "DELEGATION_KIT_TIER_MODEL"


# A namedtuple, not a dataclass: importing dataclasses pulls in inspect, a quarter of a bare
# interpreter start on this per-firing path (benchmarks/hot_paths.py).
class TierRow(namedtuple("TierRow", ("tier_class", "model", "effort"))):
    """One binding element: ``<class>=<model>[,<effort>]`` (effort None when absent)."""

    __slots__ = ()


def _resolved(source: Knobs | Mapping[str, str]) -> Knobs:
    return source if isinstance(source, Knobs) else resolve(source)


def load(environ: Mapping[str, str], cwd: str | None = None) -> tuple[Knobs | None, list[str]]:
    """Resolve once (the knob file's default location found from ``cwd``, default the working
    directory): ``(knobs, [])`` when sound, ``(None, findings)`` when malformed."""
    try:
        return resolve(environ, cwd), []
    except KnobError as error:
        return None, error.findings


def validate(environ: Mapping[str, str]) -> list[str]:
    """Every finding of the table validator over the whole configuration; empty when sound."""
    return load(environ)[1]


def indexed(source: Knobs | Mapping[str, str], name: str) -> list[str]:
    return list(_resolved(source).indexed(name))


def stop_log(source: Knobs | Mapping[str, str]) -> str:
    """``DELEGATION_KIT_STOP_LOG``, default ``${GATE_SDK_WORKFLOW_DIR:-.workflow}/subagent-stop-liveness.log``."""
    return _resolved(source).scalar(STOP_LOG)


def readonly_types(source: Knobs | Mapping[str, str]) -> list[str]:
    return indexed(source, READONLY_TYPES)


def mutating_types(source: Knobs | Mapping[str, str]) -> list[str]:
    return indexed(source, MUTATING_TYPES)


def require_tier(source: Knobs | Mapping[str, str]) -> bool:
    return _resolved(source).scalar(REQUIRE_TIER) == "on"


def agent_dir(source: Knobs | Mapping[str, str]) -> str:
    return _resolved(source).scalar(AGENT_DIR)


def tier_classes(source: Knobs | Mapping[str, str]) -> list[str]:
    return indexed(source, TIER_CLASSES)


def tier_model(source: Knobs | Mapping[str, str]) -> list[TierRow]:
    """The tier binding, ``<class>=<model>[,<effort>]`` per element, validated at resolution
    (docs/kit.md §Tier binding). Empty is off."""
    knobs = _resolved(source)
    _, rows = tier_binding_findings(knobs.indexed(TIER_CLASSES), knobs.indexed(TIER_MODEL))
    return [TierRow(*row) for row in rows]


def model_matches(value: str, model_id: str) -> bool:
    """§The tier binding's matching: ``value`` equals ``model_id`` or one of its ``-``-separated
    tokens after the first (the first is the namespace every id shares)."""
    return value == model_id or value in model_id.split("-")[1:]
