"""`st2 doctor` fails while ``catalog.kdl`` does not validate, naming each problem's line and
column on one line (issue 31: a typo'd notify block silently disabled every hook while doctor
stayed green)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roster_fixture import NOW_MS
from support import run_st2, st2_env

pytestmark = pytest.mark.process

TYPO = 'catalog {\n    notify {\n        on "blokced"\n        argv "notify-send" "st2"\n    }\n}\n'


def doctor(catalog: Path):
    (catalog / "agents" / "alpha").mkdir(exist_ok=True)
    return run_st2("doctor", "--host", "alpha", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))


def test_a_catalog_declaration_that_does_not_validate_is_a_located_failure(catalog: Path) -> None:
    (catalog / "catalog.kdl").write_text(TYPO)
    result = doctor(catalog)
    assert result.returncode == 1, result
    assert ("failure: catalog: catalog-declaration: catalog.kdl:3:12: error[invalid-value]: `on` names no event "
            "kind 'blokced' (kinds: blocked, parked, context, compaction, pause, usage-stale, diagnostic, stale, resource, hold); "
            "help: did you mean `blocked`?\n") in result.stdout


def test_each_problem_is_one_line_however_its_value_reads(catalog: Path) -> None:
    (catalog / "catalog.kdl").write_text('catalog {\n    archive-after "7d\\n\\u{1b}[2J"\n}\n')
    lines = doctor(catalog).stdout.splitlines()
    assert ('failure: catalog: catalog-declaration: catalog.kdl:2:19: error[invalid-value]: '
            'archive-after "7d\\n\\x1b[2J" is not a duration; help: ') in lines[0], lines


def test_a_valid_or_absent_catalog_declaration_is_no_finding(catalog: Path) -> None:
    assert "catalog-declaration" not in doctor(catalog).stdout
    (catalog / "catalog.kdl").write_text(TYPO.replace("blokced", "blocked"))
    result = doctor(catalog)
    assert "catalog-declaration" not in result.stdout and result.returncode == 0, result
