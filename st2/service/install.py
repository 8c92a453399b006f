"""`st2 service install`: write the rendered user units where the user manager reads them.

Given :class:`~st2.service.units.UnitSettings` and a unit directory (default
``${XDG_CONFIG_HOME:-~/.config}/systemd/user``), publish every shipped unit atomically and
return what was written. Enabling is a separate, explicit step (:func:`enable`) because it talks
to the running user manager.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from st2.fs.atomic import ensure_directory, publish
from st2.service.units import UnitSettings, render_all

STAGING_NAME = ".st2-unit-staging"
# What `--enable` starts: the supervisor and the poll timer. The template (ding@) is
# instantiated per seat by the operator.
ENABLED_UNITS = ("st2.service", "st2-usage-poll.timer")
# Installed (and enabled) only when asked for: `st2 service install --web`.
WEB_UNIT = "st2-web.service"


def default_unit_directory() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def default_st2_executable() -> str | None:
    """The ``st2`` beside the running interpreter (a venv or the Nix wrapper's environment),
    else the one on PATH; None when neither exists."""
    beside = Path(sys.executable).parent / "st2"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("st2")
    return str(Path(found).resolve()) if found else None


@dataclass(frozen=True)
class InstalledUnit:
    name: str
    path: Path
    changed: bool


def wanted(web: bool) -> tuple[str, ...]:
    """The units ``--enable`` starts: the supervisor, the poll timer, and the web face when asked."""
    return ENABLED_UNITS + ((WEB_UNIT,) if web else ())


def install(settings: UnitSettings, unit_directory: Path, web: bool = False) -> list[InstalledUnit]:
    """Render every unit (raising before anything is written if a value is refused) and
    publish each into ``unit_directory`` (:data:`WEB_UNIT` only with ``web``). A unit whose bytes
    are already in place is left untouched and reported unchanged."""
    rendered = {name: text for name, text in render_all(settings).items() if web or name != WEB_UNIT}
    ensure_directory(unit_directory, mode=0o755)
    staging = unit_directory / STAGING_NAME
    staging.mkdir(mode=0o700, exist_ok=True)
    written: list[InstalledUnit] = []
    try:
        for name, text in rendered.items():
            target = unit_directory / name
            data = text.encode("utf-8")
            try:
                changed = target.read_bytes() != data
            except FileNotFoundError:
                changed = True
            if changed:
                publish(target, data, staging, root=unit_directory, mode=0o644)
            written.append(InstalledUnit(name, target, changed))
    finally:
        try:
            staging.rmdir()
        except OSError:
            pass
    return written


def enable(units: tuple[str, ...] = ENABLED_UNITS) -> list[list[str]]:
    """Reload the user manager and enable + start ``units``. Return the commands run; raise
    ``subprocess.CalledProcessError`` when one fails."""
    commands = [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", *units],
    ]
    for command in commands:
        subprocess.run(command, check=True)
    return commands
