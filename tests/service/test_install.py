"""`st2 service install|render` through the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from st2.service.units import UnitSettings, render_all
from support import run_st2, st2_env

pytestmark = pytest.mark.process

EXECUTABLE = str(Path(sys.executable).parent / "st2")


def test_install_writes_exactly_the_rendered_units(tmp_path: Path, catalog: Path) -> None:
    unit_dir = tmp_path / "config" / "systemd" / "user"
    result = run_st2("service", "install", "--catalog", str(catalog), "--host", "box1",
                     "--st2", "/opt/st2/bin/st2", "--unit-dir", str(unit_dir))
    assert result.returncode == 0, result.stderr
    expected = render_all(UnitSettings(st2="/opt/st2/bin/st2", catalog=str(catalog), host="box1"))
    web = expected.pop("st2-web.service")                  # only with --web
    assert sorted(path.name for path in unit_dir.iterdir()) == sorted(expected)
    for name, text in expected.items():
        assert (unit_dir / name).read_text() == text
        assert f"wrote {unit_dir / name}" in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1].endswith("enable --now st2.service st2-usage-poll.timer")
    with_web = run_st2("service", "install", "--catalog", str(catalog), "--host", "box1",
                       "--st2", "/opt/st2/bin/st2", "--unit-dir", str(unit_dir), "--web")
    assert with_web.returncode == 0, with_web.stderr
    assert (unit_dir / "st2-web.service").read_text() == web
    assert "ExecStart=/opt/st2/bin/st2 --catalog " + str(catalog) + " --host box1 web" in web.splitlines()
    assert with_web.stdout.splitlines()[-1].endswith("enable --now st2.service st2-usage-poll.timer st2-web.service")


def test_a_second_install_changes_nothing(tmp_path: Path, catalog: Path) -> None:
    arguments = ("service", "install", "--catalog", str(catalog), "--host", "box1", "--unit-dir", str(tmp_path))
    assert run_st2(*arguments).returncode == 0
    again = run_st2(*arguments)
    assert again.returncode == 0
    assert all(line.startswith(("unchanged ", "next: ")) for line in again.stdout.splitlines())


def test_install_defaults_to_the_xdg_config_unit_directory_and_this_st2(tmp_path: Path, catalog: Path) -> None:
    result = run_st2("service", "install", "--host", "box1",
                     env=st2_env(catalog, XDG_CONFIG_HOME=str(tmp_path / "xdg")))
    assert result.returncode == 0, result.stderr
    unit = (tmp_path / "xdg" / "systemd" / "user" / "st2.service").read_text()
    assert f"ExecStart={EXECUTABLE} --catalog {catalog} --host box1 up" in unit.splitlines()


def test_a_refused_value_writes_nothing(tmp_path: Path, catalog: Path) -> None:
    result = run_st2("service", "install", "--catalog", str(catalog), "--memory-max", "lots",
                     "--unit-dir", str(tmp_path / "units"))
    assert result.returncode == 1
    assert "memory maximum 'lots'" in result.stderr
    assert not (tmp_path / "units").exists()


def test_render_prints_the_bytes_install_writes(tmp_path: Path, catalog: Path) -> None:
    common = ("--catalog", str(catalog), "--host", "box1", "--st2", "/opt/st2/bin/st2")
    assert run_st2("service", "install", *common, "--unit-dir", str(tmp_path)).returncode == 0
    shown = run_st2("service", "render", *common, "st2-usage-poll.timer")
    assert shown.returncode == 0
    assert shown.stdout == (tmp_path / "st2-usage-poll.timer").read_text()


def test_render_names_the_shipped_units_for_an_unknown_one(catalog: Path) -> None:
    shown = run_st2("service", "render", "--catalog", str(catalog), "nope.service")
    assert shown.returncode == 1
    assert "no unit 'nope.service'; shipped: st2-ding@.service" in shown.stderr
