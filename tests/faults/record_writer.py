"""One record writer of campaign part 3, run as its own process (and SIGKILLed at random).

``record_writer.py SEAT LOG FIRST COUNT TOKEN SEQ``: writes ``COUNT`` times, alternating the
seat's harness-context (a fresh percent bucket each time) and harness-state (idle/active), with
the real writers of one session (shared incarnation ``TOKEN``, claimed sequence ``SEQ``). Before
each publication the exact bytes' digest are appended to ``LOG`` as one line (``ctx|state
<sha256>``), after it ``done <index>``: so every byte sequence that can land is known in advance.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def main() -> int:
    seat, log, first, count, token, seq = sys.argv[1:7]
    first, count, seq = int(first), int(count), int(seq)
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    from st2.base.clock import SYSTEM_CLOCK
    from st2.records import harness_context, harness_state, placement

    original = placement.publish_record

    def announced(seat_dir, record_name, data, staging_name, mode=0o644):
        kind = "ctx" if record_name == harness_context.RECORD_NAME else "state"
        os.write(descriptor, f"{kind} {hashlib.sha256(data).hexdigest()}\n".encode())
        return original(seat_dir, record_name, data, staging_name, mode)

    placement.publish_record = announced
    agent = "h.writer"
    context = harness_context.Writer(Path(seat), agent, "claude", token, SYSTEM_CLOCK)
    state = harness_state.Writer(Path(seat), agent, "claude", SYSTEM_CLOCK, pty_session="h.writer",
                                 incarnation=token, claimed_seq=seq)
    for index in range(first, first + count):
        if index % 2 == 0:
            percent = float((index * 37 + os.getpid()) % 100) + 0.5
            context.publish(harness_context.Reading(used_tokens=index * 10, window_tokens=200000,
                                                    used_percent=percent, model="m"))
        else:
            state.observe("active" if (index // 2) % 2 else "idle", input_buffer="empty")
        os.write(descriptor, f"done {index}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
