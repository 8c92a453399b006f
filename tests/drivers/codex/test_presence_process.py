"""The Codex wrapper's own loop refreshes presence every five minutes while its app-server lives
(docs/records.md §Status): the real loop, in process, around the stand-in app-server,
on a clock that runs 300x fast so fifteen minutes pass in three seconds."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from codex_support import HOST, STANDIN, make_seat, poll_for

from st2.drivers.codex import session as session_module
from st2.drivers.seat import Seat
from st2.records import status

pytestmark = pytest.mark.process
SPEED = 300


class FastClock:
    def __init__(self) -> None:
        self.wall0, self.mono0 = time.time_ns() // 1_000_000, time.monotonic()

    def monotonic(self) -> float:
        return self.mono0 + (time.monotonic() - self.mono0) * SPEED

    def wall_ms(self) -> int:
        return self.wall0 + int((time.monotonic() - self.mono0) * SPEED * 1000)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds / SPEED)


def test_presence_is_refreshed_every_five_minutes_while_the_app_server_lives(catalog, tmp_path, monkeypatch) -> None:
    directory = make_seat(catalog)
    (tmp_path / "standin").mkdir()
    monkeypatch.setenv("STANDIN_DIR", str(tmp_path / "standin"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    clock = FastClock()
    stamps = []
    real_refresh = status.refresh
    monkeypatch.setattr(status, "refresh", lambda seat_dir, clock_: stamps.append(clock_.wall_ms())
                        or real_refresh(seat_dir, clock_))
    session = session_module.CodexSession(Seat(directory, f"{HOST}.coder"), f"{HOST}.coder",
                                          [str(STANDIN), "app-server"], clock, catalog, stdin_fd=None,
                                          stream=open(os.devnull, "w"))
    stopper = threading.Thread(target=lambda: (poll_for(lambda: len(stamps) >= 4, timeout=20),
                                               session.requests.append(signal.SIGTERM)), daemon=True)
    stopper.start()
    session.run()
    minutes = [(stamp - stamps[0]) / 60000 for stamp in stamps]
    assert len(minutes) >= 4
    gaps = [later - earlier for earlier, later in zip(minutes, minutes[1:])]
    assert all(5.0 <= gap < 5.0 + 2 * SPEED / 60 for gap in gaps), minutes  # every 5 min (+ one 1 s tick)
    assert (directory / "harness-state").exists()
