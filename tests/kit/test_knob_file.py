"""The knob file's overlay and refusals, and the two knob documents (`st2 emit knob-roster`,
`st2 emit knob-values NAME`), through the real CLI under a hermetic environment."""

from __future__ import annotations

import pytest
from pathlib import Path

from kit_support import hermetic_environment, run_st2
from st2.kit import knobs

pytestmark = pytest.mark.process


def values(name: str, environ, cwd=None) -> tuple[int, str, str]:
    result = run_st2(["emit", "knob-values", name], environ, cwd=cwd)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


def test_the_local_overlay_wins_over_the_tracked_file_and_the_environment_over_both(sandbox: Path) -> None:
    tracked = sandbox / "delegation-config.knobs"
    tracked.write_text("DELEGATION_KIT_PAUSE_PCT = 70\nDELEGATION_KIT_FAN_WIDTH = 3\n"
                       "DELEGATION_KIT_READONLY_TYPES[] = reviewer\nDELEGATION_KIT_READONLY_TYPES[] = auditor\n")
    environ = hermetic_environment(sandbox)
    assert values("DELEGATION_KIT_PAUSE_PCT", environ) == (0, "70\n", "")
    (sandbox / "delegation-config.local.knobs").write_text("DELEGATION_KIT_PAUSE_PCT = 90\nDELEGATION_KIT_READONLY_TYPES[] = scout\n")
    assert values("DELEGATION_KIT_PAUSE_PCT", environ) == (0, "90\n", "")
    assert values("DELEGATION_KIT_FAN_WIDTH", environ) == (0, "3\n", "")  # the overlay names it not: tracked stands
    assert values("DELEGATION_KIT_READONLY_TYPES", environ) == (0, "scout\n", "")  # replaced whole
    assert values("DELEGATION_KIT_PAUSE_PCT", environ | {"DELEGATION_KIT_PAUSE_PCT": "55"}) == (0, "55\n", "")


def test_the_overlay_sits_beside_the_default_location_too(sandbox: Path) -> None:
    environ = hermetic_environment(sandbox)
    del environ["DELEGATION_KIT_KNOB_FILE"]
    gates = sandbox / "checks"                    # sandbox is no repository: it is its own top level
    gates.mkdir()
    (gates / "delegation-config.local.knobs").write_text("DELEGATION_KIT_TIER_MODEL[] = judgment=opus\n")
    assert values("DELEGATION_KIT_TIER_MODEL", environ, cwd=sandbox) == (0, "judgment=opus\n", "")


def test_a_malformed_overlay_names_its_own_file(sandbox: Path) -> None:
    local = sandbox / "delegation-config.local.knobs"
    local.write_text("\nDELEGATION_KIT_FAN_WIDTH = 0\n")
    assert values("DELEGATION_KIT_FAN_WIDTH", hermetic_environment(sandbox)) == (
        2, "", f"knob-values: {local}:2: DELEGATION_KIT_FAN_WIDTH='0' must be a positive integer\n")


def test_every_retired_configuration_is_refused_at_once(sandbox: Path) -> None:
    (sandbox / "delegation-config.sh").write_text("DELEGATION_KIT_PAUSE_PCT=70\n")
    (sandbox / "delegation-config.local.sh").write_text("")
    retired = sandbox / "old-config"
    retired.write_text("DELEGATION_KIT_PAUSE_PCT=70\n")
    environ = hermetic_environment(sandbox, DELEGATION_KIT_CONFIG_FILE=str(retired))
    status, out, err = values("DELEGATION_KIT_PAUSE_PCT", environ)
    assert (status, out) == (2, "")
    assert err == (
        f"knob-values: {sandbox}/delegation-config.sh: a left-behind shell config; st2 reads knob files only — move its values into delegation-config.knobs (or delegation-config.local.knobs) and delete it\n"
        f"knob-values: {sandbox}/delegation-config.local.sh: a left-behind shell config; st2 reads knob files only — move its values into delegation-config.knobs (or delegation-config.local.knobs) and delete it\n"
        f"knob-values: DELEGATION_KIT_CONFIG_FILE={retired}: the retired config file is not read — move its values into the knob file (DELEGATION_KIT_KNOB_FILE or the default location) and unset DELEGATION_KIT_CONFIG_FILE\n"
    )
    # The same refusal reaches the usage verdict (budget-unknown, exit 2) with every finding.
    verdict = run_st2(["usage", "verdict"], environ)
    assert verdict.returncode == 2
    assert verdict.stderr.decode().count("usage-verdict: ") == 3


def test_a_named_knob_file_that_does_not_exist_and_an_empty_retired_file(sandbox: Path) -> None:
    empty = sandbox / "empty-old"
    empty.write_text("")
    environ = hermetic_environment(sandbox, DELEGATION_KIT_CONFIG_FILE=str(empty))
    assert values("DELEGATION_KIT_FAN_WIDTH", environ) == (0, "2\n", "")  # empty: nothing lost, not refused
    missing = sandbox / "nowhere.knobs"
    assert values("DELEGATION_KIT_FAN_WIDTH", environ | {"DELEGATION_KIT_KNOB_FILE": str(missing)}) == (
        2, "", f"knob-values: DELEGATION_KIT_KNOB_FILE={missing}: no such file (unset it to use the default location)\n")


def test_knob_values_refusals(sandbox: Path) -> None:
    environ = hermetic_environment(sandbox)
    assert values("DELEGATION_KIT_NOPE", environ) == (
        2, "", "knob-values: DELEGATION_KIT_NOPE is not a knob of the table (st2 emit knob-roster lists them)\n")
    result = run_st2(["emit", "knob-values"], environ)
    assert (result.returncode, result.stderr.decode()) == (2, "knob-values: takes exactly one knob name\nusage: st2 emit knob-values [--] <NAME>\n")
    assert values("DELEGATION_KIT_TIER_CLASSES", environ) == (0, "judgment\nrouting\nmechanical\n", "")
    assert values("DELEGATION_KIT_USAGE_HISTORY", environ) == (0, "\n", "")


def test_the_roster_lists_every_knob_with_its_shape_and_rendered_default(sandbox: Path) -> None:
    # A broken configuration does not stop the roster: it reads the table alone.
    (sandbox / "delegation-config.knobs").write_text("garbage\n")
    result = run_st2(["emit", "knob-roster"], hermetic_environment(sandbox))
    assert result.returncode == 0 and result.stderr == b""
    lines = result.stdout.decode().splitlines()
    assert [line.split(" ")[0] for line in lines] == list(knobs.TABLE)
    assert lines[0] == 'DELEGATION_KIT_USAGE_FILE scalar ""'
    assert "DELEGATION_KIT_TIER_CLASSES indexed (judgment routing mechanical)" in lines
    assert "DELEGATION_KIT_FOREIGN_PAUSE_PCT scalar ${DELEGATION_KIT_PAUSE_PCT}" in lines
    assert "DELEGATION_KIT_GATE_FILES indexed (${GATE_SDK_GATES_DIR}/check-*.sh ${GATE_SDK_GATES_DIR}/check-*.gate)" in lines


def test_the_statusline_inboxes_validator(sandbox: Path) -> None:
    tracked = sandbox / "delegation-config.knobs"
    tracked.write_text("DELEGATION_KIT_STATUSLINE_INBOXES[] = G=gaps.md\nDELEGATION_KIT_STATUSLINE_INBOXES[] = =x\nDELEGATION_KIT_STATUSLINE_INBOXES[] = nolabel\n")
    status, _, err = values("DELEGATION_KIT_STATUSLINE_INBOXES", hermetic_environment(sandbox))
    assert status == 2
    assert err == (
        f"knob-values: {tracked}:2: DELEGATION_KIT_STATUSLINE_INBOXES: '=x' is not <label>=<path> with a non-empty label and path\n"
        f"knob-values: {tracked}:3: DELEGATION_KIT_STATUSLINE_INBOXES: 'nolabel' is not <label>=<path> with a non-empty label and path\n")
