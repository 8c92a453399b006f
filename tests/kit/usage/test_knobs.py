"""The DELEGATION_KIT_* knob table, the knob file grammar and the path derivation."""

from __future__ import annotations

import pytest

from st2.kit.usage.knobs import TABLE, KnobError, parse_knob_file, resolve, usage_paths


def test_names_and_defaults_are_the_kits():
    assert {name: knob.default for name, knob in TABLE.items()} == {
        "DELEGATION_KIT_USAGE_FILE": "",
        "DELEGATION_KIT_CRED_FILE": "",
        "DELEGATION_KIT_ACCOUNT_CONFIG": "",
        "DELEGATION_KIT_USAGE_ENDPOINT": "https://api.anthropic.com/api/oauth/usage",
        "DELEGATION_KIT_PAUSE_PCT": "80",
        "DELEGATION_KIT_PAUSE_PCT_7D": "95",
        "DELEGATION_KIT_STALE_AGE": "600",
        "DELEGATION_KIT_LOGIN_WINDOW": "600",
        "DELEGATION_KIT_LOGIN_SETTLE": "90",
        "DELEGATION_KIT_REFRESH_CMD": (),
        "DELEGATION_KIT_REFRESH_MIN_AGE": "60",
        "DELEGATION_KIT_USAGE_HISTORY": "",
        "DELEGATION_KIT_FAN_WIDTH": "2",
        "DELEGATION_KIT_AGENT_DIR": ".claude/agents",
        "DELEGATION_KIT_GATE_FILES": ("${GATE_SDK_GATES_DIR}/check-*.sh", "${GATE_SDK_GATES_DIR}/check-*.gate"),
        "DELEGATION_KIT_META_PATHS": ("${GATE_SDK_GATES_DIR}/", "${GATE_SDK_WORKFLOW_DIR:-.workflow}/", ".claude/"),
        "DELEGATION_KIT_STOP_LOG": "${GATE_SDK_WORKFLOW_DIR:-.workflow}/subagent-stop-liveness.log",
        "DELEGATION_KIT_LIVENESS_CMD": (),
        "DELEGATION_KIT_READONLY_TYPES": (),
        "DELEGATION_KIT_MUTATING_TYPES": (),
        "DELEGATION_KIT_REQUIRE_TIER": "off",
        "DELEGATION_KIT_TIER_CLASSES": ("judgment", "routing", "mechanical"),
        "DELEGATION_KIT_TIER_MODEL": (),
        "DELEGATION_KIT_FOREIGN_TIER_MODEL": (),
        "DELEGATION_KIT_FOREIGN_HARNESS": (),
        "DELEGATION_KIT_SESSIONS_DIR": "",
        "DELEGATION_KIT_STATUSLINE_INBOXES": (),
        "DELEGATION_KIT_FOREIGN_ADAPTERS": (),
        "DELEGATION_KIT_FOREIGN_TIMEOUT": "1800",
        "DELEGATION_KIT_FOREIGN_RESUME": (),
        "DELEGATION_KIT_FOREIGN_SESSION_MARKER": (),
        "DELEGATION_KIT_FOREIGN_USAGE": (),
        "DELEGATION_KIT_FOREIGN_USAGE_CMD": (),
        "DELEGATION_KIT_FOREIGN_PAUSE_PCT": "${DELEGATION_KIT_PAUSE_PCT}",
        "DELEGATION_KIT_FOREIGN_PAUSE_PCT_LONG": "${DELEGATION_KIT_PAUSE_PCT_7D}",
    }


def base_environ(tmp_path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"), **extra}


def test_defaults_fill_when_nothing_is_set(tmp_path):
    knobs = resolve(base_environ(tmp_path))
    assert knobs.scalar("DELEGATION_KIT_PAUSE_PCT") == "80"
    assert knobs.indexed("DELEGATION_KIT_REFRESH_CMD") == ()
    assert knobs.source is None


def test_the_default_knob_file_lives_in_the_gates_dir_of_the_working_directory_s_repository(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "checks").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "checks" / "delegation-config.knobs").write_text("DELEGATION_KIT_PAUSE_PCT = 70\n")
    assert resolve(base_environ(tmp_path), cwd=str(tmp_path / "sub")).scalar("DELEGATION_KIT_PAUSE_PCT") == "70"
    moved = base_environ(tmp_path, GATE_SDK_GATES_DIR="gates")
    assert resolve(moved, cwd=str(tmp_path / "sub")).scalar("DELEGATION_KIT_PAUSE_PCT") == "80"


def test_environment_wins_over_the_file_for_a_scalar(tmp_path):
    knob_file = tmp_path / "k.knobs"
    knob_file.write_text("DELEGATION_KIT_PAUSE_PCT = 70\nDELEGATION_KIT_STALE_AGE = 300\n")
    knobs = resolve(base_environ(tmp_path, DELEGATION_KIT_KNOB_FILE=str(knob_file), DELEGATION_KIT_PAUSE_PCT="85.5"))
    assert knobs.scalar("DELEGATION_KIT_PAUSE_PCT") == "85.5"
    assert knobs.scalar("DELEGATION_KIT_STALE_AGE") == "300"


def test_an_indexed_knob_comes_from_the_file_only_one_element_per_line(tmp_path):
    knob_file = tmp_path / "k.knobs"
    knob_file.write_text(
        "# the poller, spawned with no shell\n"
        "DELEGATION_KIT_REFRESH_CMD[] = st2\n"
        "DELEGATION_KIT_REFRESH_CMD[] = usage\n"
        'DELEGATION_KIT_REFRESH_CMD[] = " poll with = signs "\n'
    )
    knobs = resolve(base_environ(tmp_path, DELEGATION_KIT_KNOB_FILE=str(knob_file), DELEGATION_KIT_REFRESH_CMD="ignored"))
    assert knobs.indexed("DELEGATION_KIT_REFRESH_CMD") == ("st2", "usage", " poll with = signs ")


def test_a_malformed_file_is_refused_with_every_finding(tmp_path):
    text = (
        "DELEGATION_KIT_PAUSE_PCT = eighty\n"
        "DELEGATION_KIT_NOT_A_KNOB = 1\n"
        "DELEGATION_KIT_REFRESH_CMD = st2 usage poll\n"
        "DELEGATION_KIT_PAUSE_PCT_7D[] = 90\n"
        "just some words\n"
        "DELEGATION_KIT_FAN_WIDTH = 0\n"
        "DELEGATION_KIT_LOGIN_SETTLE = -5\n"
        "DELEGATION_KIT_STALE_AGE = 600\n"
    )
    scalars, arrays, findings = parse_knob_file(text, "k.knobs")
    assert findings == [
        "k.knobs:1: DELEGATION_KIT_PAUSE_PCT='eighty' must be a number (a percentage such as 80 or 92.5)",
        "k.knobs:2: DELEGATION_KIT_NOT_A_KNOB is not a knob st2 reads",
        "k.knobs:3: DELEGATION_KIT_REFRESH_CMD is indexed; write one 'DELEGATION_KIT_REFRESH_CMD[] = <element>' line per element",
        "k.knobs:4: DELEGATION_KIT_PAUSE_PCT_7D is a scalar; write 'DELEGATION_KIT_PAUSE_PCT_7D = <value>'",
        "k.knobs:5: not a 'NAME = value' or 'NAME[] = element' line: 'just some words'",
        "k.knobs:6: DELEGATION_KIT_FAN_WIDTH='0' must be a positive integer",
        "k.knobs:7: DELEGATION_KIT_LOGIN_SETTLE='-5' must be a non-negative integer",
    ]
    assert scalars == {"DELEGATION_KIT_STALE_AGE": "600"} and arrays == {}
    knob_file = tmp_path / "k.knobs"
    knob_file.write_text(text)
    with pytest.raises(KnobError) as error:
        resolve(base_environ(tmp_path, DELEGATION_KIT_KNOB_FILE=str(knob_file)))
    assert len(error.value.findings) == 7


def test_a_well_formed_file_has_no_findings():
    assert parse_knob_file("\n# c\nDELEGATION_KIT_PAUSE_PCT=75\n  DELEGATION_KIT_FAN_WIDTH = 3  \n", "k")[2] == []


def test_a_named_knob_file_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(KnobError) as error:
        resolve(base_environ(tmp_path, DELEGATION_KIT_KNOB_FILE=str(tmp_path / "absent.knobs")))
    assert error.value.findings == [
        f"DELEGATION_KIT_KNOB_FILE={tmp_path / 'absent.knobs'}: no such file (unset it to use the default location)"
    ]


def test_an_invalid_environment_override_is_a_finding(tmp_path):
    with pytest.raises(KnobError) as error:
        resolve(base_environ(tmp_path, DELEGATION_KIT_STALE_AGE="ten minutes"))
    assert error.value.findings == ["environment DELEGATION_KIT_STALE_AGE='ten minutes' must be a non-negative integer"]


def test_reading_a_name_the_table_does_not_carry_is_an_error(tmp_path):
    knobs = resolve(base_environ(tmp_path))
    with pytest.raises(KeyError):
        knobs.scalar("DELEGATION_KIT_NOT_A_KNOB")
    with pytest.raises(TypeError):
        knobs.scalar("DELEGATION_KIT_REFRESH_CMD")


def test_paths_derive_from_the_claude_config_home(tmp_path):
    environ = base_environ(tmp_path, CLAUDE_CONFIG_DIR=str(tmp_path / "claude-home"))
    paths = usage_paths(resolve(environ), environ)
    assert (paths.usage_file, paths.cred_file, paths.account_config) == (
        str(tmp_path / "claude-home" / "usage.txt"),
        str(tmp_path / "claude-home" / ".credentials.json"),
        str(tmp_path / ".claude.json"),
    )


def test_paths_default_to_home_dot_claude(tmp_path):
    environ = base_environ(tmp_path, CLAUDE_CONFIG_DIR="")
    paths = usage_paths(resolve(environ), environ)
    assert (paths.usage_file, paths.cred_file) == (
        str(tmp_path / ".claude" / "usage.txt"),
        str(tmp_path / ".claude" / ".credentials.json"),
    )


def test_a_set_usage_file_moves_the_derived_credentials_beside_it(tmp_path):
    environ = base_environ(tmp_path, DELEGATION_KIT_USAGE_FILE=str(tmp_path / "elsewhere" / "u.txt"))
    paths = usage_paths(resolve(environ), environ)
    assert paths.cred_file == str(tmp_path / "elsewhere" / ".credentials.json")
    environ["DELEGATION_KIT_CRED_FILE"] = str(tmp_path / "c.json")
    environ["DELEGATION_KIT_ACCOUNT_CONFIG"] = str(tmp_path / "a.json")
    paths = usage_paths(resolve(environ), environ)
    assert (paths.cred_file, paths.account_config) == (str(tmp_path / "c.json"), str(tmp_path / "a.json"))


def test_a_malformed_knob_file_makes_the_verdict_stale_with_every_finding_on_stderr(usage):
    import io

    from st2.kit.usage.verdict import verdict

    usage.snapshot(pct="95")
    usage.knobs("DELEGATION_KIT_PAUSE_PCT = high", "DELEGATION_KIT_BOGUS = 1")
    stderr = io.StringIO()
    line, status = verdict([], now=usage.now, stderr=stderr)
    assert status == 2
    assert line == (
        "usage-verdict: malformed knob configuration (2 finding(s) on stderr) width=2"
        " -> STALE (never blocks delegation — re-read or refresh before trusting the number)"
    )
    assert stderr.getvalue() == (
        f"usage-verdict: {usage.knob_file}:1: DELEGATION_KIT_PAUSE_PCT='high' must be a number (a percentage such as 80 or 92.5)\n"
        f"usage-verdict: {usage.knob_file}:2: DELEGATION_KIT_BOGUS is not a knob st2 reads\n"
    )


def test_a_dash_led_positional_is_refused_and_the_escape_takes_it(usage, tmp_path):
    import io

    from st2.kit.usage.verdict import verdict

    stderr = io.StringIO()
    assert verdict(["--help"], now=usage.now, stderr=stderr) == ("", 2)
    assert stderr.getvalue().startswith(
        'usage-verdict: unrecognized option: --help — a path beginning with "-" is passed after a "--" separator\n'
        "usage: st2 usage verdict [--] [usage-file [credentials-file]]\n"
    )
    line, status = verdict(["--", "--help"], now=usage.now, stderr=io.StringIO())
    assert status == 2 and line.startswith("usage-verdict: cannot read --help width=2 -> STALE")
    assert verdict(["a", "b", "c"], now=usage.now, stderr=io.StringIO()) == ("", 2)


@pytest.mark.process
def test_the_cli_refusal_prints_nothing_on_stdout(usage_process):
    result = usage_process.run("usage", "verdict", "-x")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("usage-verdict: unrecognized option: -x")
