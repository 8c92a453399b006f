"""catalog.kdl's `account` blocks and a seat's `account`: what they declare, and every malformed
one refused at its own line and column."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pathlib import Path

from st2.declarations.catalog import parse_catalog_declaration

GOOD = '''catalog {
    account "main" {
        config-dir claude="~/.claude-main" codex="/srv/codex-main"
        DELEGATION_KIT_USAGE_FILE "/srv/main/usage.txt"
        DELEGATION_KIT_REFRESH_CMD "st2" "usage" "poll" "--account" "main"
        DELEGATION_KIT_PAUSE_PCT "85"
        hold-on-pause #true
        failover "spare"
        relaunch spacing="500ms" concurrency=2
    }
    account "spare"
}
'''


def diagnostics(text: str) -> list[str]:
    return [str(item) for item in parse_catalog_declaration(text)[1]]


def test_a_declared_account_carries_its_config_locations_scoped_knobs_hold_failover_and_admission() -> None:
    declaration, found = parse_catalog_declaration(GOOD)
    assert found == []
    main, spare = declaration.accounts["main"], declaration.accounts["spare"]
    assert main.config_dirs == {"claude": "~/.claude-main", "codex": "/srv/codex-main"}
    assert main.knobs == {"DELEGATION_KIT_USAGE_FILE": "/srv/main/usage.txt",
                          "DELEGATION_KIT_REFRESH_CMD": ("st2", "usage", "poll", "--account", "main"),
                          "DELEGATION_KIT_PAUSE_PCT": "85"}
    assert (main.hold_on_pause, main.failover, main.spacing_seconds, main.concurrency) == (True, "spare", 0.5, 2)
    assert (spare.hold_on_pause, spare.failover, spare.spacing_seconds, spare.concurrency) == (False, None, 3.0, 1)
    assert main.config_dir("claude", "/cat").endswith("/.claude-main")
    assert parse_catalog_declaration("catalog {\n}\n")[0].accounts is None


def test_every_malformed_account_field_is_refused_at_its_line_and_column() -> None:
    text = '''catalog {
    account "a" {
        DELEGATION_KIT_PAUSE_PCT "eighty"
    }
    account "b" { relaunch spacing="0s" }
    account "c" { config-dir claud="/x" }
    account "d" { colour "red" }
    account "e" { failover "nowhere" }
    account "f" { failover "f" }
    account "Bad Name"
    account "a"
    account "g" { relaunch concurrency=0 }
    account "h" { DELEGATION_KIT_FAN_WIDTH "3" }
}
'''
    assert diagnostics(text) == [
        "catalog.kdl:3:34: error[invalid-value]: `DELEGATION_KIT_PAUSE_PCT` 'eighty' must be a number (a percentage such as 80 or 92.5)",
        'catalog.kdl:5:28: error[invalid-value]: `relaunch` spacing= must be a duration above zero and at most 1h, e.g. "3s", "500ms"',
        "catalog.kdl:6:30: error[invalid-value]: `config-dir` names no harness 'claud' (harnesses: claude, codex, pi, omp, opencode)\n  help: did you mean `claude`?",
        "catalog.kdl:7:19: error[unknown-node]: unknown account field `colour` (expected config-dir, hold-on-pause, failover, relaunch "
        "or one of the scoped usage knobs DELEGATION_KIT_USAGE_FILE, DELEGATION_KIT_CRED_FILE, DELEGATION_KIT_ACCOUNT_CONFIG, "
        "DELEGATION_KIT_USAGE_ENDPOINT, DELEGATION_KIT_PAUSE_PCT, DELEGATION_KIT_PAUSE_PCT_7D, DELEGATION_KIT_STALE_AGE, "
        "DELEGATION_KIT_LOGIN_WINDOW, DELEGATION_KIT_LOGIN_SETTLE, DELEGATION_KIT_REFRESH_CMD, DELEGATION_KIT_REFRESH_MIN_AGE, "
        "DELEGATION_KIT_USAGE_HISTORY)",
        "catalog.kdl:8:28: error[undeclared-account]: account 'e' fails over to 'nowhere', which catalog.kdl does not declare",
        "catalog.kdl:9:28: error[invalid-value]: account 'f' cannot fail over to itself",
        "catalog.kdl:10:13: error[invalid-value]: account name 'Bad Name' must be 1-63 of a-z, 0-9, '_' and '-', beginning with a letter or digit",
        "catalog.kdl:11:13: error[duplicate-field]: account 'a' is declared more than once",
        "catalog.kdl:12:28: error[invalid-value]: `relaunch` concurrency= must be an integer from 1 to 64",
        "catalog.kdl:13:19: error[unknown-node]: `DELEGATION_KIT_FAN_WIDTH` is the host's knob, not an account's (an "
        "account scopes only the usage knobs: DELEGATION_KIT_USAGE_FILE, DELEGATION_KIT_CRED_FILE, "
        "DELEGATION_KIT_ACCOUNT_CONFIG, DELEGATION_KIT_USAGE_ENDPOINT, DELEGATION_KIT_PAUSE_PCT, DELEGATION_KIT_PAUSE_PCT_7D, "
        "DELEGATION_KIT_STALE_AGE, DELEGATION_KIT_LOGIN_WINDOW, DELEGATION_KIT_LOGIN_SETTLE, DELEGATION_KIT_REFRESH_CMD, "
        "DELEGATION_KIT_REFRESH_MIN_AGE, DELEGATION_KIT_USAGE_HISTORY)\n  help: set it in the environment or the knob file "
        "(docs/kit.md §Knobs)",
    ]


@pytest.mark.process
def test_st2_validate_names_a_seats_undeclared_account_at_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "catalog.kdl").write_text(GOOD)
    seat = tmp_path / "agents" / "h" / "a"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "a" {\n    argv "sleep" "100"\n    account "mian"\n}\n')
    done = subprocess.run([sys.executable, "-m", "st2", "validate", "--catalog", str(tmp_path), "--host", "h"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stdout.startswith('agents/h/a/agent.kdl:3:5: error[undeclared-account]: account "mian" is not '
                                  "declared in catalog.kdl\n  help: did you mean `main`?\n"), done.stdout
    (seat / "agent.kdl").write_text('agent "a" {\n    argv "sleep" "100"\n    account "main"\n}\n')
    done = subprocess.run([sys.executable, "-m", "st2", "validate", "--catalog", str(tmp_path), "--host", "h"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
