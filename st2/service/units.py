"""The systemd user units, rendered from the one set of templates in ``units/``.

``units/*.service`` and ``units/*.timer`` are templates whose only variable parts are
at-sign-delimited placeholders:

- ``@st2@``                the absolute path of the ``st2`` executable
- ``@locationArguments@``  `` --catalog <root>`` and/or `` --host <name>`` (each only when set)
- ``@memoryMax@``          the supervisor's ``MemoryMax=``
- ``@pollInterval@``       the usage poll timer's ``OnCalendar=`` expression

``st2 service install`` renders them with :func:`render_all`; the flake's modules render the
very same files with ``nix/units.nix``, which applies the same substitutions and the same value
checks (full-match patterns below, spelled identically there). A placeholder a template uses
that neither renderer knows is an error, never left in a unit.

Values are refused rather than quoted: systemd would split an unquoted space, expand ``%`` and
``$``, and a renderer that quotes differently from the other would break "one source of truth".

Standard library only: ``checks/units-verify`` imports this with a bare interpreter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

TEMPLATE_DIRECTORY = Path(__file__).resolve().parent.parent / "assets" / "units"
UNIT_SUFFIXES = (".service", ".timer")

# Full-match patterns; nix/units.nix carries the same strings.
PATH_PATTERN = r"/[A-Za-z0-9._+=/-]+"
HOST_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
MEMORY_PATTERN = r"[0-9]+[KMGT]?|[0-9]+%|infinity"
CALENDAR_PATTERN = r"[A-Za-z0-9*:/,.~ -]+"
PLACEHOLDER = re.compile(r"@([A-Za-z0-9]+)@")

DEFAULT_MEMORY_MAX = "512M"
DEFAULT_POLL_INTERVAL = "*:0/5"


class UnitSettingError(ValueError):
    """A value cannot be written into a unit as given."""


def _checked(name: str, pattern: str, value: str) -> str:
    if re.fullmatch(pattern, value) is None:
        raise UnitSettingError(f"{name} {value!r} must match {pattern} (no spaces, quotes, % or $)")
    return value


@dataclass(frozen=True)
class UnitSettings:
    """What varies between hosts. ``catalog`` and ``host`` left as None keep st2's own runtime
    defaults (``$CATALOG`` or the XDG state default; the short hostname)."""

    st2: str
    catalog: str | None = None
    host: str | None = None
    memory_max: str = DEFAULT_MEMORY_MAX
    poll_interval: str = DEFAULT_POLL_INTERVAL

    def substitutions(self) -> dict[str, str]:
        location = ""
        if self.catalog is not None:
            location += " --catalog " + _checked("catalog", PATH_PATTERN, self.catalog)
        if self.host is not None:
            location += " --host " + _checked("host", HOST_PATTERN, self.host)
        return {
            "st2": _checked("st2 executable", PATH_PATTERN, self.st2),
            "locationArguments": location,
            "memoryMax": _checked("memory maximum", MEMORY_PATTERN, self.memory_max),
            "pollInterval": _checked("poll interval", CALENDAR_PATTERN, self.poll_interval),
        }


def unit_names(directory: Path = TEMPLATE_DIRECTORY) -> list[str]:
    """The unit templates shipped in ``directory``, sorted (the modules install the same set)."""
    return sorted(
        entry.name for entry in directory.iterdir() if entry.is_file() and entry.name.endswith(UNIT_SUFFIXES)
    )


def render(template: str, settings: UnitSettings, name: str = "unit") -> str:
    """Substitute every placeholder in ``template``. Raise :class:`UnitSettingError` for a bad
    value or a placeholder this renderer does not know."""
    substitutions = settings.substitutions()
    unknown = sorted({match for match in PLACEHOLDER.findall(template) if match not in substitutions})
    if unknown:
        raise UnitSettingError(f"{name}: unknown placeholder(s) {', '.join('@' + word + '@' for word in unknown)}")
    return PLACEHOLDER.sub(lambda match: substitutions[match.group(1)], template)


def render_all(settings: UnitSettings, directory: Path = TEMPLATE_DIRECTORY) -> dict[str, str]:
    """Every shipped unit, rendered: unit name -> file text."""
    return {
        name: render((directory / name).read_text(encoding="utf-8"), settings, name)
        for name in unit_names(directory)
    }
