"""The ``DELEGATION_KIT_*`` knob table's rows: every knob the kit declares, its default (a tuple for an indexed
knob) and validator, and the table validator over the tier roster and binding.

:mod:`st2.kit.knobs` resolves a configuration against these rows (the environment, the knob file,
the defaults) and re-exports them; ``catalog.kdl``'s ``account`` blocks validate their scoped usage
knobs with the same rows (:mod:`st2.declarations.accounts`), which is why the rows sit here, below
both. Standard library only: every hot path that resolves knobs
imports this.
"""

from __future__ import annotations

PREFIX = "DELEGATION_KIT_"
DEFAULT_ENDPOINT = "https://api.anthropic.com/api/oauth/usage"
STOP_LOG_DEFAULT = "${GATE_SDK_WORKFLOW_DIR:-.workflow}/subagent-stop-liveness.log"
TIER_CLASSES_DEFAULT = ("judgment", "routing", "mechanical")
FOREIGN_TABLES = (
    "DELEGATION_KIT_FOREIGN_ADAPTERS", "DELEGATION_KIT_FOREIGN_RESUME", "DELEGATION_KIT_FOREIGN_SESSION_MARKER",
    "DELEGATION_KIT_FOREIGN_HARNESS", "DELEGATION_KIT_FOREIGN_USAGE", "DELEGATION_KIT_FOREIGN_USAGE_CMD",
    "DELEGATION_KIT_FOREIGN_TIER_MODEL",
)

_CLASS_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_EFFORT_CHARACTERS = _LETTERS | frozenset("0123456789._-")


def _digits(value: str) -> bool:
    return value.isascii() and value.isdigit()


def _non_negative_integer(value: str) -> str | None:
    return None if _digits(value) else "must be a non-negative integer"


def _positive_integer(value: str) -> str | None:
    return None if _digits(value) and int(value) > 0 else "must be a positive integer"


def _percentage(value: str) -> str | None:
    whole, dot, fraction = value.partition(".")
    valid = _digits(whole) and (not dot or _digits(fraction))
    return None if valid else "must be a number (a percentage such as 80 or 92.5)"


def _on_or_off(value: str) -> str | None:
    return None if value in ("on", "off") else "must be on or off"


def _non_empty(value: str) -> str | None:
    return None if value else "must not be empty"


def _any(value: str) -> str | None:
    return None


def _agent_type(element: str) -> str | None:
    if any(character.isspace() for character in element):
        return f"{element!r} carries whitespace; an agent-type name is one token"
    return None


def _word(element: str) -> str | None:
    return None


def _label_path(element: str) -> str | None:
    label, separator, path = element.partition("=")
    if not separator or not label or not path:
        return f"{element!r} is not <label>=<path> with a non-empty label and path"
    return None


class Knob:
    """One row of the table: name, default (a tuple for an indexed knob), the validator (of the
    value for a scalar, of each element for an indexed knob), and the two delegation-side
    reading rules named in :mod:`st2.kit.knobs`'s docstring."""

    __slots__ = ("name", "default", "validate", "empty_is_unset", "non_empty_elements")

    def __init__(
        self,
        name: str,
        default: str | tuple[str, ...],
        validate=_any,
        empty_is_unset: bool = False,
        non_empty_elements: bool = False,
    ) -> None:
        self.name = name
        self.default = default
        self.validate = validate
        self.empty_is_unset = empty_is_unset
        self.non_empty_elements = non_empty_elements

    @property
    def indexed(self) -> bool:
        return isinstance(self.default, tuple)


def _delegation_indexed(name: str, default: tuple[str, ...] = (), validate=_word) -> Knob:
    return Knob(name, default, validate, non_empty_elements=True)


# The static table (docs/kit.md §Knobs), in that page's order. Empty path
# defaults mean "derive it" (st2.kit.usage.knobs.usage_paths); the derivation lives at the reader
# because the harness home comes from the environment, which no row can declare as its input.
TABLE: dict[str, Knob] = {
    knob.name: knob
    for knob in (
        Knob("DELEGATION_KIT_USAGE_FILE", ""),
        Knob("DELEGATION_KIT_CRED_FILE", ""),
        Knob("DELEGATION_KIT_ACCOUNT_CONFIG", ""),
        Knob("DELEGATION_KIT_USAGE_ENDPOINT", DEFAULT_ENDPOINT),
        Knob("DELEGATION_KIT_PAUSE_PCT", "80", _percentage),
        Knob("DELEGATION_KIT_PAUSE_PCT_7D", "95", _percentage),
        Knob("DELEGATION_KIT_STALE_AGE", "600", _non_negative_integer),
        Knob("DELEGATION_KIT_LOGIN_WINDOW", "600", _non_negative_integer),
        Knob("DELEGATION_KIT_LOGIN_SETTLE", "90", _non_negative_integer),
        Knob("DELEGATION_KIT_REFRESH_CMD", ()),
        Knob("DELEGATION_KIT_REFRESH_MIN_AGE", "60", _non_negative_integer),
        Knob("DELEGATION_KIT_USAGE_HISTORY", ""),
        Knob("DELEGATION_KIT_FAN_WIDTH", "2", _positive_integer),
        Knob("DELEGATION_KIT_AGENT_DIR", ".claude/agents", _non_empty, empty_is_unset=True),
        # Declared for carry-over; st2 has no gate-tamper check that reads them.
        Knob("DELEGATION_KIT_GATE_FILES", ("${GATE_SDK_GATES_DIR}/check-*.sh", "${GATE_SDK_GATES_DIR}/check-*.gate")),
        Knob("DELEGATION_KIT_META_PATHS", ("${GATE_SDK_GATES_DIR}/", "${GATE_SDK_WORKFLOW_DIR:-.workflow}/", ".claude/")),
        Knob("DELEGATION_KIT_STOP_LOG", STOP_LOG_DEFAULT, empty_is_unset=True),
        _delegation_indexed("DELEGATION_KIT_LIVENESS_CMD"),
        _delegation_indexed("DELEGATION_KIT_READONLY_TYPES", validate=_agent_type),
        _delegation_indexed("DELEGATION_KIT_MUTATING_TYPES", validate=_agent_type),
        Knob("DELEGATION_KIT_REQUIRE_TIER", "off", _on_or_off, empty_is_unset=True),
        # No indexed knob takes an environment spelling: a freshness gate (check-agent-tier-explicit)
        # reads the binding, and a per-session override would red it against an unchanged tree.
        Knob("DELEGATION_KIT_TIER_CLASSES", TIER_CLASSES_DEFAULT, _word, non_empty_elements=True),
        Knob("DELEGATION_KIT_TIER_MODEL", (), _word, non_empty_elements=True),
        # Declared for carry-over; st2 reads none of these yet (no foreign-vendor run, no
        # model verdict, no statusline inbox group).
        Knob("DELEGATION_KIT_FOREIGN_TIER_MODEL", ()),
        Knob("DELEGATION_KIT_FOREIGN_HARNESS", ()),
        Knob("DELEGATION_KIT_SESSIONS_DIR", ""),
        Knob("DELEGATION_KIT_STATUSLINE_INBOXES", (), _label_path),
        Knob("DELEGATION_KIT_FOREIGN_ADAPTERS", ()),
        Knob("DELEGATION_KIT_FOREIGN_TIMEOUT", "1800", _positive_integer),
        Knob("DELEGATION_KIT_FOREIGN_RESUME", ()),
        Knob("DELEGATION_KIT_FOREIGN_SESSION_MARKER", ()),
        Knob("DELEGATION_KIT_FOREIGN_USAGE", ()),
        Knob("DELEGATION_KIT_FOREIGN_USAGE_CMD", ()),
        Knob("DELEGATION_KIT_FOREIGN_PAUSE_PCT", "${DELEGATION_KIT_PAUSE_PCT}", _percentage),
        Knob("DELEGATION_KIT_FOREIGN_PAUSE_PCT_LONG", "${DELEGATION_KIT_PAUSE_PCT_7D}", _percentage),
    )
}


def tier_binding_findings(classes: tuple[str, ...], elements: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str, str | None]]]:
    """The table validator over the tier roster and binding (docs/kit.md §Tier binding,
    DELEGATION_KIT_TIER_CLASSES and DELEGATION_KIT_TIER_MODEL). Return (findings, rows), each
    row ``(class, model, effort-or-None)``; findings carry no source prefix."""
    roster, model = "DELEGATION_KIT_TIER_CLASSES", "DELEGATION_KIT_TIER_MODEL"
    findings: list[str] = []
    seen: set[str] = set()
    for name in classes:
        if not name or not set(name) <= _CLASS_CHARACTERS:
            findings.append(f"{roster}: {name!r} is not a class name ([a-z0-9-])")
        elif name in seen:
            findings.append(f"{roster}: {name!r} is given twice")
        seen.add(name)
    rows: list[tuple[str, str, str | None]] = []
    for element in elements:
        tier_class, separator, value = element.partition("=")
        bound, comma, effort = value.partition(",")
        problem = None
        if not separator:
            problem = f"{element!r} is not <class>=<model>[,<effort>]"
        elif tier_class not in classes:
            problem = f"class {tier_class!r} is not in {roster}"
        elif any(row[0] == tier_class for row in rows):
            problem = f"class {tier_class!r} is bound twice"
        elif not bound:
            problem = f"class {tier_class!r} binds an empty model"
        elif any(character.isspace() for character in bound):
            problem = f"model {bound!r} carries whitespace"
        elif bound == "inherit":
            problem = "model 'inherit' binds no tier"
        elif bound.isdigit():
            problem = f"model {bound!r} is all digits, a version token that crosses families"
        elif bound == "-":
            problem = "a lone - is not a model"
        elif comma and (not effort or "," in effort or any(c.isspace() for c in effort)):
            problem = f"effort {effort!r} of class {tier_class!r} is empty, carries whitespace or a second comma"
        elif comma and (effort[0] not in _LETTERS or not set(effort) <= _EFFORT_CHARACTERS):
            problem = f"effort {effort!r} is not a letter followed by letters, digits, '.', '_' or '-'"
        if problem:
            findings.append(f"{model}: {problem}")
            continue
        rows.append((tier_class, bound, effort if comma else None))
    for row in rows:
        for other in rows:
            if other is not row and row[1] == other[1].split("-", 1)[0] and row[1] != other[1]:
                findings.append(f"{model}: model {row[1]!r} equals the leading token of {other[1]!r} and would match nothing")
    return findings, rows
