"""Record writers under real concurrency and real SIGKILL (on the ``fast_catalog`` tmpfs root)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from st2.base.clock import Clock
from st2.records import harness_context, placement  # noqa: F401  (imported before fork)
import st2.fs.lock  # noqa: F401,E402  (imported before fork: a child must not spend its life importing)
from support import REPO

pytestmark = pytest.mark.process

PROCESSES, WRITES = 4, 500


@pytest.fixture
def fast_seat(fast_catalog: Path) -> Path:
    seat = fast_catalog / "agents" / "host" / "worker"
    seat.mkdir(parents=True)
    return seat


CONCURRENT_WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from st2.base.clock import Clock
    from st2.records.harness_context import CompactionEdge, Writer

    seat, index, count, log = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    writer = Writer(seat, "host.worker", "codex", f"process-{index}", Clock())
    landed = []
    for _ in range(count):
        assert writer.publish(None, CompactionEdge("auto"))
        landed.append([writer.last_written.written_at_ms, writer.last_written.compactions])
    log.write_text(json.dumps(landed))
    """
)


def test_four_processes_times_five_hundred_writes_serialize_without_tearing(fast_seat: Path, tmp_path: Path) -> None:
    record = fast_seat / "harness-context"
    torn: list[bytes] = []
    observed_stamps: list[int] = []
    stop = threading.Event()

    def reader_loop() -> None:
        while not stop.is_set():
            try:
                data = record.read_bytes()
            except FileNotFoundError:
                continue
            try:
                stamp = harness_context.decode(data).written_at_ms
            except Exception:
                torn.append(data)
                continue
            if not observed_stamps or observed_stamps[-1] != stamp:
                observed_stamps.append(stamp)
            time.sleep(0.0002)  # sample, without taking a core from the writers

    reader = threading.Thread(target=reader_loop)
    reader.start()
    logs = [tmp_path / f"landed-{index}.json" for index in range(PROCESSES)]
    children = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITER, str(fast_seat), str(index), str(WRITES),
                                  str(log)], cwd=REPO) for index, log in enumerate(logs)]
    try:
        assert [child.wait(timeout=120) for child in children] == [0] * PROCESSES
    finally:
        stop.set()
        reader.join()
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert torn == []
    landed = sorted(tuple(entry) for log in logs for entry in json.loads(log.read_text()))
    # Every landed write parsed, carried a distinct stamp, and the stamps order the writes exactly
    # as the lock serialized them: the compaction count each write incremented on disk is 1..2000.
    assert len({stamp for stamp, _ in landed}) == PROCESSES * WRITES
    assert [count for _, count in landed] == list(range(1, PROCESSES * WRITES + 1))
    assert observed_stamps == sorted(set(observed_stamps)) and len(observed_stamps) > 1
    assert harness_context.decode(record.read_bytes()).compactions == PROCESSES * WRITES
    assert sorted(path.name for path in fast_seat.iterdir()) == [".harness-context.lock", "harness-context"]
    staging = fast_seat.parents[2] / ".st2" / "harness-context-staging"
    assert list(staging.iterdir()) == []


def _write_forever(seat: Path) -> None:
    """The killed child's body: publish compaction edges until SIGKILL arrives."""
    try:
        writer = harness_context.Writer(seat, "host.worker", "codex", f"child-{os.getpid()}", Clock())
        while True:
            writer.publish(None, harness_context.CompactionEdge("auto"))
    finally:
        os._exit(1)


def test_two_hundred_random_sigkills_leave_the_previous_or_the_next_complete_record(fast_seat: Path) -> None:
    record = fast_seat / "harness-context"
    seed = random.randrange(2**32)
    chooser = random.Random(seed)
    previous = b""
    previous_count = 0
    advanced = 0
    kills = 0
    # At least 200 kills, and more until 50 of them landed after a write: on a loaded machine a
    # short random delay often ends a writer before its first write, which proves nothing.
    while kills < 200 or (advanced < 50 and kills < 2000):
        kills += 1
        child = os.fork()
        if child == 0:
            _write_forever(fast_seat)
        time.sleep(chooser.uniform(0.001, 0.008))
        os.kill(child, signal.SIGKILL)
        _, status = os.waitpid(child, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        if not record.exists():
            assert previous == b"", f"seed {seed}: the record vanished"
            continue
        data = record.read_bytes()
        current = harness_context.decode(data)  # complete: parses, and is exactly what a writer encodes
        assert harness_context.encode(current) == data, f"seed {seed}: torn record {data!r}"
        if data == previous:
            continue
        assert current.compactions > previous_count, f"seed {seed}: the record went backwards"
        previous, previous_count = data, current.compactions
        advanced += 1
    assert advanced >= 50, f"seed {seed}: too few kills landed after a write to mean anything"
    assert [path.name for path in fast_seat.iterdir() if path.name not in (".harness-context.lock",
                                                                          "harness-context")] == []
