"""Campaign part 2 — mail under fire.

Four DING seats under a real ``st2 up``, each a stand-in agent TUI (tests/ding/standin_tui.py)
in its own tmux server with its supervised ``st2 ding`` notifier; eight sender processes each
send their share (full size 500 each, 4,000 in all) round-robin to the four seats through the
real bus, while this process SIGKILLs a random notifier (its whole process group) or the
supervisor (then starts a new one) each time delivery has made a random amount of progress.

"Noticed exactly once" under the DING contract (docs/delivery.md
§Screen-verified notice): a notifier that finds no ownership record turns its startup backlog into one generic
notice; one that finds its record resumes it and never re-pastes. Every notifier here first
starts on an empty inbox (the campaign waits for each seat's ownership record before any mail),
so no message may ever be covered by the generic notice: every message must be submitted as its
own ``[DING] new st2 message: [id:…]`` notice exactly once, and a generic notice at all means an
ownership record was lost.

- lost: a message whose notice never reached the TUI's submitted transcript;
- double_paste: a message whose notice was pasted (one bracketed-paste frame in the TUI's raw
  input) or submitted more than once, plus every generic backlog notice;
- FIFO per seat (a note, asserted by the tier): one sender's messages to one seat are submitted
  in the order that sender sent them (a sender's filenames increase, and filenames are the FIFO
  key; two senders' concurrent messages have no order to keep).

``RESULT lost=<n> double_paste=<n> messages=<n>``.
"""

from __future__ import annotations

import ast
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from fault_common import Verdict, poll_for, scaled
from supervisor_support import Fleet

HERE = Path(__file__).resolve().parent
STANDIN = HERE.parent / "ding" / "standin_tui.py"
REPO = HERE.parent.parent
SEATS = 4
SENDERS = 8
FULL_MESSAGES_EACH = 500
FULL_NOTIFIER_KILLS = 120
FULL_SUPERVISOR_KILLS = 20
STALL_SECONDS = 120.0      # no delivery progress for this long ends the campaign (counted lost)


def _events(path: Path) -> list[tuple[str, str]]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    rows = []
    for line in lines:
        name, _, text = line.partition("\t")
        rows.append((name, ast.literal_eval(text) if text else ""))
    return rows


def submitted(path: Path) -> int:
    """How many submits the stand-in TUI logged in its event log ``path`` (0 before it starts)."""
    try:
        return path.read_bytes().count(b"\nsubmit\t") + path.read_bytes().startswith(b"submit\t")
    except FileNotFoundError:
        return 0


def run(scale: float, base: Path, seed: int = 20261202) -> Verdict:
    each = scaled(FULL_MESSAGES_EACH, scale, floor=8)
    notifier_kills_wanted = scaled(FULL_NOTIFIER_KILLS, scale, floor=8)
    supervisor_kills_wanted = scaled(FULL_SUPERVISOR_KILLS, scale, floor=3)
    total = SENDERS * each
    generator = random.Random(seed)
    fleet = Fleet(Path(base))
    seats = [f"d{index}" for index in range(SEATS)]
    files = {identity: standin_files(fleet.base, identity) for identity in seats}
    for identity in seats:
        fleet.seat(identity, standin_seat(*files[identity]))
    for index in range(SENDERS):
        principal = fleet.catalog / "principals" / "h" / f"sender-{index}"
        principal.mkdir(parents=True)
        (principal / "principal.kdl").write_text(f'principal "sender-{index}" {{\n}}\n')
    ownership = {identity: fleet.scope.directory / "ding" / f"h.{identity}.json" for identity in seats}
    evidence: list[str] = []
    senders: list[subprocess.Popen] = []
    kills = {"notifier": 0, "supervisor": 0}
    try:
        fleet.up("--interval", "60s")
        ready = poll_for(lambda: len(fleet.running()) == 2 * SEATS
                         and all(path.exists() for path in ownership.values()), timeout=120, step=0.1)
        if not ready:
            raise AssertionError(f"the DING seats never came up: {fleet.log()[-3000:]}")
        logs = [fleet.base / f"sender-{index}.log" for index in range(SENDERS)]
        for index in range(SENDERS):
            senders.append(subprocess.Popen(
                [sys.executable, str(HERE / "mail_sender.py"), str(fleet.catalog), f"h.sender-{index}",
                 str(logs[index]), str(each), *seats],
                cwd=REPO, env=fleet.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))

        def delivered() -> int:
            return sum(submitted(events) for _, events in files.values())

        step = max(2, total // (notifier_kills_wanted + supervisor_kills_wanted))
        while kills["notifier"] < notifier_kills_wanted or kills["supervisor"] < supervisor_kills_wanted:
            target = delivered() + generator.randint(1, step)
            if not poll_for(lambda: delivered() >= target, timeout=STALL_SECONDS, step=0.02):
                evidence.append(f"delivery stalled at {delivered()} of {total} while killing")
                break
            want_supervisor = kills["supervisor"] < supervisor_kills_wanted and (
                kills["notifier"] >= notifier_kills_wanted or generator.random() < 0.15)
            if want_supervisor:
                supervisor = fleet.supervisors[-1]
                supervisor.send_signal(signal.SIGKILL)
                supervisor.wait(timeout=30)
                kills["supervisor"] += 1
                if generator.random() < 0.5:     # and a notifier dies while nobody supervises
                    kills["notifier"] += kill_notifier(fleet, generator.choice(seats))
                fleet.up("--interval", "60s")
                index = len(fleet.logs) - 1
                poll_for(lambda: "adopted" in fleet.log(index), timeout=60, step=0.05)
            else:
                kills["notifier"] += kill_notifier(fleet, generator.choice(seats))
        for sender in senders:
            if sender.wait(timeout=300) != 0:
                raise AssertionError(f"a sender failed: {sender.stderr.read().decode()[-2000:]}")
        previous = -1
        while delivered() < total:                 # bounded by progress: a stall ends it
            now = delivered()
            if now == previous:
                evidence.append(f"delivery stalled at {now} of {total}")
                break
            previous = now
            poll_for(lambda: delivered() > now or delivered() >= total, timeout=STALL_SECONDS, step=0.05)
        for path in ownership.values():
            if not path.exists():
                evidence.append(f"ownership record {path} is gone")
    finally:
        for sender in senders:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
        fleet.cleanup()

    sent = read_send_logs(logs, seats)
    lost, double, backlog, fifo, foreign = tally(files, sent, evidence)
    messages = sum(len(rows) for rows in sent.values())
    return Verdict("mail-under-fire", {"lost": lost + (total - messages), "double_paste": double + backlog,
                                       "messages": messages}, evidence,
                   {"notifier_kills": kills["notifier"], "supervisor_kills": kills["supervisor"],
                    "fifo_violations": fifo, "foreign_submits": foreign, "backlog_notices": backlog})


def standin_files(base: Path, identity: str) -> tuple[Path, Path]:
    """The stand-in TUI's byte log and event log for seat ``identity`` (a fresh folder under ``base``)."""
    directory = base / "tui" / identity
    directory.mkdir(parents=True)
    return directory / "standin.bytes", directory / "standin.events"


def standin_seat(received: Path, events: Path) -> str:
    """The declaration body of a DING seat running the stand-in TUI, restarted at once whenever
    it dies."""
    return (f'    argv "{sys.executable}" "{STANDIN}" "--bytes" "{received}" "--events" "{events}"\n'
            '    ding\n'
            '    restart { attempts 100000; interval "60s"; delay "0s"; mode "delay"; }')


def read_send_logs(logs: list[Path], seats: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """identity -> ``(filename, subject, sender)`` of every message the mail_sender.py processes
    logging to ``logs`` sent to it, in send order (a mail_sender subject starts with its sender)."""
    sent: dict[str, list[tuple[str, str, str]]] = {identity: [] for identity in seats}
    for index, log in enumerate(logs):
        for line in log.read_text().splitlines():
            recipient, filename, subject = line.split("\t")
            sent[recipient.split(".", 1)[1]].append((filename, subject, subject.split(" ", 1)[0]))
    return sent


def tally(files: dict[str, tuple[Path, Path]], sent: dict[str, list[tuple[str, str, str]]],
          evidence: list[str]) -> tuple[int, int, int, int, int]:
    """Compare what each stand-in seat was submitted and pasted (``files``) with what was sent
    to it: ``(lost, double, backlog, fifo, foreign)``, each finding also appended to ``evidence``."""
    from st2.ding.notice import BACKLOG_NOTICE, PASTE_END, PASTE_START, notice_text as plain_notice, shell_comment

    def notice_text(name, subject, sender):  # a plain seat takes the notice as an inert shell comment
        return shell_comment(plain_notice(name, subject, sender))

    lost = double = backlog = fifo = foreign = 0
    for identity in sent:
        events = _events(files[identity][1])
        submits = [text for kind, text in events if kind == "submit"]
        received = files[identity][0].read_bytes() if files[identity][0].exists() else b""
        notices = {notice_text(name, subject, sender): (name, sender) for name, subject, sender in sent[identity]}
        position = {}
        for order, text in enumerate(submits):
            if text == shell_comment(BACKLOG_NOTICE):
                backlog += 1
                evidence.append(f"{identity}: a generic backlog notice at position {order}: an ownership record was lost")
            elif text not in notices:
                foreign += 1
                evidence.append(f"{identity}: submitted text that is no message's notice: {text[:120]!r}")
            else:
                position.setdefault(text, order)
        for notice, (name, sender) in notices.items():
            submitted = submits.count(notice)
            pasted = received.count((PASTE_START + notice + PASTE_END).encode())
            if submitted == 0:
                lost += 1
                evidence.append(f"{identity}: {name} from {sender} was never noticed (pasted {pasted}x)")
            elif submitted > 1 or pasted > 1:
                double += 1
                evidence.append(f"{identity}: {name} submitted {submitted}x, pasted {pasted}x")
        for sender in {sender for _, _, sender in sent[identity]}:
            order = [position[notice_text(name, subject, s)] for name, subject, s in sent[identity]
                     if s == sender and notice_text(name, subject, s) in position]
            if order != sorted(order):
                fifo += 1
                evidence.append(f"{identity}: {sender}'s messages were noticed out of send order")
    return lost, double, backlog, fifo, foreign


def kill_notifier(fleet: Fleet, identity: str) -> int:
    """SIGKILL the process group of seat ``identity``'s live notifier; 1 when one was killed."""
    from st2.process.identity import observe

    try:
        record = fleet.record(f"{fleet.host}.{identity}.ding")
    except Exception:
        return 0
    if record is None:
        return 0
    current = observe(record.pid)
    if current is None or abs(current.start_time - record.start_time) >= 0.05:
        return 0
    try:
        os.killpg(record.pid, signal.SIGKILL)
    except ProcessLookupError:
        return 0
    return 1
