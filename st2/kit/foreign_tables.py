"""The foreign adapter tables, read from resolved knobs, and their table validator (docs/kit.md
§Knobs, the DELEGATION_KIT_FOREIGN_* rows).

``DELEGATION_KIT_FOREIGN_ADAPTERS`` ``<adapter>=<word>`` elements (an adapter's argv is its words
in element order), ``_RESUME`` the same for resume forms, ``_SESSION_MARKER``
``<adapter>=<marker>``, ``_HARNESS`` ``<adapter>=<harness>``, ``_USAGE`` ``<adapter>=<path>``,
``_USAGE_CMD`` ``<adapter>=<word>``, ``_TIER_MODEL`` ``<harness>/<class>=<model>[,<effort>]``.
Standard library only: :func:`findings` runs inside every knob resolution that configures one.
"""

from __future__ import annotations

NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
ADAPTERS = "DELEGATION_KIT_FOREIGN_ADAPTERS"
RESUME = "DELEGATION_KIT_FOREIGN_RESUME"
MARKER = "DELEGATION_KIT_FOREIGN_SESSION_MARKER"
HARNESS = "DELEGATION_KIT_FOREIGN_HARNESS"
USAGE = "DELEGATION_KIT_FOREIGN_USAGE"
USAGE_CMD = "DELEGATION_KIT_FOREIGN_USAGE_CMD"
TIER_MODEL = "DELEGATION_KIT_FOREIGN_TIER_MODEL"
NAMES = (ADAPTERS, RESUME, MARKER, HARNESS, USAGE, USAGE_CMD, TIER_MODEL)
PROMPT_FILE, SESSION_ID, MODEL, EFFORT, USAGE_FILE = "@PROMPT_FILE@", "@SESSION_ID@", "@MODEL@", "@EFFORT@", "@USAGE_FILE@"


def _name(value: str) -> bool:
    return bool(value) and set(value) <= NAME


def _pairs(name: str, elements, findings: list[str], value_kind: str) -> list[tuple[str, str]]:
    pairs = []
    for element in elements:
        key, separator, value = element.partition("=")
        if not separator or not _name(key) or not value:
            findings.append(f"{name}: {element!r} is not <adapter>={value_kind} (adapter in [a-z0-9-], {value_kind} non-empty)")
            continue
        pairs.append((key, value))
    return pairs


def argv_table(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for adapter, word in pairs:
        table.setdefault(adapter, []).append(word)
    return table


def _single(name: str, pairs, findings: list[str]) -> dict[str, str]:
    table: dict[str, str] = {}
    for adapter, value in pairs:
        if adapter in table:
            findings.append(f"{name}: a second element for adapter {adapter!r}")
            continue
        table[adapter] = value
    return table


class Tables:
    __slots__ = ("adapters", "resume", "marker", "harness", "usage", "usage_cmd", "tier_model")


def read(arrays, roster: tuple[str, ...], findings: list[str] | None = None) -> Tables:
    """Parse the seven tables from ``arrays`` (name -> elements); append every refusal to
    ``findings``."""
    findings = [] if findings is None else findings
    tables = Tables()
    tables.adapters = argv_table(_pairs(ADAPTERS, arrays.get(ADAPTERS, ()), findings, "<word>"))
    tables.resume = argv_table(_pairs(RESUME, arrays.get(RESUME, ()), findings, "<word>"))
    tables.marker = _single(MARKER, _pairs(MARKER, arrays.get(MARKER, ()), findings, "<marker>"), findings)
    tables.harness = _single(HARNESS, _pairs(HARNESS, arrays.get(HARNESS, ()), findings, "<harness>"), findings)
    tables.usage = _single(USAGE, _pairs(USAGE, arrays.get(USAGE, ()), findings, "<path>"), findings)
    tables.usage_cmd = argv_table(_pairs(USAGE_CMD, arrays.get(USAGE_CMD, ()), findings, "<word>"))
    for name, table in ((RESUME, tables.resume), (HARNESS, tables.harness), (USAGE, tables.usage)):
        for adapter in table:
            if adapter not in tables.adapters:
                findings.append(f"{name}: adapter {adapter!r} is not configured in {ADAPTERS}")
    for adapter in tables.usage_cmd:
        if adapter not in tables.usage:
            findings.append(f"{USAGE_CMD}: adapter {adapter!r} has no {USAGE} snapshot to write")
    for adapter, harness in tables.harness.items():
        if not _name(harness):
            findings.append(f"{HARNESS}: harness {harness!r} of adapter {adapter!r} is not a name ([a-z0-9-])")
    for adapter, words in tables.adapters.items():
        open_text, resume_text = " ".join(words), " ".join(tables.resume.get(adapter, ()))
        if adapter in tables.harness and MODEL not in open_text:
            findings.append(f"{ADAPTERS}: adapter {adapter!r} takes a class ({HARNESS}) but its form carries no {MODEL}")
        if adapter not in tables.harness and any(token in text for token in (MODEL, EFFORT) for text in (open_text, resume_text)):
            findings.append(f"{ADAPTERS}: adapter {adapter!r} carries {MODEL} or {EFFORT} but {HARNESS} names no harness for it")
        if SESSION_ID in resume_text and adapter not in tables.marker:
            findings.append(f"{RESUME}: adapter {adapter!r}'s resume form carries {SESSION_ID} but {MARKER} gives it no marker")
    tables.tier_model = {}
    for element in arrays.get(TIER_MODEL, ()):
        key, separator, value = element.partition("=")
        harness, slash, tier_class = key.partition("/")
        model, comma, effort = value.partition(",")
        problem = None
        if not separator or not slash or not _name(harness) or not _name(tier_class):
            problem = f"{element!r} is not <harness>/<class>=<model>[,<effort>]"
        elif tier_class not in roster:
            problem = f"class {tier_class!r} is not in DELEGATION_KIT_TIER_CLASSES"
        elif (harness, tier_class) in tables.tier_model:
            problem = f"{harness}/{tier_class} is bound twice"
        elif not model or model in ("-", "inherit") or any(c.isspace() for c in model):
            problem = f"model {model!r} of {harness}/{tier_class} is empty, '-', 'inherit' or carries whitespace"
        elif comma and (not effort or effort == "-" or not effort[0].isalpha() or not all(c.isalnum() or c in "._-" for c in effort)):
            problem = f"effort {effort!r} of {harness}/{tier_class} is not a letter followed by letters, digits, '.', '_' or '-'"
        if problem:
            findings.append(f"{TIER_MODEL}: {problem}")
            continue
        tables.tier_model[(harness, tier_class)] = (model, effort if comma else None)
    return tables


def findings(arrays, roster: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    read(arrays, roster, found)
    return found
