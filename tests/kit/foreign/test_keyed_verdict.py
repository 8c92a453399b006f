"""The keyed verdict: its own order (parse, long-axis pause, RESET-OK, short-axis pause,
age-STALE, OK), its producer, its place before anything is written, the --budget form, and the
rule's two orders held against one snapshot set."""

from __future__ import annotations

import time

import pytest

from st2.kit.usage import verdict as usage_verdict
from st2.records import usage_snapshot

pytestmark = pytest.mark.process  # every case spawns git or the real st2 CLI

HOLD = "spawn nothing on this adapter until it resets"


def fields(out: str) -> dict[str, str]:
    head = out.split(" -> ", 1)[0].split(": ", 1)[1]
    return dict(word.split("=", 1) for word in head.split())


def within(render) -> set[str]:
    """The line as read 0, 1 or 2 seconds after the snapshot was written (a loaded machine may
    cross a second boundary between the write and the read)."""
    return {render(delay) for delay in range(3)}


def budgeted(foreign, spawned_mark=True):
    usage = foreign.root / "vendor-usage.txt"
    mark = foreign.marks / "spawned"
    foreign.adapter("vendor", foreign.script("vendor", f"touch {mark}; echo report"))
    foreign.knob(f"DELEGATION_KIT_FOREIGN_USAGE[] = vendor={usage}")
    return usage, mark


def test_a_pause_spawns_nothing_and_leaves_no_run_directory(foreign) -> None:
    usage, mark = budgeted(foreign)
    foreign.snapshot(usage, 85)
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt))
    assert status == 2
    assert out in within(lambda d: "foreign-run: adapter=vendor mode=audit class=- key=audit-7 budget=PAUSE exit=- report=none patch=none "
                         f"-> FAILED (budget: used=85% age={d}s resets_in={3600 - d}s -> PAUSE (short window at or over 80%, resets in {3600 - d}s; {HOLD}))\n")
    assert not mark.exists() and not foreign.run_dir().exists()


def test_an_old_at_or_over_reading_still_pauses_and_an_old_under_one_is_stale_and_proceeds(foreign) -> None:
    usage, mark = budgeted(foreign)
    foreign.snapshot(usage, 80, age=10_000)
    assert fields(foreign.call("run", "vendor", str(foreign.prompt))[1])["budget"] == "PAUSE"
    assert not mark.exists()
    foreign.snapshot(usage, 30, age=10_000)
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt))
    assert (status, fields(out)["budget"]) == (0, "STALE") and mark.exists()


def test_the_long_axis_is_read_ahead_of_reset_ok(foreign) -> None:
    usage, mark = budgeted(foreign)
    foreign.snapshot(usage, 99, resets_in=-60, long=(96, 86_400))
    out = foreign.call("run", "vendor", str(foreign.prompt))[1]
    assert out.split(" -> ", 1)[1] in within(lambda d: f"FAILED (budget: used=99% (long 96%) age={d}s resets_in={-60 - d}s -> PAUSE "
                                             f"(long window at or over 95%, resets in {86400 - d}s; the short window rolled over; {HOLD}))\n")
    assert not mark.exists()
    for long in ((40, 86_400), None, (99, -5)):
        foreign.snapshot(usage, 99, resets_in=-60, long=long)
        status, out, _ = foreign.call("run", "vendor", str(foreign.prompt))
        assert (status, fields(out)["budget"]) == (0, "RESET-OK"), long
    assert mark.exists()


def test_budget_unknown_proceeds_and_says_so(foreign) -> None:
    usage, mark = budgeted(foreign)
    usage.write_text("five_hour_used_pct=oops\n")
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt))
    assert (status, fields(out)["budget"]) == (0, "STALE") and mark.exists()
    foreign.adapter("free", "true")
    assert fields(foreign.call("run", "free", str(foreign.prompt))[1])["budget"] == "OFF"


def test_the_producer_feeds_the_read_and_fails_soft(foreign) -> None:
    usage, mark = budgeted(foreign)
    now = int(time.time())
    writer = foreign.script("producer", f'printf "five_hour_used_pct=91\\nfive_hour_resets_at={now + 900}\\nupdated_at={now}\\n" > "$1"')
    foreign.knob(f"DELEGATION_KIT_FOREIGN_USAGE_CMD[] = vendor={writer}", "DELEGATION_KIT_FOREIGN_USAGE_CMD[] = vendor=@USAGE_FILE@")
    foreign.snapshot(usage, 10)
    assert fields(foreign.call("run", "vendor", str(foreign.prompt))[1])["budget"] == "PAUSE"


@pytest.mark.parametrize("producer", ["exit 4", "exec sleep 30", None])
def test_a_failing_producer_leaves_the_snapshot_as_it_was(foreign, producer) -> None:
    usage, mark = budgeted(foreign)
    foreign.snapshot(usage, 10)
    before = usage.read_bytes()
    command = foreign.script("bad-producer", f'printf "garbage" > "$1"; {producer}') if producer else "/nonexistent/producer"
    foreign.knob(f"DELEGATION_KIT_FOREIGN_USAGE_CMD[] = vendor={command}", "DELEGATION_KIT_FOREIGN_USAGE_CMD[] = vendor=" + str(foreign.root / "elsewhere"),
                 "DELEGATION_KIT_FOREIGN_TIMEOUT = 1")
    status, out, _ = foreign.call("run", "vendor", "--budget")
    assert status == 0 and usage.read_bytes() == before
    assert out.startswith("foreign-budget: adapter=vendor used=10% age=")


def test_a_paused_resume_holds_the_turn_and_keeps_the_report(foreign) -> None:
    usage, mark = budgeted(foreign)
    foreign.knob("DELEGATION_KIT_FOREIGN_RESUME[] = vendor=" + foreign.script("next", "echo next"))
    foreign.snapshot(usage, 10)
    assert foreign.call("run", "vendor", str(foreign.prompt))[0] == 0
    foreign.snapshot(usage, 90)
    status, out, _ = foreign.call("resume", "audit-7", str(foreign.prompt))
    assert (status, fields(out)["turn"], fields(out)["budget"]) == (2, "1", "PAUSE")
    assert (foreign.run_dir() / "report.txt").read_text() == "report\n" and not (foreign.run_dir() / "report.1.txt").exists()
    foreign.snapshot(usage, 10)
    status, out, _ = foreign.call("resume", "audit-7", str(foreign.prompt))
    assert (status, fields(out)["turn"]) == (0, "2")
    assert (foreign.run_dir() / "report.1.txt").read_text() == "report\n"


def test_the_budget_form(foreign) -> None:
    usage, mark = budgeted(foreign)
    foreign.snapshot(usage, 12.5, long=(50, 3600))
    status, out, err = foreign.call("run", "vendor", "--budget")
    assert (status, err) == (0, "")
    assert out in within(lambda d: f"foreign-budget: adapter=vendor used=12.5% (long 50%) age={d}s resets_in={3600 - d}s -> OK "
                                   "(fresh reading under both thresholds; headroom now — a floor, not a recommendation)\n")
    foreign.snapshot(usage, 95)
    assert foreign.call("run", "vendor", "--budget")[0] == 1
    foreign.adapter("free", "true")
    assert foreign.call("run", "free", "--budget") == (2, (
        "foreign-budget: adapter=free -> OFF (no DELEGATION_KIT_FOREIGN_USAGE snapshot; nothing gates this adapter — "
        "budget-unknown, never blocks a foreign run)\n"), "")
    assert not mark.exists() and not (foreign.repo / ".tmp").exists()
    status, out, err = foreign.call("run", "stranger", "--budget")
    assert (status, out) == (2, "") and err.startswith("foreign-run: adapter 'stranger' is not configured in DELEGATION_KIT_FOREIGN_ADAPTERS\n")
    assert foreign.call("run", "vendor", "x", "--budget")[0] == 2
    assert foreign.call("run", "vendor", "--budget", "--key", "k")[0] == 2


def test_the_two_orders_against_one_snapshot_set() -> None:
    now = 1_000_000
    def snap(pct, resets_in, age, long=None):
        text = f"five_hour_used_pct={pct}\nfive_hour_resets_at={now + resets_in}\nupdated_at={now - age}\n"
        if long:
            text += f"seven_day_used_pct={long[0]}\nseven_day_resets_at={now + long[1]}\n"
        return usage_snapshot.parse(text)
    def both(reading):
        return [usage_verdict.judge(reading, now, "80", "95", 600, order=order) for order in (usage_verdict.ACCOUNT_KEYED, usage_verdict.KEYED)]
    # an old at-or-over reading: STALE account-keyed, a pause keyed
    assert both(snap(90, 3600, 5000)) == [usage_verdict.JUDGED_AGE_STALE, usage_verdict.JUDGED_PAUSE_5H]
    # a dead weekly window arms no axis in either order
    assert both(snap(10, 3600, 0, long=(99, -1))) == [usage_verdict.JUDGED_CLEAR, usage_verdict.JUDGED_CLEAR]
    # a dead short window beside a live at-or-over long one: RESET-OK account-keyed, a pause keyed
    assert both(snap(10, -5, 0, long=(97, 3600))) == [usage_verdict.JUDGED_RESET_OK, usage_verdict.JUDGED_PAUSE_LONG_DEAD_SHORT]


def test_the_foreign_tables_validator_refuses_with_every_finding(foreign) -> None:
    foreign.knob("DELEGATION_KIT_FOREIGN_ADAPTERS[] = Bad=x", "DELEGATION_KIT_FOREIGN_ADAPTERS[] = ok=run",
                 "DELEGATION_KIT_FOREIGN_RESUME[] = ghost=x", "DELEGATION_KIT_FOREIGN_RESUME[] = ok=@SESSION_ID@",
                 "DELEGATION_KIT_FOREIGN_USAGE[] = ok=a", "DELEGATION_KIT_FOREIGN_USAGE[] = ok=b",
                 "DELEGATION_KIT_FOREIGN_USAGE_CMD[] = ghost=p", "DELEGATION_KIT_FOREIGN_HARNESS[] = ok=acme",
                 "DELEGATION_KIT_FOREIGN_TIER_MODEL[] = acme/senior=m")
    status, out, err = foreign.call("run", "ok", "--budget")
    k = foreign.knobs
    assert (status, out) == (2, "")
    assert err == (
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_ADAPTERS: 'Bad=x' is not <adapter>=<word> (adapter in [a-z0-9-], <word> non-empty)\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_USAGE: a second element for adapter 'ok'\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_RESUME: adapter 'ghost' is not configured in DELEGATION_KIT_FOREIGN_ADAPTERS\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_USAGE_CMD: adapter 'ghost' has no DELEGATION_KIT_FOREIGN_USAGE snapshot to write\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_ADAPTERS: adapter 'ok' takes a class (DELEGATION_KIT_FOREIGN_HARNESS) but its form carries no @MODEL@\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_RESUME: adapter 'ok''s resume form carries @SESSION_ID@ but DELEGATION_KIT_FOREIGN_SESSION_MARKER gives it no marker\n"
        f"foreign-run: {k}: DELEGATION_KIT_FOREIGN_TIER_MODEL: class 'senior' is not in DELEGATION_KIT_TIER_CLASSES\n"
    )
