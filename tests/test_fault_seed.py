"""The seed of the random fault tests (tests/support.py FaultSeed): printed, named in any failure
raised under it, and taken back from ``$ST2_SIGKILL_SEED`` to replay the same fault points."""

from __future__ import annotations

import pytest

from support import SEED_VARIABLE, FaultSeed


def points(seed: FaultSeed) -> list[float]:
    return [seed.random.uniform(0.0, 0.8) for _ in range(20)]


def test_a_failure_names_its_seed_and_the_seed_replays_the_same_points(monkeypatch, capsys) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    first = FaultSeed()
    drawn = points(first)
    reproduce = f"{SEED_VARIABLE}={first.seed}"
    assert reproduce in capsys.readouterr().out                     # logged before any point is drawn
    with pytest.raises(AssertionError) as failure:
        with first.reported():
            assert drawn == [], "a lost message"
    assert any(reproduce in note for note in failure.value.__notes__)
    monkeypatch.setenv(SEED_VARIABLE, str(first.seed))
    again = FaultSeed()
    assert again.seed == first.seed and points(again) == drawn


def test_a_fixed_default_is_used_unless_the_variable_overrides_it(monkeypatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert FaultSeed(default=20261130).seed == 20261130
    monkeypatch.setenv(SEED_VARIABLE, "7")
    assert FaultSeed(default=20261130).seed == 7


def test_without_the_variable_each_run_draws_a_fresh_seed(monkeypatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert len({FaultSeed().seed for _ in range(5)}) > 1
