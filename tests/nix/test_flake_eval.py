"""checks/flake-eval passes on the flake as shipped and fails on each mutation of a temp copy.

The flake is evaluated offline against tests/nix/stub-nixpkgs (no nixpkgs is reachable here);
each mutation below is a way the flake could silently stop delivering what it promises.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nix_support import REPO, copy_source, require_nix

pytestmark = pytest.mark.process

SCRIPT = REPO / "checks" / "flake-eval"


@pytest.fixture(scope="module", autouse=True)
def nix_installed() -> None:
    require_nix()


def run_check(flake: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--flake", str(flake)], capture_output=True, text=True, timeout=300)


def mutated(tmp_path: Path, name: str, old: str, new: str) -> Path:
    source = copy_source(tmp_path / "flake")
    path = source / name
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {name}: the mutation would be ambiguous"
    path.write_text(text.replace(old, new))
    return source


def test_the_shipped_flake_evaluates_with_every_expected_output(tmp_path: Path) -> None:
    result = run_check(copy_source(tmp_path / "flake"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == "flake-eval: the flake evaluates with the expected outputs; both modules install the shipped units\n"


MUTATIONS = {
    "package-renamed": (
        "flake.nix",
        "        default = st2;\n      });\n\n      # nix run .#st2 -- up",
        "        main = st2;\n      });\n\n      # nix run .#st2 -- up",
        "packages.x86_64-linux has ['main', 'st2'], expected ['default', 'st2']",
    ),
    "check-dropped": (
        "nix/checks.nix",
        '  units-verify = inSource "units-verify" [ pkgs.python3 pkgs.systemd ] \'\'\n    python3 checks/units-verify\n  \'\';\n',
        "",
        "checks.x86_64-linux has ['extension-smoke', 'fixtures', 'pytest'], expected ['extension-smoke', 'fixtures', 'pytest', 'units-verify']",
    ),
    "module-output-renamed": (
        "flake.nix",
        "homeManagerModules = rec {",
        "homeModules = rec {",
        "outputs are ['apps', 'checks', 'devShells', 'homeModules', 'nixosModules', 'packages']",
    ),
    "app-points-elsewhere": (
        "flake.nix",
        '/bin/st2";',
        '/bin/st2-cli";',
        "apps.x86_64-linux run",
    ),
    "misspelt-package": (
        "nix/package.nix",
        "(lib.makeBinPath [ pkgs.tmux ])",
        "(lib.makeBinPath [ pkgs.tmux-terminal ])",
        "attribute 'tmux-terminal' missing",
    ),
    "dependency-the-package-set-lacks": (
        "pyproject.toml",
        '    "click>=8.1",\n',
        '    "click>=8.1",\n    "requests>=2.31",\n',
        "the Python package set has no requests",
    ),
    "module-option-renamed": (
        "nix/module-options.nix",
        "  memoryMax = lib.mkOption {",
        "  memoryLimit = lib.mkOption {",
        "attribute 'memoryMax' missing",
    ),
    "module-ignores-enable": (
        "nix/nixos-module.nix",
        "config = lib.mkIf cfg.enable {",
        "config = lib.mkIf true {",
        "nixosModules.st2 disabled sets",
    ),
    "unknown-builder-argument": (
        "nix/package.nix",
        "  doCheck = false;",
        "  doCheck = false;\n  checkPhase = \"true\";",
        "got unknown argument(s) [\"checkPhase\"]",
    ),
    "lock-pins-a-branch": (
        "flake.lock",
        '"rev": "b2a3852bd078e68dd2b3dfa8c00c67af1f0a7d20",',
        '"ref": "nixos-25.05",',
        "not a full GitHub revision",
    ),
    "lock-does-not-match-the-input": (
        "flake.nix",
        'inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.05";',
        'inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";',
        "the lock is stale",
    ),
    "parse-error": (
        "nix/units.nix",
        "builtins.listToAttrs (",
        "builtins.listToAttrs ((",
        "a .nix file does not parse",
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_mutated_flake_fails_the_check(tmp_path: Path, mutation: str) -> None:
    name, old, new, finding = MUTATIONS[mutation]
    result = run_check(mutated(tmp_path, name, old, new))
    assert result.returncode == 1, result.stdout
    assert finding in result.stderr
    assert result.stdout == ""


def test_the_extension_smoke_becomes_an_expected_check_when_an_extension_exists(tmp_path: Path) -> None:
    source = copy_source(tmp_path / "flake")
    (source / "hooks").mkdir(exist_ok=True)
    (source / "hooks" / "pi-channel.ts").write_text("export default function (pi: unknown) {}\n")
    result = run_check(source)
    # The flake adds checks.<system>.extension-smoke, and the expected set grows with it.
    assert result.returncode == 0, result.stderr
    shutil.rmtree(source / "hooks")
    dropped = mutated(tmp_path / "second", "nix/checks.nix", "// lib.optionalAttrs hasExtensions {", "// lib.optionalAttrs false {")
    (dropped / "hooks").mkdir(exist_ok=True)
    (dropped / "hooks" / "omp-channel.ts").write_text("export default function (pi: unknown) {}\n")
    result = run_check(dropped)
    assert result.returncode == 1
    assert "expected ['extension-smoke', 'fixtures', 'pytest', 'units-verify']" in result.stderr
