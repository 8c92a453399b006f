"""Campaign part 6 — a hostile catalog: every class of issue 15, through the real CLI.

Each class is one case (``CASES``), run against its own fleet; every command runs under a bound
(a command past it is killed and counted as a hang):

- fifo: FIFOs planted as catalog.kdl, a seat's status, harness-state, harness-context, an inbox
  message and the usage snapshot — validate, agents, tasks, doctor, record show, message ls/read,
  usage verdict;
- huge-declaration: one generated agent.kdl of unknown nodes (full size 280,000 nodes, ~5 MB) —
  validate, agents, tasks, doctor, up --once;
- deep-nesting: a declaration nested 500 deep — the same verbs;
- duplicate-fleet: one catalog reached by its path, through a symlink, and with a second
  XDG_STATE_HOME — a seat must run once whatever names it, and ``st2 down`` from the other
  environment must stop it;
- shell-injection: a DING into an interactive shell seat with an empty prompt whose mail subject
  is shell code — nothing it names may run;
- archive-symlink: ``resources/archive`` a symlink out of the catalog — ``message archive``
  must write nothing through it;
- identities: a seat named with an escape sequence, and a seat ``x`` declaring ``ding`` next to a
  seat named ``x.ding`` (one runtime id claimed twice) — no raw control byte reaches the
  terminal, validate refuses the collision.

- hangs: commands past their bound;
- escapes: a traceback reaching the user, a raw control byte in output, injected shell code that
  ran, a write through a link out of the catalog;
- duplicates: a second live copy of one seat, a fleet another environment cannot stop, a
  runtime-id collision validate accepts.

``RESULT hangs=<n> escapes=<n> duplicates=<n>``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from fault_common import Verdict, poll_for, scaled
from supervisor_support import Fleet

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BOUND_SECONDS = 30.0
FULL_UNKNOWN_NODES = 280_000
MARKER = 30_000_000 + (os.getpid() % 100_000) * 10
MESSAGE = "1796000000000-abcdef.md"


class Tally:
    def __init__(self) -> None:
        self.hangs = self.escapes = self.duplicates = 0
        self.evidence: list[str] = []
        self.commands = 0

    def note(self, kind: str, text: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.evidence.append(f"{kind}: {text}")

    def figures(self) -> dict[str, int]:
        return {"hangs": self.hangs, "escapes": self.escapes, "duplicates": self.duplicates}


def st2(tally: Tally, label: str, arguments: list[str], env: dict, bound: float = BOUND_SECONDS,
        input: str | None = None, cwd: Path = REPO):
    """Run ``st2 <arguments>`` under ``bound``; count a hang, a traceback, or a raw control byte
    (anything below 0x20 but tab/newline, and DEL) in what it prints."""
    tally.commands += 1
    # Its own process group, killed whole past the bound: a child it spawned that is stuck (on a
    # FIFO, say) and holds the output pipes can never make the bound itself hang.
    process = subprocess.Popen([sys.executable, "-m", "st2", *arguments], env=env, cwd=cwd,
                               stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(input.encode() if input is not None else None, timeout=bound)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=10)
        tally.note("hangs", f"{label}: st2 {' '.join(arguments)[:80]} did not return within {bound:g} s")
        return None
    result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    output = result.stdout + result.stderr
    if b"Traceback (most recent call last)" in output:
        tally.note("escapes", f"{label}: st2 {' '.join(arguments)[:80]} printed a traceback: "
                              f"{result.stderr.decode(errors='replace')[-300:]!r}")
    raw = sorted({byte for byte in output if (byte < 0x20 and byte not in (0x09, 0x0A)) or byte == 0x7F})
    if raw:
        tally.note("escapes", f"{label}: st2 {' '.join(arguments)[:80]} printed raw control bytes {raw}")
    return result


def _copies(marker: int) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if len(cmdline) == 2 and cmdline[0].endswith("sleep") and cmdline[1] == str(marker):
            found.append(process)
    return found


def _kill_copies(marker: int) -> None:
    for process in _copies(marker):
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass


READ_VERBS = (["validate"], ["agents", "--json"], ["tasks", "--json"], ["doctor"])


# --- the classes ---------------------------------------------------------------------------------


def case_fifo(fleet: Fleet, tally: Tally, scale: float) -> None:
    seat = fleet.seat("a", f'    argv "sleep" "{MARKER}"')
    (seat / "resources" / "inbox").mkdir(parents=True)
    for name in ("status", "harness-state", "harness-context"):
        os.mkfifo(seat / name)
    os.mkfifo(seat / "resources" / "inbox" / MESSAGE)
    os.mkfifo(fleet.catalog / "catalog.kdl")
    usage = fleet.base / "usage.txt"
    os.mkfifo(usage)
    env = {**fleet.env, "DELEGATION_KIT_USAGE_FILE": str(usage)}
    for verbs in (*READ_VERBS, ["record", "show", "a"], ["message", "ls", "--as", "h.a"],
                  ["message", "read", MESSAGE, "--as", "h.a"], ["usage", "verdict"]):
        st2(tally, "fifo", [*verbs, "--host", "h"] if verbs[0] != "usage" else verbs, env)


def _huge_declaration(nodes: int) -> str:
    return 'agent "big" {\n    argv "sleep" "1"\n' + "".join(f"    unknown-{index} {index}\n" for index in range(nodes)) + "}\n"


def case_huge_declaration(fleet: Fleet, tally: Tally, scale: float) -> None:
    nodes = scaled(FULL_UNKNOWN_NODES, scale, floor=1000)
    seat = fleet.catalog / "agents" / "h" / "big"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text(_huge_declaration(nodes))
    fleet.seat("ok", f'    argv "sleep" "{MARKER}"')
    # Linear work is well inside this bound at any size; the quadratic diagnostics of issue 15
    # overrun it already at a tenth. One overrun proves the class: the rest are not waited for.
    bound = 5.0 + 25.0 * scale
    for verbs in (*READ_VERBS, ["up", "--once"]):
        if st2(tally, f"huge-declaration ({nodes} nodes)", [*verbs, "--host", "h"], fleet.env, bound=bound) is None:
            return


def case_deep_nesting(fleet: Fleet, tally: Tally, scale: float) -> None:
    seat = fleet.catalog / "agents" / "h" / "deep"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "deep" {\n' + "    n { " * 500 + "}" * 500 + "\n}\n")
    fleet.seat("ok", f'    argv "sleep" "{MARKER}"')
    for verbs in (*READ_VERBS, ["up", "--once"], ["ls"]):
        st2(tally, "deep-nesting", [*verbs, "--host", "h"], fleet.env)


def case_duplicate_fleet(fleet: Fleet, tally: Tally, scale: float) -> None:
    fleet.seat("dup", f'    argv "sleep" "{MARKER}"')
    link = fleet.base / "link"
    os.symlink(fleet.catalog, link)
    first = st2(tally, "duplicate-fleet", ["up", "--once", "--host", "h"], fleet.env)
    if first is None or not poll_for(lambda: len(_copies(MARKER)) >= 1, timeout=20):
        tally.note("duplicates", "the seat never started from its own path")
        return
    other_state = {**fleet.env, "XDG_STATE_HOME": str(fleet.base / "s2")}
    through_link = {**fleet.env, "CATALOG": str(link)}
    for label, env in (("symlinked catalog path", through_link), ("second XDG_STATE_HOME", other_state),
                       ("both", {**other_state, "CATALOG": str(link)})):
        st2(tally, "duplicate-fleet", ["up", "--once", "--host", "h"], env)
        copies = len(_copies(MARKER))
        if copies > 1:
            tally.note("duplicates", f"{label}: {copies} live copies of h.dup")
            _kill_copies(MARKER)
            st2(tally, "duplicate-fleet", ["up", "--once", "--host", "h"], fleet.env)
    st2(tally, "duplicate-fleet", ["down", "--host", "h"], {**other_state, "CATALOG": str(link)})
    if poll_for(lambda: not _copies(MARKER), timeout=10) is False:
        tally.note("duplicates", "st2 down from another path and XDG_STATE_HOME left the fleet running")
    _kill_copies(MARKER)


def case_shell_injection(fleet: Fleet, tally: Tally, scale: float) -> None:
    pwned = fleet.base / "pwned"
    fleet.seat("shell", '    argv "env" "PS1=" "PS2=" "bash" "--norc" "--noprofile" "-i"\n    ding')
    fleet.seat("peer", f'    argv "sleep" "{MARKER}"')
    ownership = fleet.scope.directory / "ding" / "h.shell.json"
    fleet.up("--interval", "60s")
    if not poll_for(lambda: ownership.exists(), timeout=60, step=0.1):
        tally.note("escapes", f"shell-injection: the notifier never started: {fleet.log()[-800:]}")
        return
    subjects = [f"hi; touch {pwned}-1 #", f"$(touch {pwned}-2)", f"`touch {pwned}-3`", f"x\ntouch {pwned}-4"]
    sent = 0                                   # a subject with a newline is refused at send
    for subject in subjects:
        result = st2(tally, "shell-injection", ["message", "send", "shell", "--as", "h.peer", "--subject", subject,
                                                "-m", "body", "--host", "h"], fleet.env)
        sent += result is not None and result.returncode == 0
    # Bounded by what the notifier does: stop as soon as the shell ran something, or once every
    # sent message's notice was delivered (settled in the ownership record), else after 20 s (a notice
    # that is never auto-submitted into a shell holds, which is one of the two right answers).
    import json

    def settled() -> int:
        try:
            return len(json.loads(ownership.read_text()).get("settled", []))
        except (OSError, ValueError):
            return 0

    poll_for(lambda: list(fleet.base.glob("pwned*")) or settled() >= sent, timeout=20, step=0.1)
    ran = sorted(path.name for path in fleet.base.glob("pwned*"))
    if ran:
        tally.note("escapes", f"shell-injection: the shell ran the mail subject: {ran}")


def case_archive_symlink(fleet: Fleet, tally: Tally, scale: float) -> None:
    seat = fleet.seat("arch", f'    argv "sleep" "{MARKER}"')
    inbox = seat / "resources" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / MESSAGE).write_text("---\nfrom: h.peer\nsubject: s\n---\nbody\n")
    outside = fleet.base / "outside"
    outside.mkdir()
    os.symlink(outside, seat / "resources" / "archive")
    result = st2(tally, "archive-symlink", ["message", "archive", MESSAGE, "--as", "h.arch", "--host", "h"], fleet.env)
    if os.listdir(outside):
        tally.note("escapes", f"archive-symlink: message archive wrote through the link: {os.listdir(outside)}")
    if result is not None and result.returncode == 0:
        tally.evidence.append("archive-symlink: message archive exited 0 through a symlinked archive")
    for verbs in (["validate"], ["doctor"]):
        st2(tally, "archive-symlink", [*verbs, "--host", "h"], fleet.env)


def case_identities(fleet: Fleet, tally: Tally, scale: float) -> None:
    hostile = "esc\x1b[31mred"
    directory = fleet.catalog / "agents" / "h" / hostile
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "esc\\u{{1b}}[31mred" {{\n    argv "sleep" "{MARKER}"\n}}\n')
    fleet.seat("x", f'    argv "sleep" "{MARKER + 1}"\n    ding')
    fleet.seat("x.ding", f'    argv "sleep" "{MARKER + 2}"')
    validate = st2(tally, "identities", ["validate", "--host", "h"], fleet.env)
    if validate is not None and validate.returncode == 0:
        tally.note("duplicates", "identities: validate accepts seat x's ding next to a seat named x.ding")
    for verbs in (["agents", "--json"], ["agents"], ["ls"], ["up", "--once"], ["tasks", "--json"], ["doctor"]):
        st2(tally, "identities", [*verbs, "--host", "h"], fleet.env)


CASES = {
    "fifo": case_fifo,
    "huge-declaration": case_huge_declaration,
    "deep-nesting": case_deep_nesting,
    "duplicate-fleet": case_duplicate_fleet,
    "shell-injection": case_shell_injection,
    "archive-symlink": case_archive_symlink,
    "identities": case_identities,
}
# The second campaign's classes (issue 31) run in the same part, under the same tally.
from fault_second_campaign import CASES as SECOND_CAMPAIGN  # noqa: E402

CASES.update(SECOND_CAMPAIGN)


def run_case(name: str, scale: float, base: Path) -> Tally:
    tally = Tally()
    fleet = Fleet(Path(base))
    try:
        CASES[name](fleet, tally, scale)
    finally:
        # The planted FIFOs go first: the cleanup below reads the catalog in this process.
        for path in Path(base).rglob("*"):
            if path.is_fifo():
                path.unlink()
        for process in fleet.supervisors:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
        fleet.cleanup()
        for offset in range(3):
            _kill_copies(MARKER + offset)
        # FIFOs and links are removed with the tree; nothing else of ours stays.
        shutil.rmtree(base, ignore_errors=True)
    return tally


def run(scale: float, base: Path, seed: int = 0) -> Verdict:
    totals = Tally()
    per_case = {}
    for name in CASES:
        tally = run_case(name, scale, Path(base) / name)
        per_case[name] = tally.figures()
        for key, value in tally.figures().items():
            setattr(totals, key, getattr(totals, key) + value)
        totals.commands += tally.commands
        totals.evidence.extend(f"{name}: {line}" for line in tally.evidence[:6])
    return Verdict("hostile-catalog", totals.figures(), totals.evidence,
                   {"commands": totals.commands, "per_case": per_case})
