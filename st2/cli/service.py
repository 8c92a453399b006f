"""`st2 service install|render`: parsing glue for the systemd user units (st2.service.*)."""

from __future__ import annotations

from pathlib import Path

import click

from st2.cli.common import catalog_options
from st2.service.units import DEFAULT_MEMORY_MAX, DEFAULT_POLL_INTERVAL, UnitSettingError


def _settings(location, st2_path: str | None, memory_max: str, poll_interval: str):
    from st2.service.install import default_st2_executable
    from st2.service.units import UnitSettings

    executable = st2_path or default_st2_executable()
    if executable is None:
        raise click.ClickException("cannot find the st2 executable; pass --st2 /absolute/path/to/st2")
    return UnitSettings(
        st2=executable,
        catalog=str(location.root),
        host=location.host,
        memory_max=memory_max,
        poll_interval=poll_interval,
    )


def _unit_options(function):
    function = click.option("--poll-interval", default=DEFAULT_POLL_INTERVAL, show_default=True,
                            help="OnCalendar= expression for the usage poll timer.")(function)
    function = click.option("--memory-max", default=DEFAULT_MEMORY_MAX, show_default=True,
                            help="MemoryMax= of the supervisor unit.")(function)
    function = click.option("--st2", "st2_path", default=None,
                            help="Absolute path of the st2 executable the units run (default: this one).")(function)
    return function


@click.group()
def service() -> None:
    """The systemd user units: st2.service, st2-ding@, the usage poll timer, st2-web.service."""


@service.command()
@catalog_options(must_exist=False)
@_unit_options
@click.option("--unit-dir", type=click.Path(path_type=Path), default=None,
              help="Where to write the units (default ${XDG_CONFIG_HOME:-~/.config}/systemd/user).")
@click.option("--web", is_flag=True, help="Also install st2-web.service (`st2 web` on loopback).")
@click.option("--enable", is_flag=True, help="Then run systemctl --user daemon-reload and enable --now st2.service st2-usage-poll.timer (and st2-web.service with --web).")
def install(location, st2_path, memory_max, poll_interval, unit_dir, web, enable) -> None:
    """Render every unit for this catalog and host and write it where the user manager reads it."""
    from st2.service import install as installer

    directory = unit_dir if unit_dir is not None else installer.default_unit_directory()
    try:
        written = installer.install(_settings(location, st2_path, memory_max, poll_interval), directory, web)
    except UnitSettingError as error:
        raise click.ClickException(str(error)) from error
    for unit in written:
        click.echo(f"{'wrote' if unit.changed else 'unchanged'} {unit.path}")
    if enable:
        installer.enable(installer.wanted(web))
        click.echo("enabled " + " ".join(installer.wanted(web)))
    else:
        click.echo("next: systemctl --user daemon-reload && systemctl --user enable --now "
                   + " ".join(installer.wanted(web)))


@service.command()
@catalog_options(must_exist=False)
@_unit_options
@click.argument("unit")
def render(location, st2_path, memory_max, poll_interval, unit) -> None:
    """Print one rendered unit (exactly the bytes `install` writes) to stdout."""
    from st2.service.units import render_all

    try:
        rendered = render_all(_settings(location, st2_path, memory_max, poll_interval))
    except UnitSettingError as error:
        raise click.ClickException(str(error)) from error
    if unit not in rendered:
        raise click.ClickException(f"no unit {unit!r}; shipped: {', '.join(rendered)}")
    click.echo(rendered[unit], nl=False)
