"""The roll witnesses: a demonstrated 5h roll refutes the login reroute's premise.

Fixed shape: a low percentage with a credentials mtime inside the blanket login window and no
account, which without a witness is STALE. Both witnesses (the boundary moved since the newest
sample, and updated_at is past that previous boundary) verdict OK; each alone, and each way the
log cannot answer, holds the STALE. The read happens before this run's own append, so a run can
never witness itself.
"""

from __future__ import annotations

from st2.kit.usage.history import previous_boundary

RESETS_IN = 3600
LOGIN_AGE = 60


def seed_history(usage, *lines: str) -> None:
    usage.sampling()
    usage.history.write_text("".join(line + "\n" for line in lines))


def lag_shape(usage, **optional: str) -> None:
    usage.login(LOGIN_AGE)
    usage.snapshot(pct="20", age=0, resets_in=RESETS_IN, **optional)


def sample(updated_at: int, resets_at, account: str | None = None) -> str:
    line = f"updated_at={updated_at} pct=70 resets_at={resets_at} verdict=OK login_at=0"
    return line + (f" account={account}" if account else "")


def test_both_witnesses_disarm_the_blanket_window(usage):
    lag_shape(usage)
    previous = usage.now - 100  # the old boundary, crossed 100 s ago
    seed_history(usage, sample(usage.now - 400, previous))
    line, status = usage.verdict()
    assert status == 0 and "-> OK" in line, line


def test_boundary_unmoved_holds_the_stale(usage):
    lag_shape(usage)
    seed_history(usage, sample(usage.now - 400, usage.now + RESETS_IN))
    line, status = usage.verdict()
    assert status == 2 and "auth changed 60s ago" in line, line


def test_previous_boundary_uncrossed_holds_the_stale(usage):
    """The boundary moved (restamped, e.g. by an account switch) but time never crossed it."""
    lag_shape(usage)
    seed_history(usage, sample(usage.now - 400, usage.now + 7200))
    line, status = usage.verdict()
    assert status == 2 and "auth changed 60s ago" in line, line


def test_non_numeric_tail_holds_the_stale(usage):
    lag_shape(usage)
    seed_history(usage, sample(usage.now - 400, usage.now - 100), sample(usage.now - 200, "notanepoch"))
    line, status = usage.verdict()
    assert status == 2 and "auth changed" in line, line


def test_no_history_holds_the_stale(usage):
    lag_shape(usage)
    line, status = usage.verdict()
    assert status == 2 and "auth changed" in line, line


def test_not_self_witnessing_an_empty_log_stales_and_keeps_only_its_own_sample(usage):
    lag_shape(usage)
    usage.sampling()
    line, status = usage.verdict()
    assert status == 2 and "auth changed" in line, line
    assert usage.history.read_text() == (
        f"updated_at={usage.now} pct=20 resets_at={usage.now + RESETS_IN} verdict=STALE"
        f" login_at={usage.now - LOGIN_AGE}\n"
    )
    # A second run now finds that sample: same boundary, so still no roll.
    line, status = usage.verdict()
    assert status == 2 and "auth changed" in line, line


def test_witnesses_disarm_the_settle_floor(usage):
    usage.live("acct-a")
    lag_shape(usage, account="acct-a")
    seed_history(usage, sample(usage.now - 400, usage.now - 100, account="acct-a"))
    line, status = usage.verdict()
    assert status == 0 and "-> OK" in line, line


def test_witnesses_never_disarm_the_account_switch(usage):
    usage.live("acct-b")
    lag_shape(usage, account="acct-a")
    seed_history(usage, sample(usage.now - 400, usage.now - 100, account="acct-a"))
    line, status = usage.verdict()
    assert status == 2 and "snapshot predates an account switch" in line, line


def test_witness_reads_the_snapshots_own_account(tmp_path):
    log = tmp_path / "history.log"
    log.write_text(sample(1, 10, account="a") + "\n" + sample(2, 20, account="b") + "\n")
    assert previous_boundary(str(log), "a") == 10
    assert previous_boundary(str(log), "b") == 20
    assert previous_boundary(str(log), "") == 20, "an absent account reads the newest sample of all"
    assert previous_boundary(str(log), "c") is None, "an account with no sample falls open"


def test_witness_falls_open_on_every_unanswerable_log(tmp_path):
    log = tmp_path / "history.log"
    assert previous_boundary("", "") is None
    assert previous_boundary(str(log), "") is None
    log.write_text("updated_at=1 pct=3 resets_at=notanepoch verdict=OK\n")
    assert previous_boundary(str(log), "") is None
    log.write_text("updated_at=1 pct=3 verdict=OK\n")
    assert previous_boundary(str(log), "") is None
    log.write_text("# a comment line\nupdated_at=1 resets_at=10 verdict=OK\n# trailing comment\n")
    assert previous_boundary(str(log), "") == 10
