"""The CLI surface a new user trips on, through the real entry point: `--version`, bare `st2`,
every verb's and sub-verb's `--help` (hot paths included), one message for a missing catalog."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process


def commands_of(help_text: str) -> list[str]:
    """The command names a click help page lists under ``Commands:``."""
    if "Commands:" not in help_text:
        return []
    section = help_text.split("Commands:", 1)[1]
    return [match.group(1) for match in re.finditer(r"^  ([a-z][a-z0-9-]*)", section, re.MULTILINE)]


def tree_snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(path.relative_to(root)), path.stat().st_size) for path in root.rglob("*"))


def test_version_prints_the_package_version() -> None:
    result = run_st2("--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"st2 \d+\.\d+\.\d+\S*\n", result.stdout)


def test_bare_st2_and_a_bare_group_print_their_help_and_exit_0() -> None:
    bare = run_st2()
    assert bare.returncode == 0 and bare.stdout.startswith("Usage: st2 [OPTIONS] COMMAND"), bare
    group = run_st2("message")
    assert group.returncode == 0 and group.stdout.startswith("Usage: st2 message"), group


def test_every_verb_and_subverb_help_exits_0_and_runs_nothing(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    (catalog / "agents").mkdir(parents=True)
    # A PAUSE snapshot: a budget-guard or verdict that ran instead of helping would exit 1/2.
    snapshot = tmp_path / "usage.txt"
    snapshot.write_text("five_hour_used_pct=99\n")
    env = st2_env(catalog, DELEGATION_KIT_USAGE_FILE=str(snapshot), XDG_STATE_HOME=str(tmp_path / "state"))
    before = tree_snapshot(tmp_path)
    top = run_st2("--help", env=env)
    assert top.returncode == 0, top.stderr
    verbs = commands_of(top.stdout)
    assert {"hook", "usage", "driver", "message", "up", "down"} <= set(verbs)
    checked = []
    for verb in verbs:
        page = run_st2(verb, "--help", env=env, input="")
        assert page.returncode == 0, (verb, page.stdout, page.stderr)
        assert page.stdout.strip(), verb
        checked.append(verb)
        for subverb in commands_of(page.stdout):
            sub = run_st2(verb, subverb, "--help", env=env, input="")
            assert sub.returncode == 0, (verb, subverb, sub.stdout, sub.stderr)
            assert sub.stdout.strip() and not sub.stderr, (verb, subverb, sub.stderr)
            checked.append(f"{verb} {subverb}")
    for hot in ("hook budget-guard", "hook dispatch-guard", "hook subagent-stop-liveness", "usage verdict",
                "usage trend", "usage poll", "driver claude-observe", "driver claude-statusline",
                "check producer-liveness"):
        assert hot in checked, hot
    assert tree_snapshot(tmp_path) == before  # nothing ran: no record, no sample, no state


def test_a_hot_path_help_after_other_words_still_helps_but_after_the_escape_it_is_a_path(tmp_path: Path) -> None:
    helped = run_st2("driver", "claude-observe", "--event", "Stop", "--help", input="")
    assert helped.returncode == 0 and helped.stdout.startswith("``st2 driver claude-observe"), helped
    # After `--` a dash-led word is the usage file, as the verdict's grammar says: it runs.
    escaped = run_st2("usage", "verdict", "--", "--help", env=st2_env(HOME="/nonexistent"))
    assert escaped.returncode == 2 and "usage-verdict" in escaped.stdout + escaped.stderr, escaped


@pytest.mark.parametrize("argv", [["ls"], ["agents"], ["down"], ["attach", "x"], ["message", "ls", "--as", "x"],
                                  ["status", "x"], ["record", "show", "x"], ["unpark", "h.x"], ["agent", "desired-state", "x", "running"]])
def test_a_missing_catalog_is_one_clear_line_and_a_non_zero_exit(tmp_path: Path, argv: list[str]) -> None:
    missing = tmp_path / "nowhere"
    result = run_st2(*argv, env=st2_env(missing))
    assert result.returncode == 1, (argv, result)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f"no catalog at {missing}" in lines[0], (argv, result.stderr)
    assert not missing.exists()


def test_an_existing_catalog_passes_the_missing_catalog_check(catalog: Path) -> None:
    result = run_st2("ls", env=st2_env(catalog))
    assert result.returncode == 0 and result.stderr == "", result


def test_attach_to_an_undeclared_seat_says_it_is_not_declared(catalog: Path) -> None:
    result = run_st2("attach", "ghost", "--host", "h", env=st2_env(catalog))
    assert result.returncode == 1
    assert result.stderr == f"st2 attach: no seat h.ghost is declared in {catalog} (`st2 ls` lists the declared seats)\n"


def test_attach_to_a_declared_seat_that_is_not_running_blames_st2_up(catalog: Path) -> None:
    seat = catalog / "agents" / "h" / "worker"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "worker" {\n    argv "sh" "-c" "true"\n}\n')
    result = run_st2("attach", "worker", "--host", "h", env=st2_env(catalog))
    assert result.returncode == 1 and "is `st2 up` running?" in result.stderr, result


def test_shell_completion_is_the_documented_click_completion() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert '_ST2_COMPLETE=bash_source st2' in readme
    result = run_st2(env=st2_env(_ST2_COMPLETE="bash_source"))
    assert result.returncode == 0 and "_st2_completion()" in result.stdout, result
    words = run_st2(env=st2_env(_ST2_COMPLETE="bash_complete", COMP_WORDS="st2 mess", COMP_CWORD="1"))
    assert "plain,message" in words.stdout.split(), words.stdout


def test_help_needs_no_catalog_and_no_home(tmp_path: Path) -> None:
    env = st2_env(tmp_path / "nowhere", HOME=str(tmp_path / "nohome"))
    env.pop("XDG_STATE_HOME", None)
    result = run_st2("agents", "--help", env=env)
    assert result.returncode == 0 and "[HOST.]IDENTITY" in result.stdout
    assert not os.path.exists(tmp_path / "nohome")
