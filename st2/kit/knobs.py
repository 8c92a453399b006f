"""The one ``DELEGATION_KIT_*`` knob resolution and the one knob-file reader, shared by the usage
budget (:mod:`st2.kit.usage.knobs`) and the delegation hooks (:mod:`st2.kit.delegation.knobs`), so both
read the same file the same way and refuse the same malformed content with the same findings
(docs/kit.md §Knobs; names, shapes and defaults kept exactly).

The table (its rows are :mod:`st2.base.knob_rows`, re-exported here) declares every knob the kit
declares, so an existing delegation-kit knob file carries over whole. Some rows st2 reads
nowhere yet (the gate-tamper globs, the foreign-vendor run, the statusline inboxes, the sessions
dir); they are declared so a kit file naming them is not refused, and their values are
validated for shape only.

Where a value comes from, first match wins:

- a scalar knob: the environment under its own name, then the knob file, then the default. For
  ``STOP_LOG``, ``REQUIRE_TIER`` and ``AGENT_DIR`` an empty environment value reads as unset (the
  delegation hooks always read them so);
- an indexed knob: the knob file's ``NAME[] = element`` lines, which replace the default whole,
  then the default. An indexed knob has no environment spelling at all (a variable of its name
  is ignored): the command knobs (``REFRESH_CMD``, ``LIVENESS_CMD``) are argvs spawned without a
  shell, the rosters (``READONLY_TYPES``, ``MUTATING_TYPES``) are the consumer's own, and
  ``TIER_CLASSES`` and ``TIER_MODEL`` feed the freshness gate check-agent-tier-explicit, where a
  per-session override would red that gate against an unchanged tree.

The knob file is ``$DELEGATION_KIT_KNOB_FILE`` when set (it must then exist), else
``<top level>/<gates dir>/delegation-config.knobs`` (absent is fine): the top level is the git
repository holding the working directory (the directory itself outside any), the gates dir
``${GATE_SDK_GATES_DIR:-checks}`` (:mod:`st2.kit.gate_registry`), where ``st2 kit init``
installs the file. Beside it, a
gitignored ``delegation-config.local.knobs`` overlay (absent is fine) holds private values: a
knob it names wins over the tracked file's (an indexed one replaced whole), and the environment
still wins over both for a scalar. Refused with the other findings: a left-behind
``delegation-config.sh`` or ``delegation-config.local.sh`` beside the knob file, and a
non-empty file named by the retired ``DELEGATION_KIT_CONFIG_FILE``. Grammar, one statement per
line::

    # comment                         (and blank lines) ignored
    NAME = value                      a scalar
    NAME[] = element                  one element of an indexed knob, in order
    NAME = "value with edges "        double quotes keep leading/trailing spaces

The table validator runs over the whole resolved configuration at every resolution: a line of
neither shape, a name outside the table, a scalar written as an element or the reverse, a value
a row refuses, a malformed tier roster or binding. Any finding refuses the configuration as a
whole with every finding (:class:`KnobError`): a broken machine gates nothing, whichever side
reads it. Reading a name the table does not carry is a programming error (``KeyError``).

Standard library only: every
hot path (the usage verdict, the budget guard, both delegation hooks) imports this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from st2.fs.read import SNAPSHOT_LIMIT, read_text
from st2.base.knob_rows import (  # noqa: F401 - re-exported: the table's readers import it from here
    DEFAULT_ENDPOINT, FOREIGN_TABLES, PREFIX, STOP_LOG_DEFAULT, TABLE, TIER_CLASSES_DEFAULT, Knob, tier_binding_findings)

KNOB_FILE = "DELEGATION_KIT_KNOB_FILE"
DEFAULT_KNOB_FILE_NAME = "delegation-config.knobs"

# The knob-file line shape; compiled on first use, since most runs read no knob file and the
# hot path's budget is counted in milliseconds.
_LINE_PATTERN = r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<indexed>\[\])?\s*=\s?(?P<value>.*)$"


class KnobError(ValueError):
    """The knob configuration is malformed. ``findings`` lists every problem found, each naming
    its source (file and line, the environment variable, or the file for a whole-knob check)."""

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
        if TABLE[name].indexed:
            raise TypeError(f"{name} is an indexed knob")
        return self.scalars[name]

    def indexed(self, name: str) -> tuple[str, ...]:
        if not TABLE[name].indexed:
            raise TypeError(f"{name} is a scalar knob")
        return self.arrays[name]

    def integer(self, name: str) -> int:
        return int(self.scalar(name))


def home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def knob_file_path(environ: Mapping[str, str], cwd: str | None = None) -> tuple[str, bool]:
    """Return the knob file path and whether it was named explicitly (then it must exist); the
    default is the one ``st2 kit init`` installs for the repository holding ``cwd`` (default the
    working directory)."""
    from st2.kit import gate_registry

    named = environ.get(KNOB_FILE, "")
    if named:
        return named, True
    cwd = os.getcwd() if cwd is None else cwd
    top = gate_registry.repository_top(cwd) or os.path.abspath(cwd)
    return os.path.join(top, gate_registry.gates_dir(environ), DEFAULT_KNOB_FILE_NAME), False


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def parse_knob_file(text: str, path: str) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """Parse knob-file ``text``. Return (scalars, arrays, findings); findings name ``path:line``.
    Whole-knob checks (the tier roster and binding) run at :func:`resolve`."""
    import re

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
            problem = "is empty" if knob.non_empty_elements and not value.strip() else knob.validate(value)
            if problem:
                findings.append(f"{where}: {name}: element {problem}" if problem == "is empty" else f"{where}: {name}: {problem}")
                continue
            arrays.setdefault(name, []).append(value)
            continue
        problem = knob.validate(value)
        if problem:
            findings.append(f"{where}: {name}={value!r} {problem}")
            continue
        scalars[name] = value
    return scalars, arrays, findings


def _expand(template: str, scalars: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """Render a derived default: ``${NAME}`` and ``${NAME:-fallback}``, NAME read from the
    resolved knobs first and the environment second (the derived-default spelling)."""
    rendered = ""
    rest = template
    while "${" in rest:
        before, _, after = rest.partition("${")
        expression, _, rest = after.partition("}")
        name, separator, fallback = expression.partition(":-")
        value = scalars.get(name, environ.get(name, ""))
        rendered += before + (value if value or not separator else fallback)
    return rendered + rest


expand = _expand  # the derived-default renderer, for readers expanding an indexed default


LOCAL_KNOB_FILE_NAME = "delegation-config.local.knobs"
LEFT_BEHIND = ("delegation-config.sh", "delegation-config.local.sh")
RETIRED_CONFIG_FILE = "DELEGATION_KIT_CONFIG_FILE"


def _read_text(path: str, findings: list[str], named: bool) -> str | None:
    try:
        return read_text(path, SNAPSHOT_LIMIT)
    except FileNotFoundError:
        if named:
            findings.append(f"{KNOB_FILE}={path}: no such file (unset it to use the default location)")
    except (OSError, UnicodeDecodeError) as error:
        findings.append(f"{path}: cannot read the knob file ({error.__class__.__name__})")
    return None


def _read_knob_file(environ: Mapping[str, str], findings: list[str], cwd: str | None) -> tuple[str, str | None]:
    path, named = knob_file_path(environ, cwd)
    return path, _read_text(path, findings, named)


def _retired_configuration(path: str, environ: Mapping[str, str], findings: list[str]) -> None:
    """The refusals of a configuration st2 does not read: a shell config left beside the knob
    file, and a non-empty file named by the retired ``DELEGATION_KIT_CONFIG_FILE``. Either would
    otherwise be silently ignored, so a value the operator set would not hold."""
    directory = os.path.dirname(path)
    for name in LEFT_BEHIND:
        left = os.path.join(directory, name)
        if os.path.lexists(left):
            findings.append(f"{left}: a left-behind shell config; st2 reads knob files only — move its values into "
                            f"{DEFAULT_KNOB_FILE_NAME} (or {LOCAL_KNOB_FILE_NAME}) and delete it")
    retired = environ.get(RETIRED_CONFIG_FILE, "")
    if retired:
        try:
            size = os.stat(retired).st_size
        except OSError:
            size = 0
        if size > 0:
            findings.append(f"{RETIRED_CONFIG_FILE}={retired}: the retired config file is not read — move its values into "
                            f"the knob file ({KNOB_FILE} or the default location) and unset {RETIRED_CONFIG_FILE}")


class AccountEnviron(dict):
    """An environment scoped to one declared account (:mod:`st2.accounts.scope`): its scalar
    knobs are ordinary entries, so they win over the knob file as any environment value does; its
    indexed knobs, which have no environment spelling, are :attr:`indexed` and win over the knob
    file in :func:`resolve`. ``account`` names the account."""

    def __init__(self, base: Mapping[str, str], account: str, indexed: Mapping[str, tuple[str, ...]]) -> None:
        super().__init__(base)
        self.account = account
        self.indexed = dict(indexed)


def resolve(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> Knobs:
    """Resolve every knob of the table from ``environ`` (default ``os.environ``) and the knob
    file (its default location found from ``cwd``, default the working directory), and run the
    table validator. Raise :class:`KnobError` with every finding when the configuration is
    malformed."""
    environ = os.environ if environ is None else environ
    findings: list[str] = []
    path, text = _read_knob_file(environ, findings, cwd)
    _retired_configuration(path, environ, findings)
    file_scalars: dict[str, str] = {}
    file_arrays: dict[str, list[str]] = {}
    array_files: dict[str, str] = {}
    if text is not None:
        file_scalars, file_arrays, file_findings = parse_knob_file(text, path)
        findings.extend(file_findings)
        array_files = dict.fromkeys(file_arrays, path)
    # The gitignored overlay beside the knob file: its values win over the tracked file's (an
    # indexed knob it names is replaced whole).
    local_path = os.path.join(os.path.dirname(path), LOCAL_KNOB_FILE_NAME)
    local_text = _read_text(local_path, findings, named=False)
    if local_text is not None:
        local_scalars, local_arrays, local_findings = parse_knob_file(local_text, local_path)
        findings.extend(local_findings)
        file_scalars.update(local_scalars)
        file_arrays.update(local_arrays)
        array_files.update(dict.fromkeys(local_arrays, local_path))
    scalars: dict[str, str] = {}
    arrays: dict[str, tuple[str, ...]] = {}
    array_sources: dict[str, str] = {}
    derived: list[str] = []
    for name, knob in TABLE.items():
        if knob.indexed:
            if name in getattr(environ, "indexed", ()):
                arrays[name] = tuple(environ.indexed[name])
                array_sources[name] = f"account {environ.account}: "
            elif name in file_arrays:
                arrays[name] = tuple(file_arrays[name])
                array_sources[name] = f"{array_files[name]}: "
            else:
                arrays[name] = knob.default
                array_sources[name] = ""
            continue
        if name in environ and not (knob.empty_is_unset and environ[name] == ""):
            value = environ[name]
            problem = knob.validate(value)
            if problem:
                findings.append(f"environment {name}={value!r} {problem}")
                continue
        elif name in file_scalars:
            value = file_scalars[name]
        else:
            value = knob.default
            if "${" in value:
                derived.append(name)
        scalars[name] = value
    for name in derived:
        scalars[name] = _expand(scalars[name], scalars, environ)
    classes, binding = "DELEGATION_KIT_TIER_CLASSES", "DELEGATION_KIT_TIER_MODEL"
    if any(arrays[name] for name in FOREIGN_TABLES):
        # Only a configuration naming a foreign adapter pays for this import.
        from st2.kit import foreign_tables

        for finding in foreign_tables.findings(arrays, arrays[classes]):
            findings.append(array_sources.get(finding.split(":", 1)[0], "") + finding)
    tier_findings, _ = tier_binding_findings(arrays[classes], arrays[binding])
    for finding in tier_findings:
        source = array_sources[classes] if finding.startswith(classes) else array_sources[binding]
        findings.append(source + finding)
    if findings:
        raise KnobError(findings)
    return Knobs(scalars=scalars, arrays=arrays, source=path if text is not None else None)
