"""One source of truth: the units both flake modules install are byte-identical to what
`st2 service install` writes for the same settings, and both renderers refuse the same values."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nix_support import NIX, copy_source, nix_eval_json, require_nix
from st2.service.units import UnitSettingError, UnitSettings, render_all
from support import run_st2

from st2.service.install import WEB_UNIT

pytestmark = pytest.mark.process

SETTINGS = {
    "everything": {"catalog": "/srv/st2/catalog", "host": "box1", "memoryMax": "1G", "pollInterval": "*:0/10",
                   "web": True},
    "defaults": {},
}
SELECT = {
    "nixosModules": 'c: builtins.mapAttrs (name: unit: unit.text) c.systemd.user.units',
    "homeManagerModules": 'c: builtins.mapAttrs (name: file: file.text) c.xdg.configFile',
}


@pytest.fixture(scope="module")
def flake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_nix()
    return copy_source(tmp_path_factory.mktemp("flake"))


def module_units(flake: Path, output: str, settings: dict, system: str = "x86_64-linux") -> dict[str, str]:
    nix_settings = "{ enable = true; " + " ".join(f"{key} = {json.dumps(value)};" for key, value in settings.items()) + " }"
    harness = flake / "tests" / "nix" / "eval-module.nix"
    return nix_eval_json(flake, f"{output}.st2", f"m: ({SELECT[output]}) (import {harness} {{ module = m; settings = {nix_settings}; system = \"{system}\"; }})")


def package_st2(flake: Path, system: str = "x86_64-linux") -> str:
    return nix_eval_json(flake, "packages", f'p: p."{system}".st2.outPath') + "/bin/st2"


def python_units(st2: str, settings: dict) -> dict[str, str]:
    """What `st2 service install` writes for the settings (``--web`` when ``web``)."""
    rendered = render_all(UnitSettings(
        st2=st2,
        catalog=settings.get("catalog"),
        host=settings.get("host"),
        memory_max=settings.get("memoryMax", "512M"),
        poll_interval=settings.get("pollInterval", "*:0/5"),
    ))
    return {name: text for name, text in rendered.items() if settings.get("web") or name != WEB_UNIT}


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_the_nixos_module_installs_exactly_what_st2_service_install_writes(flake: Path, case: str) -> None:
    expected = python_units(package_st2(flake), SETTINGS[case])
    assert module_units(flake, "nixosModules", SETTINGS[case]) == expected


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_the_home_manager_module_writes_exactly_what_st2_service_install_writes(flake: Path, case: str) -> None:
    expected = python_units(package_st2(flake), SETTINGS[case])
    installed = module_units(flake, "homeManagerModules", SETTINGS[case])
    assert {name: installed[f"systemd/user/{name}"] for name in expected} == expected
    # The .wants links carry the same text as the unit they enable.
    assert installed["systemd/user/default.target.wants/st2.service"] == expected["st2.service"]
    assert installed["systemd/user/timers.target.wants/st2-usage-poll.timer"] == expected["st2-usage-poll.timer"]
    if SETTINGS[case].get("web"):
        assert installed["systemd/user/default.target.wants/st2-web.service"] == expected["st2-web.service"]
    else:
        assert "systemd/user/default.target.wants/st2-web.service" not in installed


def test_the_cli_and_the_module_agree_through_the_real_command(flake: Path, tmp_path: Path) -> None:
    st2 = package_st2(flake)
    settings = SETTINGS["everything"]
    result = run_st2("service", "install", "--st2", st2, "--catalog", settings["catalog"], "--host", settings["host"],
                     "--memory-max", settings["memoryMax"], "--poll-interval", settings["pollInterval"],
                     "--unit-dir", str(tmp_path / "units"), "--web")
    assert result.returncode == 0, result.stderr
    installed = module_units(flake, "nixosModules", settings)
    assert {path.name: path.read_text() for path in (tmp_path / "units").iterdir()} == installed


def test_without_the_usage_poll_the_timer_is_not_installed(flake: Path) -> None:
    installed = module_units(flake, "nixosModules", {"usagePoll": False})
    assert sorted(installed) == ["st2-ding@.service", "st2.service"]


@pytest.mark.parametrize(
    ("option", "value"),
    [("host", "-flag"), ("catalog", "/with space"), ("memoryMax", "lots"), ("catalog", "/percent%i")],
)
def test_both_renderers_refuse_the_same_values(flake: Path, option: str, value: str) -> None:
    python_name = {"host": "host", "catalog": "catalog", "memoryMax": "memory_max"}[option]
    with pytest.raises(UnitSettingError):
        render_all(UnitSettings(st2="/nix/store/x-st2/bin/st2", **{python_name: value}))
    harness = flake / "tests" / "nix" / "eval-module.nix"
    command = [*NIX, "eval", "--json", "--impure", f"path:{flake}#nixosModules.st2",
               "--override-input", "nixpkgs", f"path:{flake}/tests/nix/stub-nixpkgs", "--no-write-lock-file",
               "--apply", f"m: ({SELECT['nixosModules']}) (import {harness} {{ module = m; settings = {{ enable = true; {option} = {json.dumps(value)}; }}; }})"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "must match" in result.stderr and "(no spaces, quotes, % or $)" in result.stderr
