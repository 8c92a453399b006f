"""Helpers for the nix tier: the nix tools (installed by tests/nix/setup) and source copies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NIX = ["nix", "--extra-experimental-features", "nix-command flakes"]


def require_nix() -> None:
    """Fail (never skip) when nix is missing: `scripts/dev test` runs tests/nix/setup first."""
    if shutil.which("nix") is None or shutil.which("nix-instantiate") is None:
        pytest.fail("nix is not installed: run tests/nix/setup (installs Debian's nix-bin)")


def copy_source(target: Path) -> Path:
    """Copy the files the repository would commit (tracked + untracked, not ignored) to target."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in listed:
        if not name or not os.path.lexists(REPO / name):
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination, follow_symlinks=False)
    return target


def nix_eval_json(flake: Path, attribute: str, apply: str, impure: bool = True):
    """Evaluate ``path:<flake>#<attribute>`` with ``--apply`` under the stand-in nixpkgs (the
    copy's own tests/nix/stub-nixpkgs) and return the JSON value. ``flake`` must be a copy
    (:func:`copy_source`): evaluating the working tree would copy .venv into the store."""
    command = [*NIX, "eval", "--json", *(["--impure"] if impure else []), f"path:{flake}#{attribute}",
               "--override-input", "nixpkgs", f"path:{flake}/tests/nix/stub-nixpkgs", "--no-write-lock-file",
               "--option", "substituters", "", "--apply", apply]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
