"""The usage side per declared account: `st2 usage verdict|poll|trend --account A` resolve the
knobs in that account's environment, `st2 usage poll` without ``--account`` polls every account
that names its own snapshot, `st2 top`'s header and `st2 web`'s show one line per account, the
Prometheus usage families carry an ``account`` label, and the fleet events' PAUSE/STALE name
their account."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from st2.entry import main
from support import REPO, run_st2, st2_env

NOW = 1_800_000_000
CAPTURE = REPO / "captures" / "anthropic-oauth-usage" / "response.better-ccflare-changelog.2025-11-25.json"


def snapshot(path: Path, pct: str, age: int = 30, resets_in: int = 3600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"five_hour_used_pct={pct}\nfive_hour_resets_at={NOW + resets_in}\nupdated_at={NOW - age}\n")
    return path


def credentials(path: Path, tier: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"claudeAiOauth": {"accessToken": "sk-ant-oat01-SANDBOX", "subscriptionType": "%s"}}' % tier)


def knob_environment(root: Path) -> dict[str, str]:
    """A hermetic usage environment: no DELEGATION_KIT_* knob but these, an empty knob file, the
    host's snapshot at ``root/host/usage.txt`` (12 %, fresh)."""
    (root / "empty.knobs").write_text("")
    snapshot(root / "host" / "usage.txt", "12")
    return {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "config"),
            "DELEGATION_KIT_KNOB_FILE": str(root / "empty.knobs"),
            "DELEGATION_KIT_USAGE_FILE": str(root / "host" / "usage.txt"),
            "DELEGATION_KIT_CRED_FILE": str(root / "host" / ".credentials.json"),
            "DELEGATION_KIT_ACCOUNT_CONFIG": str(root / "no-account.json"),
            "DELEGATION_KIT_PAUSE_PCT": "80", "DELEGATION_KIT_STALE_AGE": "600"}


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process's environment made hermetic (see :func:`knob_environment`), ``$CATALOG`` a
    catalog whose ``catalog.kdl`` each test writes, and the wall clock pinned at :data:`NOW`."""
    for name in [name for name in os.environ if name.startswith(("DELEGATION_KIT_", "CLAUDE_CONFIG_DIR", "ST2_"))]:
        monkeypatch.delenv(name)
    for name, value in knob_environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    catalog = tmp_path / "catalog"
    (catalog / "agents").mkdir(parents=True)
    monkeypatch.setenv("CATALOG", str(catalog))
    monkeypatch.setattr(time, "time", lambda: float(NOW))
    return tmp_path


def declare(root: Path, body: str) -> Path:
    path = root / "catalog" / "catalog.kdl"
    path.write_text("catalog {\n" + body + "}\n")
    return path


TWO_ACCOUNTS = """\
    account "alpha" {{
        DELEGATION_KIT_USAGE_FILE "{root}/alpha/usage.txt"
        DELEGATION_KIT_PAUSE_PCT "80"
    }}
    account "beta" {{
        config-dir claude="{root}/beta"
        DELEGATION_KIT_PAUSE_PCT "95"
    }}
"""

PAUSE_LINE = ("usage-verdict: used=90% age=30s resets_in=3600s width=2 -> PAUSE (5h window): at or over 80% of the"
              " live 5h window; dispatch nothing new until it resets\n")
OK_LINE = ("usage-verdict: used=90% age=30s resets_in=3600s width=2 -> OK (fresh reading under its pause"
           " thresholds; headroom now — a floor, not a recommendation)\n")


def test_each_account_is_judged_on_its_own_snapshot_with_its_own_thresholds(sandbox: Path, capsys) -> None:
    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    snapshot(sandbox / "alpha" / "usage.txt", "90")
    snapshot(sandbox / "beta" / "usage.txt", "90")  # the same reading under beta's 95 % threshold
    assert main(["usage", "verdict", "--account", "alpha"]) == 1
    assert capsys.readouterr().out == PAUSE_LINE
    assert main(["usage", "verdict", "--account=beta"]) == 0
    assert capsys.readouterr().out == OK_LINE
    # Without --account: the host's own snapshot and thresholds, as before accounts existed.
    assert main(["usage", "verdict"]) == 0
    assert capsys.readouterr().out == OK_LINE.replace("used=90%", "used=12%")


@pytest.mark.process
def test_an_undeclared_account_is_one_line_naming_the_declared_ones(sandbox: Path) -> None:
    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    for verb in ("verdict", "poll", "trend"):
        completed = run_st2("usage", verb, "--account", "nope", env=st2_env(None))
        assert (completed.returncode, completed.stdout) == (2, ""), verb
        assert completed.stderr == (f"usage-{verb}: account 'nope' is not declared in {sandbox}/catalog/catalog.kdl"
                                    " (declared: alpha, beta)\n")
    # The root option names the catalog the same way (the click route).
    completed = run_st2("--catalog", str(sandbox / "elsewhere"), "usage", "verdict", "--account", "alpha",
                        env=st2_env(None))
    assert completed.returncode == 2
    assert completed.stderr == (f"usage-verdict: account 'alpha' is not declared in {sandbox}/elsewhere/catalog.kdl"
                                " (declared: none)\n")


def test_an_account_word_after_the_separator_is_a_path(sandbox: Path, capsys) -> None:
    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    assert main(["usage", "verdict", "--", "--account"]) == 2
    assert capsys.readouterr().out == ("usage-verdict: cannot read --account width=2 -> STALE (never blocks"
                                       " delegation — re-read or refresh before trusting the number)\n")


REFRESHING = """\
    account "alpha" {{
        DELEGATION_KIT_USAGE_FILE "{root}/alpha/usage.txt"
        DELEGATION_KIT_REFRESH_CMD "{python}" "{root}/mark.py" "{root}/refreshed" "alpha"
    }}
    account "beta" {{
        DELEGATION_KIT_USAGE_FILE "{root}/beta/usage.txt"
        DELEGATION_KIT_REFRESH_CMD "{python}" "{root}/mark.py" "{root}/refreshed" "beta"
    }}
"""


@pytest.mark.process
def test_the_refresh_command_is_the_accounts_own_argv(sandbox: Path, capsys) -> None:
    (sandbox / "mark.py").write_text("import sys\nopen(sys.argv[1], 'a').write(sys.argv[2] + '\\n')\n")
    declare(sandbox, REFRESHING.format(root=sandbox, python=sys.executable))
    snapshot(sandbox / "alpha" / "usage.txt", "10", age=120)  # older than REFRESH_MIN_AGE: refreshed
    snapshot(sandbox / "beta" / "usage.txt", "10", age=120)
    assert main(["usage", "verdict", "--account", "beta"]) == 0
    assert (sandbox / "refreshed").read_text() == "beta\n"
    assert main(["usage", "verdict", "--account", "alpha"]) == 0
    assert (sandbox / "refreshed").read_text() == "beta\nalpha\n"
    assert main(["usage", "verdict"]) == 0  # the host declares no refresh command
    assert (sandbox / "refreshed").read_text() == "beta\nalpha\n"
    capsys.readouterr()


POLLED = """\
    account "alpha" {{
        config-dir claude="{root}/alpha"
        DELEGATION_KIT_ACCOUNT_CONFIG "{root}/alpha/claude.json"
    }}
    account "beta" {{
        DELEGATION_KIT_USAGE_FILE "{root}/beta/usage.txt"
        DELEGATION_KIT_CRED_FILE "{root}/beta/credentials.json"
    }}
    account "gamma" {{
        DELEGATION_KIT_PAUSE_PCT "70"
    }}
"""


def polled(tier: str, account: str = "") -> str:
    return ("five_hour_used_pct=19.0\nfive_hour_resets_at=1764108000\n"
            f"updated_at={NOW}\nseven_day_used_pct=7.0\nseven_day_resets_at=1764622800\n"
            + (f"account={account}\n" if account else "") + f"tier={tier}\n")


def test_poll_without_an_account_refreshes_every_account_that_names_its_own_snapshot(
        sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    declare(sandbox, POLLED.format(root=sandbox))
    monkeypatch.setenv("DELEGATION_KIT_USAGE_ENDPOINT", CAPTURE.as_uri())
    credentials(sandbox / "host" / ".credentials.json", "pro")
    credentials(sandbox / "alpha" / ".credentials.json", "max")
    (sandbox / "alpha" / "claude.json").write_text('{"oauthAccount": {"accountUuid": "alpha-uuid"}}')
    credentials(sandbox / "beta" / "credentials.json", "team")
    assert main(["usage", "poll", "--timeout", "5"]) == 0
    # gamma names neither a snapshot nor a claude config location: it shares the host's.
    assert capsys.readouterr().out == (f"usage-poll: wrote {sandbox}/host/usage.txt\n"
                                       f"usage-poll: account alpha: wrote {sandbox}/alpha/usage.txt\n"
                                       f"usage-poll: account beta: wrote {sandbox}/beta/usage.txt\n")
    assert (sandbox / "host" / "usage.txt").read_text() == polled("pro")
    assert (sandbox / "alpha" / "usage.txt").read_text() == polled("max", "alpha-uuid")
    assert (sandbox / "beta" / "usage.txt").read_text() == polled("team")


def test_poll_of_one_account_or_from_a_seat_on_one_polls_that_snapshot_alone(
        sandbox: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    declare(sandbox, POLLED.format(root=sandbox))
    monkeypatch.setenv("DELEGATION_KIT_USAGE_ENDPOINT", CAPTURE.as_uri())
    credentials(sandbox / "host" / ".credentials.json", "pro")
    credentials(sandbox / "beta" / "credentials.json", "team")
    assert main(["usage", "poll", "--account", "beta"]) == 0
    assert capsys.readouterr().out == f"usage-poll: wrote {sandbox}/beta/usage.txt\n"
    assert not (sandbox / "alpha" / "usage.txt").exists()
    assert (sandbox / "host" / "usage.txt").read_text().startswith("five_hour_used_pct=12\n")
    monkeypatch.setenv("ST2_ACCOUNT", "beta")
    assert main(["usage", "poll"]) == 0
    assert capsys.readouterr().out == f"usage-poll: wrote {sandbox}/host/usage.txt\n"
    assert not (sandbox / "alpha" / "usage.txt").exists()


def test_trend_reads_the_accounts_own_history(sandbox: Path, capsys) -> None:
    declare(sandbox, """\
    account "alpha" {{
        DELEGATION_KIT_USAGE_HISTORY "{root}/alpha-history.log"
    }}
""".format(root=sandbox))
    assert main(["usage", "trend", "--account", "alpha"]) == 2
    assert capsys.readouterr().err == f"usage-trend: cannot read history {sandbox}/alpha-history.log\n"
    assert main(["usage", "trend"]) == 2
    assert capsys.readouterr().err == ("usage-trend: DELEGATION_KIT_USAGE_HISTORY unset — no history to report"
                                       " (enable sampling first)\n")


FRAME = """\
5h [##------------------]   12%   7d [????????????????????]    ?   verdict OK
sampling off: set DELEGATION_KIT_USAGE_HISTORY=<file> (env or knob file) so `st2 usage verdict` records history for the sparkline
account alpha   5h [##################--]   90%   7d [????????????????????]    ?   verdict PAUSE
account beta    5h [##################--]   90%   7d [????????????????????]    ?   verdict OK
0 of 0 seats; 0 blocked on a human
  HOST  AGENT  PRESENCE  DESIRED  OBSERVED  CONTEXT  INBOX  OLDEST  TASKS
recent events: none journaled on h (st2 up writes them; st2 events --follow streams them)
"""


@pytest.mark.process
def test_top_once_shows_one_header_line_per_declared_account(sandbox: Path) -> None:
    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    snapshot(sandbox / "alpha" / "usage.txt", "90")
    snapshot(sandbox / "beta" / "usage.txt", "90")
    environment = st2_env(None, ST2_CLOCK_WALL_MS=str(NOW * 1000), XDG_STATE_HOME=str(sandbox / "state"))
    completed = run_st2("top", "--once", "--host", "h", env=environment)
    assert (completed.returncode, completed.stderr) == (0, "")
    assert completed.stdout == FRAME
    (sandbox / "catalog" / "catalog.kdl").unlink()  # no account declared: the header as before
    completed = run_st2("top", "--once", "--host", "h", env=environment)
    assert completed.stdout == FRAME.replace(FRAME.splitlines(True)[2] + FRAME.splitlines(True)[3], "")


def live_fleet(sandbox: Path):
    from st2.base.clock import PinnedWallClock
    from st2.catalog.location import CatalogLocation
    from st2.top.live import LiveFleet

    live = LiveFleet(CatalogLocation(sandbox / "catalog", "h"), clock=PinnedWallClock(NOW * 1000),
                     environ=dict(os.environ), inventory_reader=lambda location: {"errors": [], "tasks": []})
    live.load()
    return live


USAGE_FAMILIES = """\
# HELP st2_usage_used_percent The account's usage window fill, percent.
# TYPE st2_usage_used_percent gauge
st2_usage_used_percent{window="five_hour"} 12.0
st2_usage_used_percent{account="alpha",window="five_hour"} 90.0
st2_usage_used_percent{account="beta",window="five_hour"} 90.0
# HELP st2_usage_verdict 1 for the usage verdict in force.
# TYPE st2_usage_verdict gauge
st2_usage_verdict{verdict="OK"} 1.0
st2_usage_verdict{account="alpha",verdict="PAUSE"} 1.0
st2_usage_verdict{account="beta",verdict="OK"} 1.0
"""


def usage_families(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if "st2_usage_" in line)


def test_the_usage_families_carry_an_account_label_beside_the_hosts_series(sandbox: Path) -> None:
    from st2.web.metrics import render

    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    snapshot(sandbox / "alpha" / "usage.txt", "90")
    snapshot(sandbox / "beta" / "usage.txt", "90")
    assert usage_families(render(live_fleet(sandbox)).decode()) == USAGE_FAMILIES
    (sandbox / "catalog" / "catalog.kdl").unlink()
    assert usage_families(render(live_fleet(sandbox)).decode()) == "".join(
        line for line in USAGE_FAMILIES.splitlines(True) if "account=" not in line)


def test_the_web_header_shows_one_line_per_declared_account(sandbox: Path) -> None:
    from st2.web.pages import usage_header

    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    snapshot(sandbox / "alpha" / "usage.txt", "90")
    window = '<span class="window">5h <meter min="0" max="100" value="{0}"></meter> {0}%</span> <span class="window">7d -</span>'
    assert usage_header(live_fleet(sandbox).usage) == (
        f'<div id="usage" class="verdict-ok">usage <b>OK</b> {window.format(12)}'
        f'<div class="account verdict-pause">account alpha <b>PAUSE</b> {window.format(90)}</div>'
        '<div class="account verdict-stale">account beta <b>STALE</b> <span class="window">5h -</span> '
        '<span class="window">7d -</span></div></div>')


def test_the_usage_events_name_their_account(sandbox: Path) -> None:
    from st2.catalog.location import CatalogLocation
    from st2.events.projection import FleetProjection

    declare(sandbox, TWO_ACCOUNTS.format(root=sandbox))
    snapshot(sandbox / "alpha" / "usage.txt", "90")
    projection = FleetProjection(CatalogLocation(sandbox / "catalog", "h"), None, None, dict(os.environ))
    found = {name: (facet.value, facet.evidence.get("account")) for name, facet in projection.usage(NOW * 1000).items()}
    assert found == {"pause||": ("OK", None), "usage-stale||": ("OK", None),
                     "pause||alpha": ("PAUSE", "alpha"), "usage-stale||alpha": ("PAUSE", "alpha"),
                     "pause||beta": ("STALE", "beta"), "usage-stale||beta": ("STALE", "beta")}
    assert projection.account_usage_files == [f"{sandbox}/alpha/usage.txt", f"{sandbox}/beta/usage.txt"]
