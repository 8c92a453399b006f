"""Authoring writes only names discovery accepts: `st2 agent new` and `st2 agent publish` refuse a
host or identity outside the one name rule (st2/catalog/names.py) with one line, the name
escaped, before anything is written, so a refused attempt never leaves a catalog that stops
validating (which would refuse every unrelated publication after it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process

HOSTILE = ["-rf", "x y", "two\nlines", "esc\x1b]0;pwned\x07", "caf\u00e9", ".hidden", "~syncthing~seat.tmp",
           "seat.sync-conflict-20260101-120000-ABCDEFG", "bidi\u202eevil", "zero\u200bwidth"]


def tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if ".st2" not in path.relative_to(root).parts)


def assert_one_escaped_line(result, verb: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    line = result.stderr
    assert line.count("\n") == 1 and line.endswith("\n"), line
    assert line.startswith(f"st2 agent {verb}: [invalid-name] `"), line
    assert all(c.isprintable() for c in line[:-1]), repr(line)
    assert "Traceback" not in line


@pytest.mark.parametrize("identity", HOSTILE)
def test_agent_new_refuses_an_identity_discovery_refuses_and_writes_nothing(catalog: Path, identity: str) -> None:
    result = run_st2("agent", "new", "--host", "h", "--harness", "shell", "--", identity, env=st2_env(catalog))
    assert_one_escaped_line(result, "new")
    assert "identity name" in result.stderr
    assert tree(catalog) == ["agents"]


@pytest.mark.parametrize("host", ["-rf", "x y", "esc\x1b[2J", "a.b", ".hidden"])
def test_agent_new_refuses_a_host_discovery_refuses_and_writes_nothing(catalog: Path, host: str) -> None:
    result = run_st2("agent", "new", "--host", host, "--harness", "shell", "worker", env=st2_env(catalog))
    assert_one_escaped_line(result, "new")
    assert "host name" in result.stderr
    assert tree(catalog) == ["agents"]


def kdl_string(value: str) -> str:
    """``value`` as a KDL string, every non-printable character as a ``\\u{…}`` escape."""
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{{{ord(c):x}}}" for c in value) + '"'


def publish(catalog: Path, candidate: Path):
    digest = hashlib.sha256(candidate.read_bytes()).hexdigest()
    return run_st2("agent", "publish", "--catalog", str(catalog), "--spec", str(candidate),
                   "--input-sha256", digest, "--expect-absent", env=st2_env(catalog))


@pytest.mark.parametrize("identity", HOSTILE)
def test_agent_publish_refuses_an_identity_discovery_refuses_and_an_unrelated_publish_still_lands(
        catalog: Path, tmp_path: Path, identity: str) -> None:
    candidate = tmp_path / "candidate.kdl"
    candidate.write_text(f'agent {kdl_string(identity)} {{\n    host "h"\n    argv "sh"\n}}\n')
    assert_one_escaped_line(publish(catalog, candidate), "publish")
    assert tree(catalog) == ["agents"]
    unrelated = tmp_path / "unrelated.kdl"
    unrelated.write_text('agent "worker" {\n    host "h"\n    argv "sh"\n}\n')
    landed = publish(catalog, unrelated)
    assert landed.returncode == 0, landed.stderr
    validated = run_st2("validate", "--catalog", str(catalog), "--host", "h", env=st2_env(catalog))
    assert validated.returncode == 0, validated.stdout + validated.stderr


@pytest.mark.parametrize("host", ["-rf", "x y", "nl\n", "a.b", "~syncthing~h.tmp"])
def test_agent_publish_refuses_a_host_discovery_refuses(catalog: Path, tmp_path: Path, host: str) -> None:
    candidate = tmp_path / "candidate.kdl"
    candidate.write_text(f'agent "worker" {{\n    host {kdl_string(host)}\n    argv "sh"\n}}\n')
    assert_one_escaped_line(publish(catalog, candidate), "publish")
    assert "host name" in publish(catalog, candidate).stderr
    assert tree(catalog) == ["agents"]
