"""SIGKILL of the Codex wrapper between attempt and evidence, at 20 random points, against the
stand-in app-server: no message ever reaches the model twice and every one is delivered."""

from __future__ import annotations

import os
import signal
import time

import pytest
from codex_support import Wrapper, make_seat, poll_for, write_message
from support import FaultSeed

from st2.drivers.codex.pump import correlations_in

pytestmark = [pytest.mark.process, pytest.mark.long]

ROUNDS = 20


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def delivered_counts(wrapper: Wrapper) -> dict[str, int]:
    counts: dict[str, int] = {}
    for text in wrapper.history():
        for correlation in correlations_in(text):
            stem = correlation.split(":")[1]
            counts[stem] = counts.get(stem, 0) + 1
    return counts


def test_sigkill_between_attempt_and_evidence_never_duplicates_and_never_loses(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    seed = FaultSeed()
    chooser = seed.random
    with seed.reported():
        names = []
        wrapper = None
        for round_number in range(ROUNDS):
            # Mail keeps arriving; some turns take their input late, widening the window.
            names.append(write_message(seat, f"task {round_number}", body=("FAKE_SLOW", "FAKE_LATE", "go")[round_number % 3]))
            wrapper = Wrapper(catalog, tmp_path)
            launches = wrapper.standin_dir / "launches"
            before = len(launches.read_text().split()) if launches.exists() else 0
            poll_for(lambda: launches.exists() and len(launches.read_text().split()) > before, "the app-server")
            time.sleep(chooser.uniform(0.0, 0.8))  # the random kill point (not a wait for progress)
            server = int(launches.read_text().split()[-1])
            os.kill(wrapper.process.pid, signal.SIGKILL)
            wrapper.process.wait(timeout=30)
            wrapper.handle.close()
            poll_for(lambda: not alive(server), "the app-server to die with its wrapper")
        final = Wrapper(catalog, tmp_path)
        try:
            poll_for(lambda: set(delivered_counts(final)) >= {name[:-3] for name in names}, "every message delivered",
                     timeout=60)
        finally:
            final.stop()
        counts = delivered_counts(final)
        assert {stem: count for stem, count in counts.items() if count != 1} == {}
        assert sorted(counts) == sorted(name[:-3] for name in names)
