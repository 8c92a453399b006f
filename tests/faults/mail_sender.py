"""One sender of campaign part 2, run as its own process.

``mail_sender.py CATALOG SENDER LOG COUNT RECIPIENT...``: sends ``COUNT`` messages through the
real bus (``st2.bus.send.send``), round-robin over the recipients, subject ``<sender> m<i>``.
Its clock never repeats a millisecond, so one sender's messages to a seat sort in send order
(the filename is the FIFO key). After each send, one line ``<recipient>\t<filename>\t<subject>``
is appended to ``LOG``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


class StrictlyIncreasing:
    """The system clock, but each reading at least a millisecond past the previous one."""

    def __init__(self) -> None:
        from st2.base.clock import SYSTEM_CLOCK

        self.clock = SYSTEM_CLOCK
        self.last = 0

    def wall_ms(self) -> int:
        self.last = max(self.clock.wall_ms(), self.last + 1)
        return self.last

    def __getattr__(self, name):
        return getattr(self.clock, name)


def main() -> int:
    catalog, sender, log, count, *recipients = sys.argv[1:]
    from st2.bus.addressing import resolve_seat
    from st2.bus.send import send

    seats = [resolve_seat(Path(catalog), name) for name in recipients]
    clock = StrictlyIncreasing()
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    for index in range(int(count)):
        seat = seats[index % len(seats)]
        subject = f"{sender} m{index}"
        receipt = send(Path(catalog), seat, sender=sender, body=f"message {index} from {sender}",
                       subject=subject, clock=clock)
        os.write(descriptor, f"{receipt.recipient}\t{receipt.filename}\t{subject}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
