"""SIGKILL of the opencode wrapper between attempt and read-back, at 20 random points, against the
stand-in server built from the captured frames (its server dies with the wrapper): every mail is
persisted in the session exactly once and none reaches the model twice — an ambiguous attempt is
settled by reading the session back, never by sending again.

Delivered means persisted in the session, what the read-back reads: the stand-in, like opencode,
persists the user message and then calls the model, so a server killed between the two leaves a
message the model has not seen yet but will with the session's next turn (its history), and the
wrapper rightly never sends it again.
"""

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


def counts_in(texts: list[str]) -> dict[str, int]:
    """How often each message (by its filename's stem) is named by a correlation in ``texts``."""
    counts: dict[str, int] = {}
    for text in texts:
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
                return set(counts_in(final.persisted_user_texts())) >= {name[:-3] for name in names}

            poll_for(all_delivered, lambda: final.text()[-2000:], timeout=120)
        finally:
            final.stop()
        persisted = counts_in(final.persisted_user_texts())
        assert {stem: count for stem, count in persisted.items() if count != 1} == {}
        assert sorted(persisted) == sorted(name[:-3] for name in names)
        seen = counts_in(final.model_requests())
        assert {stem: count for stem, count in seen.items() if count != 1} == {}
        assert set(seen) <= set(persisted)
