"""Campaign part 6, second round: the classes of issue 31's hostile campaign, through the real
CLI, each command under the part's bound and tallied as the first round's are (a hang, a
traceback, a raw control byte), plus what each class must not do:

- durations: a 400- and a 5,000-digit ``restart { delay }``, ``archive-after`` and notify
  ``timeout`` — every reading verb, ``up --once``, ``top --once`` and ``catalog graph --json``;
  validate must refuse each at its line (a duplicate: validate accepting an unbounded duration);
- deep-json: hook and status-line payloads nested 1,000 deep — the guard must answer with its
  degraded verdict (an escape: a guard that answers nothing);
- big-numbers: a 5,000-digit pid and start in a launch record — ``check producer-liveness`` must
  exit 2;
- far-future: a seat's own records stamped past the year 9999 — events, top, agents, doctor;
- addresses: a seat whose ``address`` is another seat's identity, and an identity of the
  conflict-copy shape — validate must refuse both (a duplicate: one name answering for two);
- foreign-keys: ``st2 foreign close ..`` and a FIFO as a foreign run's file — nothing outside
  ``.tmp/foreign/`` may change (an escape);
- mail-modes: mail sent under umask 022 — no message, sent copy or log readable by another user
  (an escape).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from supervisor_support import Fleet

DIGITS_400 = "9" * 400
DIGITS_5000 = "9" * 5000
DEEP = "[" * 1000 + "]" * 1000
FAR_FUTURE_MS = 10 ** 17          # the year 3170843: no datetime renders it


def _st2():
    from fault_catalog import st2   # at call time: fault_catalog imports this module's CASES

    return st2


def case_durations(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    for digits in (DIGITS_400, DIGITS_5000):
        fleet.seat("slow", f'    argv "sleep" "1"\n    restart {{ delay "{digits}s" }}')
        (fleet.catalog / "catalog.kdl").write_text(
            f'catalog {{\n    archive-after "{digits}d"\n    notify {{\n        on "blocked"\n'
            f'        argv "true"\n        timeout "{digits}s"\n    }}\n}}\n')
        label = f"durations ({len(digits)} digits)"
        validate = st2(tally, label, ["validate", "--host", "h"], fleet.env)
        if validate is not None and (validate.returncode == 0 or b"longer than the maximum" not in validate.stdout
                                     + validate.stderr):
            tally.note("duplicates", f"{label}: validate accepted an unbounded duration")
        for verbs in (["agents", "--json"], ["tasks", "--json"], ["doctor"], ["up", "--once"], ["top", "--once"],
                      ["catalog", "graph", "--json"]):
            st2(tally, label, [*verbs, "--host", "h"], fleet.env)
    (fleet.catalog / "catalog.kdl").unlink()


def case_deep_json(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    for verb in (["hook", "dispatch-guard"], ["hook", "subagent-stop-liveness"], ["hook", "budget-guard"],
                 ["driver", "claude-observe", "--event", "Stop"], ["driver", "claude-statusline-arm"]):
        # In the fleet's directory: the liveness hook's stop log is relative to the working directory.
        result = st2(tally, "deep-json", verb, {**fleet.env, "HOME": str(fleet.base / "home")}, input=DEEP,
                     cwd=fleet.base)
        if verb[1] == "dispatch-guard" and result is not None and b"dispatch-guard: allowed" not in result.stdout:
            tally.note("escapes", "deep-json: dispatch-guard gave no degraded verdict for a deep payload")


def case_big_numbers(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    runs = fleet.base / "runs"
    runs.mkdir()
    for line in (f"pid={DIGITS_5000} run=x", f"pid=1 run=x start={DIGITS_5000}"):
        (runs / "x.run").write_text(line + "\n")
        result = st2(tally, "big-numbers", ["check", "producer-liveness", str(runs)], fleet.env)
        if result is not None and result.returncode != 2:
            tally.note("escapes", f"big-numbers: producer-liveness exited {result.returncode}, not 2")


def case_far_future(fleet: Fleet, tally, scale: float) -> None:
    import time

    st2 = _st2()
    now = int(time.time() * 1000)
    seat = fleet.seat("later", '    argv "sleep" "1"')
    # Observed now (a reading the future-skew bound keeps), naming instants no datetime renders.
    (seat / "harness-state").write_text(json.dumps({
        "schema": "st2.harness-state.v1", "agent": "h.later", "harness": "codex", "state": "active",
        "blockedOn": "human", "inputBuffer": "unknown", "ask": "permission", "sinceMs": FAR_FUTURE_MS,
        "observedAtMs": now, "writtenAtMs": now}) + "\n")
    (seat / "harness-context").write_text(json.dumps({
        "schema": "st2.harness-context.v1", "agent": "h.later", "harness": "codex", "usedTokens": 1,
        "windowTokens": 10, "usedPercent": 10, "compactions": 2, "lastCompactionMs": FAR_FUTURE_MS,
        "incarnation": "t", "observedAtMs": now, "writtenAtMs": now}) + "\n")
    for verbs in (["events"], ["events", "--json"], ["top", "--once"], ["agents"], ["doctor"]):
        st2(tally, "far-future", [*verbs, "--host", "h"], fleet.env)


def case_addresses(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    fleet.seat("alice", '    argv "sleep" "1"')
    fleet.seat("mallory", '    argv "sleep" "1"\n    address "alice"')
    validate = st2(tally, "addresses", ["validate", "--host", "h"], fleet.env)
    if validate is not None and validate.returncode == 0:
        tally.note("duplicates", "addresses: validate accepts an address that is another seat's identity")
    (fleet.catalog / "agents" / "h" / "mallory" / "agent.kdl").unlink()
    fleet.seat("alice.sync-conflict-20261201-120000-ABCDEFG", '    argv "sleep" "1"')
    validate = st2(tally, "addresses", ["validate", "--host", "h"], fleet.env)
    if validate is not None and validate.returncode == 0:
        tally.note("duplicates", "addresses: validate accepts an identity of the conflict-copy shape")


def _tree(root: Path) -> dict[str, int]:
    return {os.fspath(path.relative_to(root)): path.lstat().st_mtime_ns for path in root.rglob("*")}


def case_foreign_keys(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    import subprocess

    project = fleet.base / "project"
    (project / ".tmp" / "foreign").mkdir(parents=True)
    (project / "notes.md").write_text("mine\n")
    git = ["git", "-C", str(project), "-c", "user.name=st2", "-c", "user.email=st2@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "notes.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    # What `close ..` would take: a session record, refs and a clone in `.tmp/` itself.
    (project / ".tmp" / "session.txt").write_text(f"adapter=talker mode=audit base={head} turn=1\n")
    (project / ".tmp" / "refs.txt").write_text("keep\n")
    (project / ".tmp" / "tree").mkdir()
    (project / ".tmp" / "tree" / "precious").write_text("keep\n")
    before = _tree(project)
    for key in ("..", "../..", "a/b", "."):
        st2(tally, "foreign-keys", ["foreign", "close", key], fleet.env, cwd=project)
    os.mkfifo(project / ".tmp" / "foreign" / "fifo")
    st2(tally, "foreign-keys", ["foreign", "close", "fifo"], fleet.env, cwd=project)
    after = _tree(project)
    lost = sorted(name for name in before if name not in after and not name.startswith((".tmp/foreign", ".git")))
    if lost:
        tally.note("escapes", f"foreign-keys: foreign close removed files outside .tmp/foreign/: {lost}")


def case_mail_modes(fleet: Fleet, tally, scale: float) -> None:
    st2 = _st2()
    fleet.seat("to", '    argv "sleep" "1"')
    fleet.seat("from", '    argv "sleep" "1"')
    previous = os.umask(0o022)
    try:
        st2(tally, "mail-modes", ["message", "send", "to", "--as", "h.from", "--subject", "private",
                                  "-m", "a body only its owner may read", "--host", "h"], fleet.env)
    finally:
        os.umask(previous)
    for path in (fleet.catalog / "agents" / "h").rglob("*"):
        if path.is_file() and ("inbox" in path.parts or "sent" in path.parts):
            if stat.S_IMODE(path.lstat().st_mode) & 0o077:
                tally.note("escapes", f"mail-modes: {path.relative_to(fleet.catalog)} is "
                                      f"{oct(stat.S_IMODE(path.lstat().st_mode))} under umask 022")


CASES = {
    "durations": case_durations,
    "deep-json": case_deep_json,
    "big-numbers": case_big_numbers,
    "far-future": case_far_future,
    "addresses": case_addresses,
    "foreign-keys": case_foreign_keys,
    "mail-modes": case_mail_modes,
}
