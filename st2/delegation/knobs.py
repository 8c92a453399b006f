"""The ``DELEGATION_KIT_*`` knobs the delegation hooks read, their defaults, and the table
validator (seed 002 §Layout and configuration; names and defaults kept exactly).

Transport: the process environment, which the harness's settings ``env`` block sets and hooks
re-read per firing. A scalar knob is the variable's value; an empty value reads as unset, so
the default applies. An *indexed* knob (an argv or a roster) is one element per line of the
variable's value, a trailing newline ignored; an empty element in between is malformed.

This departs from the kit, where an indexed knob has no environment spelling and lives only in
the knob file (the usage knobs, :mod:`st2.usage.knobs`, keep that): the kit's ground is a
freshness gate over the tier binding that a per-session override would red, and st2 ships no
such gate. The two tables are not yet one: the usage knob file refuses these names, so these
knobs are read from the environment alone until the tables are unified.

The validator checks the whole table at once: a malformed knob is a broken machine, and a
broken machine gates nothing. The dispatch guard turns a fault into loud non-enforcement of
the roster rules (never a wedged dispatch); the turn-end hook declines loudly.

Standard library only: both hooks import this.
"""

from __future__ import annotations

from st2.delegation.values import Value

TYPE_CHECKING = False  # typing costs the hot path ~8 ms to import; annotations stay unevaluated
if TYPE_CHECKING:
    from collections.abc import Mapping

STOP_LOG = "DELEGATION_KIT_STOP_LOG"
LIVENESS_CMD = "DELEGATION_KIT_LIVENESS_CMD"
READONLY_TYPES = "DELEGATION_KIT_READONLY_TYPES"
MUTATING_TYPES = "DELEGATION_KIT_MUTATING_TYPES"
REQUIRE_TIER = "DELEGATION_KIT_REQUIRE_TIER"
AGENT_DIR = "DELEGATION_KIT_AGENT_DIR"
TIER_CLASSES = "DELEGATION_KIT_TIER_CLASSES"
TIER_MODEL = "DELEGATION_KIT_TIER_MODEL"

WORKFLOW_DIR = "GATE_SDK_WORKFLOW_DIR"
STOP_LOG_NAME = "subagent-stop-liveness.log"
AGENT_DIR_DEFAULT = ".claude/agents"
TIER_CLASSES_DEFAULT = ("judgment", "routing", "mechanical")
REQUIRE_TIER_VALUES = ("on", "off")

_CLASS_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_EFFORT_CHARACTERS = _LETTERS | frozenset("0123456789._-")


class KnobError(ValueError):
    """A knob whose value the table validator refuses."""


class TierRow(Value):
    """One binding element: ``<class>=<model>[,<effort>]``."""

    __slots__ = ("tier_class", "model", "effort")


def scalar(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name, "")
    return value if value else default


def indexed(environ: Mapping[str, str], name: str, default: tuple[str, ...] = ()) -> list[str]:
    """An indexed knob's elements: one per line; unset or empty is the default. Raise
    :class:`KnobError` on an empty element between others."""
    value = environ.get(name, "")
    if not value:
        return list(default)
    elements = value.split("\n")
    if elements[-1] == "":
        elements.pop()
    for position, element in enumerate(elements):
        if element.strip() == "":
            raise KnobError(f"{name}: element {position + 1} is empty (one element per line)")
    return elements


def stop_log(environ: Mapping[str, str]) -> str:
    """``DELEGATION_KIT_STOP_LOG``, default ``${GATE_SDK_WORKFLOW_DIR:-.workflow}/subagent-stop-liveness.log``."""
    workflow = environ.get(WORKFLOW_DIR) or ".workflow"
    return scalar(environ, STOP_LOG, f"{workflow}/{STOP_LOG_NAME}")


def _roster(environ: Mapping[str, str], name: str) -> list[str]:
    elements = indexed(environ, name)
    for element in elements:
        if any(character.isspace() for character in element):
            raise KnobError(f"{name}: {element!r} carries whitespace; an agent-type name is one token")
    return elements


def readonly_types(environ: Mapping[str, str]) -> list[str]:
    return _roster(environ, READONLY_TYPES)


def mutating_types(environ: Mapping[str, str]) -> list[str]:
    return _roster(environ, MUTATING_TYPES)


def require_tier(environ: Mapping[str, str]) -> bool:
    value = scalar(environ, REQUIRE_TIER, "off")
    if value not in REQUIRE_TIER_VALUES:
        raise KnobError(f"{REQUIRE_TIER}: {value!r} is neither on nor off")
    return value == "on"


def agent_dir(environ: Mapping[str, str]) -> str:
    return scalar(environ, AGENT_DIR, AGENT_DIR_DEFAULT)


def tier_classes(environ: Mapping[str, str]) -> list[str]:
    classes = indexed(environ, TIER_CLASSES, TIER_CLASSES_DEFAULT)
    seen: set[str] = set()
    for name in classes:
        if not name or not set(name) <= _CLASS_CHARACTERS:
            raise KnobError(f"{TIER_CLASSES}: {name!r} is not a class name ([a-z0-9-])")
        if name in seen:
            raise KnobError(f"{TIER_CLASSES}: {name!r} is given twice")
        seen.add(name)
    return classes


def _leading_token(model: str) -> str:
    return model.split("-", 1)[0]


def tier_model(environ: Mapping[str, str]) -> list[TierRow]:
    """The tier binding, ``<class>=<model>[,<effort>]`` per element, validated (seed 002
    §Layout and configuration, DELEGATION_KIT_TIER_MODEL). Empty is off."""
    classes = tier_classes(environ)
    rows: list[TierRow] = []
    for element in indexed(environ, TIER_MODEL):
        tier_class, separator, value = element.partition("=")
        if not separator:
            raise KnobError(f"{TIER_MODEL}: {element!r} is not <class>=<model>[,<effort>]")
        if tier_class not in classes:
            raise KnobError(f"{TIER_MODEL}: class {tier_class!r} is not in {TIER_CLASSES}")
        if any(row.tier_class == tier_class for row in rows):
            raise KnobError(f"{TIER_MODEL}: class {tier_class!r} is bound twice")
        model, comma, effort = value.partition(",")
        if not model:
            raise KnobError(f"{TIER_MODEL}: class {tier_class!r} binds an empty model")
        if any(character.isspace() for character in model):
            raise KnobError(f"{TIER_MODEL}: model {model!r} carries whitespace")
        if model == "inherit":
            raise KnobError(f"{TIER_MODEL}: model 'inherit' binds no tier")
        if model.isdigit():
            raise KnobError(f"{TIER_MODEL}: model {model!r} is all digits, a version token that crosses families")
        if model == "-":
            raise KnobError(f"{TIER_MODEL}: a lone - is not a model")
        if comma:
            if not effort or "," in effort or any(c.isspace() for c in effort):
                raise KnobError(f"{TIER_MODEL}: effort {effort!r} of class {tier_class!r} is empty, carries whitespace or a second comma")
            if effort[0] not in _LETTERS or not set(effort) <= _EFFORT_CHARACTERS:
                raise KnobError(f"{TIER_MODEL}: effort {effort!r} is not a letter followed by letters, digits, '.', '_' or '-'")
        rows.append(TierRow(tier_class, model, effort if comma else None))
    for row in rows:
        for other in rows:
            if other is not row and row.model == _leading_token(other.model) and row.model != other.model:
                raise KnobError(
                    f"{TIER_MODEL}: model {row.model!r} equals the leading token of {other.model!r} and would match nothing"
                )
    return rows


def model_matches(value: str, model_id: str) -> bool:
    """§The tier binding's matching: ``value`` equals ``model_id`` or one of its ``-``-separated
    tokens after the first (the first is the namespace every id shares)."""
    return value == model_id or value in model_id.split("-")[1:]


def validate(environ: Mapping[str, str]) -> list[str]:
    """Every finding of the table validator over the knobs these hooks read; empty when sound."""
    findings: list[str] = []
    for read in (
        lambda: indexed(environ, LIVENESS_CMD),
        lambda: readonly_types(environ),
        lambda: mutating_types(environ),
        lambda: require_tier(environ),
        lambda: tier_model(environ),
    ):
        try:
            read()
        except KnobError as error:
            findings.append(str(error))
    return findings
