"""The pinned manifest and the installer (a stand-in npm; no registry needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harnesses import REPO, Harness, InstallFailed, builds, install, is_installed, load_manifest


def test_the_manifest_pins_the_versions_lab_md_recorded() -> None:
    pins = {name: (h.package, h.version, h.needs, h.measured) for name, h in load_manifest().items()}
    # The measured builds are earlier builds users run (pi 0.84.2 and omp 18.0.9 are not on npm).
    assert pins == {
        "claude-code": ("@anthropic-ai/claude-code", "2.1.197", (), ("2.1.250",)),
        "codex": ("@openai/codex", "0.171.0", (), ("0.151.0",)),
        "opencode": ("opencode-ai", "1.18.33", (), ("1.18.25",)),
        "pi": ("@mariozechner/pi-coding-agent", "0.73.1", (), ()),
        "omp": ("@oh-my-pi/pi-coding-agent", "18.2.3", ("bun@1.4.5",), ()),
    }


def test_each_measured_build_has_a_prefix_of_its_own(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ST2_LAB_CACHE", str(tmp_path))
    codex = load_manifest()["codex"]
    assert [(build.version, build.prefix.name) for build in builds(codex)] == [
        ("0.171.0", "codex-0.171.0"), ("0.151.0", "codex-0.151.0")]
    with pytest.raises(ValueError, match="neither the pin nor a measured build"):
        codex.build("0.160.0")
    manifest = tmp_path / "harnesses.toml"
    manifest.write_text('[x]\npackage = "x"\nversion = "1.2.3"\nbin = "x"\nmeasured = ["1.2"]\n')
    with pytest.raises(ValueError, match="not an exact"):
        load_manifest(manifest)


def test_a_version_range_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "harnesses.toml"
    manifest.write_text('[x]\npackage = "x"\nversion = "^1.2.3"\nbin = "x"\n')
    with pytest.raises(ValueError, match="not an exact"):
        load_manifest(manifest)


def fake_harness(version: str = "1.2.3") -> Harness:
    return Harness(name="thing", package="@scope/thing", version=version, bin="thing", needs=(), run="")


def plant(prefix: Path, package: str, version: str, bin_name: str) -> None:
    (prefix / "node_modules" / package).mkdir(parents=True)
    (prefix / "node_modules" / package / "package.json").write_text(json.dumps({"version": version}))
    (prefix / "node_modules" / ".bin").mkdir(exist_ok=True)
    (prefix / "node_modules" / ".bin" / bin_name).write_text("")


def test_installed_only_at_the_pinned_version(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ST2_LAB_CACHE", str(tmp_path))
    harness = fake_harness()
    assert not is_installed(harness)
    plant(harness.prefix, harness.package, "1.2.4", "thing")
    assert not is_installed(harness)
    (harness.prefix / "node_modules" / harness.package / "package.json").write_text('{"version": "1.2.3"}')
    assert is_installed(harness)


def stand_in_npm(directory: Path, exit_status: int) -> Path:
    """An `npm` that logs its argv and fails (or plants the package and succeeds)."""
    directory.mkdir()
    script = directory / "npm"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{directory}/calls"\n'
        + ("echo 'npm error 404 Not Found - GET https://registry.npmjs.org/@scope%2fthing' >&2\nexit 1\n"
           if exit_status else
           'prefix="$3"; mkdir -p "$prefix/node_modules/@scope/thing" "$prefix/node_modules/.bin"\n'
           'echo \'{"version": "1.2.3"}\' > "$prefix/node_modules/@scope/thing/package.json"\n'
           'touch "$prefix/node_modules/.bin/thing"\n'))
    script.chmod(0o755)
    return directory


@pytest.mark.process
def test_npm_failure_is_recorded_and_reported_without_rerunning_npm(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ST2_LAB_CACHE", str(tmp_path / "cache"))
    npm = stand_in_npm(tmp_path / "bin", exit_status=1)
    monkeypatch.setenv("PATH", f"{npm}{os.pathsep}{os.environ['PATH']}")
    harness = fake_harness()
    with pytest.raises(InstallFailed, match="404 Not Found"):
        install(harness)
    assert "@scope/thing@1.2.3" in harness.failure_record.read_text()
    with pytest.raises(InstallFailed, match="404 Not Found"):
        install(harness, retry_recorded_failure=False)
    assert len((npm / "calls").read_text().splitlines()) == 1


@pytest.mark.process
def test_install_runs_npm_once_then_finds_the_package(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ST2_LAB_CACHE", str(tmp_path / "cache"))
    npm = stand_in_npm(tmp_path / "bin", exit_status=0)
    monkeypatch.setenv("PATH", f"{npm}{os.pathsep}{os.environ['PATH']}")
    harness = fake_harness()
    assert install(harness) == harness.executable
    assert install(harness) == harness.executable
    calls = (npm / "calls").read_text().splitlines()
    assert calls == [f"install --prefix {harness.prefix} --save-exact --no-audit --no-fund --loglevel=error "
                     "--fetch-timeout=120000 --fetch-retries=1 @scope/thing@1.2.3"]


@pytest.mark.process
def test_setup_never_fails_the_run_and_says_so_when_npm_is_missing(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname"):
        (bin_dir / tool).symlink_to(subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip())
    result = subprocess.run([str(REPO / "tests" / "lab" / "setup")], capture_output=True, text=True, timeout=60,
                            env={"PATH": str(bin_dir), "ST2_LAB_CACHE": str(tmp_path / "cache"),
                                 "PYTHON": sys.executable})
    assert result.returncode == 0
    assert "npm is not on PATH; the lab tests will be skipped and say so" in result.stderr
