"""`st2 ls` lists the discovered seats."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import run_st2


def seat(catalog: Path, host: str, identity: str) -> None:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{ argv "true" }}\n')


@pytest.mark.process
def test_ls_lists_seats_sorted_in_both_forms(catalog: Path) -> None:
    seat(catalog, "beta", "x")
    seat(catalog, "alpha", "long-name")
    human = run_st2("ls", catalog=catalog)
    assert human.stdout == "alpha.long-name  agents/alpha/long-name/agent.kdl\nbeta.x           agents/beta/x/agent.kdl\n"
    assert human.returncode == 0
    machine = run_st2("ls", "--json", catalog=catalog)
    assert machine.stdout == (
        '[{"id":"alpha.long-name","host":"alpha","identity":"long-name","declaration":"agents/alpha/long-name/agent.kdl"},'
        '{"id":"beta.x","host":"beta","identity":"x","declaration":"agents/beta/x/agent.kdl"}]\n')


@pytest.mark.process
def test_ls_of_an_empty_catalog_is_an_empty_list(catalog: Path) -> None:
    result = run_st2("ls", "--json", catalog=catalog)
    assert (result.stdout, result.stderr, result.returncode) == ("[]\n", "", 0)


@pytest.mark.process
def test_ls_reports_layout_errors_and_fails(catalog: Path) -> None:
    seat(catalog, "h", "ok")
    (catalog / "agents" / "h" / "stray").write_text("x")
    result = run_st2("ls", catalog=catalog)
    assert result.stdout == "h.ok  agents/h/ok/agent.kdl\n"
    assert result.stderr == "agents/h/stray: error[catalog-entry-unexpected]: agents/h/stray is not an identity directory\n"
    assert result.returncode == 1
