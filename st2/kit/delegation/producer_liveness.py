"""``st2 check producer-liveness``: is any launch record naming a live producer?

``PATH`` is one ``.run`` record or a directory, read in set mode over its ``*.run`` records
(one level, no walk). A PATH that does not exist is an empty set: the scratch dir is created
by the first launcher, and no record means nothing recorded as running.

Exit 0, green: no live producer; prints ``check-producer-liveness: clean (<n> records, no live
producer)``. Exit 1, red: one finding per record naming a live PID. Exit 2: a record does not
parse, or the directory cannot be read — "could not be established", never "nothing running".
Over a set, exit 2 wins over red, which wins over green.

``--record KEY [--pid N]`` writes ``<scratch>/<KEY>.run`` atomically for a launcher that wants
a record, carrying the producer's start time so a reused PID is never read as it. The
template's builtin spelling (``echo "pid=$! run=KEY" > .tmp/KEY.run``) reads the same.

Standard library only: the turn-end hook spawns this as its default reader.
"""

from __future__ import annotations

import os
import sys

from st2.kit.delegation import launch_record, process_liveness
from st2.kit.delegation.checkout import scratch_dir
from st2.front import Shape, ShapeRefusal, parse
from st2.fs.read import RUNTIME_LIMIT, read_bounded

GATE = "check-producer-liveness"
GREEN, RED, UNREADABLE = 0, 1, 2

USAGE = (
    f"usage: st2 check producer-liveness PATH\n"
    f"       st2 check producer-liveness --record KEY [--pid N]\n"
)


class Reading:
    """The reading over a record set: the exit status and the lines to print."""

    def __init__(self) -> None:
        self.status = GREEN
        self.records = 0
        self.findings: list[str] = []

    def lines(self) -> list[str]:
        if self.status == GREEN:
            noun = "record" if self.records == 1 else "records"
            return [f"{GATE}: clean ({self.records} {noun}, no live producer)"]
        return self.findings


def read_record(path: str, reading: Reading) -> None:
    """Fold one record file into ``reading``."""
    reading.records += 1
    try:
        text = read_bounded(path, RUNTIME_LIMIT).decode("utf-8", "replace")
        record = launch_record.parse(text)
    except OSError as error:
        reading.status = UNREADABLE
        reading.findings.append(f"{GATE}: {path}: cannot be read: {error.strerror}")
        reading.findings.append("help: a record that cannot be read establishes nothing; fix its permissions or delete it")
        return
    except launch_record.MalformedRecord as error:
        reading.status = UNREADABLE
        reading.findings.append(f"{GATE}: {path}: does not parse: {error}")
        reading.findings.append(
            "help: a launch record is one line, pid=<n> run=<key> (optionally start=<ticks>); "
            "rewrite it, or delete it if its producer has exited"
        )
        return
    if process_liveness.is_alive(record.pid, record.start):
        if reading.status == GREEN:
            reading.status = RED
        reading.findings.append(f"{GATE}: {path}: pid={record.pid} run={record.run} names a live producer")
        reading.findings.append(
            f"help: wait for it on its own artifact (while kill -0 {record.pid} 2>/dev/null; do sleep 5; done), "
            "or delete the record once the producer has exited"
        )


def read_path(path: str) -> Reading:
    """The reading over one record or a directory's ``*.run`` set (see module docstring)."""
    reading = Reading()
    if os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError as error:
            reading.status = UNREADABLE
            reading.findings.append(f"{GATE}: {path}: the directory cannot be read: {error.strerror}")
            return reading
        for name in names:
            if launch_record.key_of(name) is None:
                continue
            member = os.path.join(path, name)
            if os.path.isdir(member):
                continue
            read_record(member, reading)
        return reading
    if not os.path.lexists(path):
        return reading
    read_record(path, reading)
    return reading


def write_record(directory: str, key: str, pid: int) -> tuple[str, launch_record.LaunchRecord] | None:
    """Publish ``<directory>/<key>.run`` for ``pid`` atomically, carrying its start time.
    Return the path and record written, or None when ``pid`` is not running (an exited
    producer owes no record). Raise ValueError on a key outside the record key pattern."""
    from st2.fs.atomic import publish  # only the writer needs it

    if not launch_record.valid_key(key):
        raise ValueError(f"run key {key!r} is not [A-Za-z0-9][A-Za-z0-9._-]*")
    ticks = process_liveness.start_ticks(pid)
    if ticks is None:
        return None
    record = launch_record.LaunchRecord(pid=pid, run=key, start=ticks)
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, key + launch_record.SUFFIX)
    publish(target, record.render().encode(), directory)
    return target, record


# ``PATH``, or ``--record KEY [--pid N]``: one shape, the two forms told apart by its reading.
WORDS = Shape(("--record", "--pid"), positionals=1, equals=False)


def main(argv: list[str]) -> int:
    """Hot-path entry: ``st2 check producer-liveness PATH | --record KEY [--pid N]``."""
    out, err = sys.stdout, sys.stderr
    try:
        words = parse(list(argv), WORDS)
    except ShapeRefusal:
        err.write(USAGE)
        return 2
    if "--record" in words.values and not words.positionals:
        return _record_command(words.values["--record"], words.values.get("--pid"), out, err)
    if "--record" in words.values or "--pid" in words.values or not words.positionals:
        err.write(USAGE)
        return 2
    reading = read_path(words.positionals[0])
    for line in reading.lines():
        out.write(line + "\n")
    return reading.status


def _record_command(key: str, pid_word: str | None, out, err) -> int:
    pid = os.getppid()
    if pid_word is not None:
        pid = launch_record.process_id(pid_word)
        if pid is None:
            err.write(f"{GATE}: --pid {pid_word[:24]!r} is not a positive process id\n")
            return 2
    directory = scratch_dir(os.environ, os.getcwd())
    try:
        written = write_record(directory, key, pid)
    except ValueError as error:
        err.write(f"{GATE}: {error}\n")
        return 2
    except OSError as error:
        err.write(f"{GATE}: cannot write the record under {directory}: {error}\n")
        return 2
    if written is None:
        out.write(f"{GATE}: pid {pid} is not running; an exited producer owes no record, none written\n")
        return 0
    path, record = written
    out.write(f"{GATE}: wrote {path}: {record.render()}")
    return 0
