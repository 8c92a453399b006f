"""SIGKILL of the opencode wrapper between attempt and read-back, at 20 random points, against the
stand-in server built from the captured frames (its server dies with the wrapper): no mail
reaches the model twice and every one is delivered — an ambiguous attempt is settled by reading
the session back, never by sending again."""

from __future__ import annotations

import os
import signal
import time

import pytest
from opencode_support import Wrapper, alive, make_seat, poll_for, write_message
from support import FaultSeed

from st2.delivery.batch import correlations_in

pytestmark = [pytest.mark.process, pytest.mark.long]

ROUNDS = 20


def delivered_counts(wrapper: Wrapper) -> dict[str, int]:
    counts: dict[str, int] = {}
    for text in wrapper.model_requests():
        for correlation in correlations_in(text):
            stem = correlation.split(":")[1]
            counts[stem] = counts.get(stem, 0) + 1
    return counts


def settle_persisted(seat, wrapper: Wrapper) -> None:
    """Act as the recipient: archive what has been read back as persisted (the pump never does)."""
    for name, entry in wrapper.ledger().items():
        source = seat / "resources" / "inbox" / name
        if entry["phase"] == "persisted" and source.exists():
            os.rename(source, seat / "resources" / "archive" / name)


def test_sigkill_between_attempt_and_read_back_never_duplicates_and_never_loses(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    seed = FaultSeed()
    chooser = seed.random
    with seed.reported():
        names = []
        env = {"STANDIN_PERSIST_DELAY": "0.6"}
        for round_number in range(ROUNDS):
            names.append(write_message(seat, f"task {round_number}", body=f"go {round_number}"))
            wrapper = Wrapper(catalog, tmp_path, env=env)
            before = len(wrapper.launches())
            poll_for(lambda: len(wrapper.launches()) > before, "the server")
            time.sleep(chooser.uniform(0.0, 1.5))  # the random kill point (not a wait for progress)
            server = wrapper.launches()[-1]
            os.kill(wrapper.process.pid, signal.SIGKILL)
            wrapper.process.wait(timeout=30)
            wrapper.handle.close()
            poll_for(lambda: not alive(server), "the server to die with its wrapper")
            settle_persisted(seat, wrapper)
        final = Wrapper(catalog, tmp_path, env=env)
        try:
            def all_delivered() -> bool:
                settle_persisted(seat, final)
                return set(delivered_counts(final)) >= {name[:-3] for name in names}

            poll_for(all_delivered, lambda: final.text()[-2000:], timeout=120)
        finally:
            final.stop()
        counts = delivered_counts(final)
        assert {stem: count for stem, count in counts.items() if count != 1} == {}
        assert sorted(counts) == sorted(name[:-3] for name in names)
