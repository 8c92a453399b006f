"""The DELEGATION_KIT_* knobs the usage budget reads: one static table, one knob file, one
resolution.

Names and defaults are the delegation kit's, kept exactly so an existing setup carries over.
A scalar knob resolves environment first (under its own name), then the knob file, then its
default. An indexed knob (``DELEGATION_KIT_REFRESH_CMD``, an argv) has no environment spelling:
it comes only from the knob file, one ``NAME[] = element`` line per element, and a file value
replaces its default whole.

The knob file is ``$DELEGATION_KIT_KNOB_FILE`` when set (it must then exist), else
``${XDG_CONFIG_HOME:-~/.config}/st2/delegation-config.knobs`` (absent is fine). Grammar, one
statement per line::

    # comment                         (and blank lines) ignored
    NAME = value                      a scalar
    NAME[] = element                  one element of an indexed knob, in order
    NAME = "value with edges "        double quotes keep leading/trailing spaces

A malformed file — a line of neither shape, a name outside the table, a scalar written as an
element or the reverse, a value the table validator refuses — is refused as a whole with every
finding, so a broken machine gates nothing (:class:`KnobError`). Reading a name the table does
not carry is a programming error (``KeyError``), never an empty value.

Standard library only: hot paths import this.
"""

from __future__ import annotations

import os
import re

PREFIX = "DELEGATION_KIT_"
KNOB_FILE = "DELEGATION_KIT_KNOB_FILE"
DEFAULT_KNOB_FILE_NAME = "delegation-config.knobs"
DEFAULT_ENDPOINT = "https://api.anthropic.com/api/oauth/usage"

# The knob-file line shape; compiled on first use, since most runs read no knob file and the
# hot path's budget is counted in milliseconds.
_LINE_PATTERN = r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<indexed>\[\])?\s*=\s?(?P<value>.*)$"


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


def _any(value: str) -> str | None:
    return None


class Knob:
    """One row of the table: name, default (a tuple for an indexed knob) and validator.

    Plain classes rather than dataclasses here: importing :mod:`dataclasses` costs ~15 ms, a
    third of the hot path's whole budget (measured with ``python -X importtime``)."""

    __slots__ = ("name", "default", "validate")

    def __init__(self, name: str, default: str | tuple[str, ...], validate=_any) -> None:
        self.name = name
        self.default = default
        self.validate = validate

    @property
    def indexed(self) -> bool:
        return isinstance(self.default, tuple)


# The static table (seed 002 §Layout and configuration). Empty path defaults mean "derive it"
# (see :func:`usage_paths`); the derivation lives at the reader because the harness home comes
# from the environment, which no table row can declare as its input.
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
    )
}


class KnobError(Exception):
    """The knob configuration is malformed. ``findings`` lists every problem found, each naming
    its source (file and line, or the environment variable)."""

    def __init__(self, findings: list[str]) -> None:
        super().__init__("; ".join(findings))
        self.findings = findings


class Knobs:
    """Resolved knob values. ``scalar(name)`` and ``indexed(name)`` raise ``KeyError`` for a name
    the table does not carry, and ``TypeError`` for the wrong shape."""

    __slots__ = ("scalars", "arrays", "source")

    def __init__(self, scalars: dict[str, str], arrays: dict[str, tuple[str, ...]], source: str | None = None) -> None:
        self.scalars = scalars
        self.arrays = arrays
        self.source = source

    def scalar(self, name: str) -> str:
        knob = TABLE[name]
        if knob.indexed:
            raise TypeError(f"{name} is an indexed knob")
        return self.scalars[name]

    def indexed(self, name: str) -> tuple[str, ...]:
        knob = TABLE[name]
        if not knob.indexed:
            raise TypeError(f"{name} is a scalar knob")
        return self.arrays[name]

    def integer(self, name: str) -> int:
        return int(self.scalar(name))


def config_home(environ: Mapping[str, str]) -> str:
    """The st2 config directory: ``${XDG_CONFIG_HOME:-~/.config}/st2``."""
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(_home(environ), ".config")
    return os.path.join(base, "st2")


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def knob_file_path(environ: Mapping[str, str]) -> tuple[str, bool]:
    """Return the knob file path and whether it was named explicitly (then it must exist)."""
    named = environ.get(KNOB_FILE, "")
    if named:
        return named, True
    return os.path.join(config_home(environ), DEFAULT_KNOB_FILE_NAME), False


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def parse_knob_file(text: str, path: str) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """Parse knob-file ``text``. Return (scalars, arrays, findings); findings name ``path:line``."""
    scalars: dict[str, str] = {}
    arrays: dict[str, list[str]] = {}
    findings: list[str] = []
    line_shape = re.compile(_LINE_PATTERN)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        match = line_shape.match(line)
        if match is None:
            findings.append(f"{where}: not a 'NAME = value' or 'NAME[] = element' line: {line!r}")
            continue
        name, is_element, value = match["name"], bool(match["indexed"]), _unquote(match["value"])
        knob = TABLE.get(name)
        if knob is None:
            findings.append(f"{where}: {name} is not a knob st2 reads")
            continue
        if knob.indexed and not is_element:
            findings.append(f"{where}: {name} is indexed; write one '{name}[] = <element>' line per element")
            continue
        if not knob.indexed and is_element:
            findings.append(f"{where}: {name} is a scalar; write '{name} = <value>'")
            continue
        if knob.indexed:
            arrays.setdefault(name, []).append(value)
            continue
        problem = knob.validate(value)
        if problem:
            findings.append(f"{where}: {name}={value!r} {problem}")
            continue
        scalars[name] = value
    return scalars, arrays, findings


def resolve(environ: Mapping[str, str] | None = None) -> Knobs:
    """Resolve every knob of the table from ``environ`` (default ``os.environ``) and the knob
    file. Raise :class:`KnobError` with every finding when the configuration is malformed."""
    environ = os.environ if environ is None else environ
    findings: list[str] = []
    path, named = knob_file_path(environ)
    file_scalars: dict[str, str] = {}
    file_arrays: dict[str, list[str]] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = None
        if named:
            findings.append(f"{KNOB_FILE}={path}: no such file (unset it to use the default location)")
    except (OSError, UnicodeDecodeError) as error:
        text = None
        findings.append(f"{path}: cannot read the knob file ({error.__class__.__name__})")
    if text is not None:
        file_scalars, file_arrays, file_findings = parse_knob_file(text, path)
        findings.extend(file_findings)
    scalars: dict[str, str] = {}
    arrays: dict[str, tuple[str, ...]] = {}
    for name, knob in TABLE.items():
        if knob.indexed:
            arrays[name] = tuple(file_arrays[name]) if name in file_arrays else knob.default
            continue
        if name in environ:
            value = environ[name]
            problem = knob.validate(value)
            if problem:
                findings.append(f"environment {name}={value!r} {problem}")
                continue
        elif name in file_scalars:
            value = file_scalars[name]
        else:
            value = knob.default
        scalars[name] = value
    if findings:
        raise KnobError(findings)
    return Knobs(scalars=scalars, arrays=arrays, source=path if text is not None else None)


class UsagePaths:
    __slots__ = ("usage_file", "cred_file", "account_config")

    def __init__(self, usage_file: str, cred_file: str, account_config: str) -> None:
        self.usage_file = usage_file
        self.cred_file = cred_file
        self.account_config = account_config


def usage_paths(knobs: Knobs, environ: Mapping[str, str] | None = None) -> UsagePaths:
    """The one empty-means-derive fill for the three paths, read together.

    usage file: the knob, else ``<config-home>/usage.txt`` with config home = ``CLAUDE_CONFIG_DIR``
    when set non-empty, else ``~/.claude``. Credentials: the knob, else ``.credentials.json`` in
    the usage file's directory. Account config: the knob, else ``~/.claude.json``.
    """
    environ = os.environ if environ is None else environ
    home = _home(environ)
    usage_file = knobs.scalar("DELEGATION_KIT_USAGE_FILE")
    if not usage_file:
        claude_home = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        usage_file = os.path.join(claude_home, "usage.txt")
    cred_file = knobs.scalar("DELEGATION_KIT_CRED_FILE") or os.path.join(
        os.path.dirname(usage_file), ".credentials.json"
    )
    account_config = knobs.scalar("DELEGATION_KIT_ACCOUNT_CONFIG") or os.path.join(home, ".claude.json")
    return UsagePaths(usage_file=usage_file, cred_file=cred_file, account_config=account_config)
