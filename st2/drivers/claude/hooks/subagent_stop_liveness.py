"""``st2 hook subagent-stop-liveness``: the SubagentStop turn-end liveness hook.

Refuses a dispatched session's turn end (exit 2, reason on stderr) while a launch record under
``${GATE_SDK_TMP_DIR:-.tmp}`` names a live producer, or while the harness's task view shows a
shell task the session launched still running. The reading is a spawned reader's exit class
(:mod:`st2.kit.delegation.reader_spawn`), mapped onto seven verdicts:

    reader exit 0 ............................ green        allow
    reader exit 1 ............................ red          refuse (live=yes)
    reader exit 2, records > 0 ............... corrupt      refuse
    reader exit 2, records = 0 ............... unresolved   refuse; allow when stop_hook_active
    any other exit, the bound, a wait failure  error        allow
    override resolves to no reader ........... unavailable  allow
    resolved reader the OS would not start ... unstarted    allow (spawn= carries the OS error)

The task-view arm refuses beside any verdict and, like red and corrupt, ignores
``stop_hook_active``. A harness helper's firing (:mod:`st2.kit.delegation.task_view`) allows on
every arm. ``records`` and ``runs`` come from the hook's own ``*.run`` listing, taken after the
reader ran; they name a diagnosis, never decide a refusal. An unparseable payload costs the log
its event, session and keys columns and the task-view arm, and leaves the verdict exact.

One line per firing is appended to ``DELEGATION_KIT_STOP_LOG`` (:mod:`st2.kit.delegation.stop_log`).
No hook JSON is written, except the knob-fault decline: a malformed delegation knob writes a
``systemMessage`` so the operator learns this turn end went unguarded, and allows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from collections import namedtuple

from st2.records import decoding
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.drivers.claude.hooks import output as hook_output
from st2.kit.delegation import checkout, knobs, launch_record, reader_spawn, stop_log, task_view

NAME = "subagent-stop-liveness"
REFUSING_VERDICTS = ("red", "corrupt", "unresolved")


# A namedtuple, not a dataclass: importing dataclasses pulls in inspect, a quarter of a bare
# interpreter start on this per-firing path (benchmarks/hot_paths.py).
class Firing(namedtuple("Firing", ("code", "stderr", "stdout", "line"), defaults=("", "", None))):
    """One firing's whole observable: exit status, stderr (the refusal), stdout (only the
    knob-fault decline writes there) and the log line appended (None when declined)."""

    __slots__ = ()


def parse_payload(text: str | None) -> dict[str, object] | None:
    if not text:
        return None
    try:
        payload = decoding.load_json(text)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _string_field(payload: dict[str, object] | None, key: str) -> str:
    value = payload.get(key) if payload is not None else None
    return value if isinstance(value, str) else ""


def run_keys(run_dir: str) -> list[str]:
    """The run dir's ``*.run`` basenames without the suffix, sorted: one level, directories
    excluded, an unreadable or absent dir an empty set."""
    try:
        entries = list(os.scandir(run_dir))
    except OSError:
        return []
    keys = []
    for entry in entries:
        key = launch_record.key_of(entry.name)
        if key is None:
            continue
        try:
            if entry.is_dir():
                continue
        except OSError:
            continue
        keys.append(key)
    return sorted(keys)


def verdict_of(outcome: reader_spawn.Outcome | None, records: int) -> str:
    if outcome is None:
        return "unavailable"
    if outcome.spawn_error is not None:
        return "unstarted"
    if outcome.exit_status == 0:
        return "green"
    if outcome.exit_status == 1:
        return "red"
    if outcome.exit_status == 2:
        return "corrupt" if records > 0 else "unresolved"
    return "error"


def fire(
    payload_text: str | None,
    environ: Mapping[str, str],
    cwd: str,
    clock: Clock = SYSTEM_CLOCK,
) -> Firing:
    """Run one firing over ``payload_text`` (stdin) and return what it decided."""
    resolved, findings = knobs.load(environ, cwd)
    if resolved is None:
        message = (
            f"{NAME}: this turn end went unguarded — the delegation knobs are malformed: "
            + "; ".join(findings)
        )
        return Firing(code=0, stdout=json.dumps({"systemMessage": message}, ensure_ascii=False) + "\n")

    payload = parse_payload(payload_text)
    # Absolute against the firing's cwd, so the refusal names a command re-runnable anywhere.
    run_dir = os.path.join(cwd, checkout.scratch_dir(environ, cwd))
    log_path = os.path.join(cwd, checkout.resolve(knobs.stop_log(resolved), cwd))
    command = knobs.indexed(resolved, knobs.LIVENESS_CMD)
    reader = reader_spawn.resolve(command, run_dir, environ)

    outcome = None
    if reader is not None:
        outcome = reader_spawn.run_bounded(reader, environ, reader_spawn.bound_seconds(environ))

    # Listed after the reader ran: a record created during the reading is counted, so an
    # in-flight record errs toward corrupt (a record that exists) rather than unresolved.
    keys_of_runs = run_keys(run_dir)
    records = len(keys_of_runs)
    verdict = verdict_of(outcome, records)
    continuing = payload is not None and payload.get("stop_hook_active") is True

    # stop_hook_active bounds the unresolved arm alone: red and corrupt resolve with their
    # producer or record; a reader that cannot run would refuse forever.
    refused_by_verdict = verdict in REFUSING_VERDICTS and not (verdict == "unresolved" and continuing)
    task_held = task_view.holds_own_running_shell_task(payload)
    helper = task_view.is_helper_firing(payload)
    refuse = (refused_by_verdict or task_held) and not helper

    runs = stop_log.sanitize(",".join(keys_of_runs))
    values = [
        stop_log.sanitize(_string_field(payload, "hook_event_name")),
        stop_log.sanitize(_string_field(payload, "session_id")),
        "yes" if verdict == "red" else "no",
        verdict,
        stop_log.sanitize(outcome.spawn_error) if outcome is not None and outcome.spawn_error else "-",
        str(records),
        runs,
        "refuse" if refuse else "allow",
        stop_log.sanitize(",".join(sorted(payload)) if payload is not None else ""),
    ]
    line = stop_log.render_line(stop_log.utc_stamp(clock.wall_ms()), values)
    stop_log.append(log_path, line)

    if not refuse:
        return Firing(code=0, line=line)
    reader_text = reader.command_line() if reader is not None else "(no reader resolved)"
    parts = []
    if refused_by_verdict:
        parts.append(refusal(verdict, reader_text, run_dir, runs))
    if task_held:
        parts.append(task_refusal())
    return Firing(code=2, stderr="".join(parts), line=line)


_WAYS = (
    "Two ways forward: wait for the producer on its own artifact, in a loop that ends when its "
    "condition goes true (while kill -0 <pid> 2>/dev/null; do sleep 5; done, <pid> read out of the "
    "record); or delete the record once its producer has exited — retracting a statement that has "
    "become false, not a workaround."
)


def refusal(verdict: str, reader_text: str, run_dir: str, runs: str) -> str:
    """The refusal's stderr, one arm per refusing verdict: each names the finding, the lawful
    exits, that the turn may not end on it, and the reader command with the run directory."""
    if verdict == "red":
        finding = (
            f"a launch record under {run_dir} names a live producer, so this turn may not end on it. "
            f"The record set read was runs={runs}."
        )
        ways, look = _WAYS, "to see the record set for yourself"
    elif verdict == "corrupt":
        finding = (
            f"a launch record under {run_dir} does not parse, so no reading says whether a producer "
            f"is live and this turn may not end on it. The record set read was runs={runs}."
        )
        ways, look = _WAYS, "to see which record is malformed"
    else:
        finding = (
            f"the liveness reader produced no reading, and there is no launch record under {run_dir} "
            "for it to have been about, so nothing says whether a producer is live and this turn may "
            "not end on it."
        )
        ways = (
            "The reader is what to fix here, not a record: it failed over an empty record set, so it "
            "could not run at all. Under a worktree-isolated dispatch a reader that resolves only in the "
            "main checkout cannot run (templates/agent-execution.md); the lawful response there is to "
            "report the gate unavailable and return, never to build one."
        )
        look = "to see the reader's own reason for failing"
    return f"{NAME}: turn-end refused: {finding}\n{ways}\nRun `{reader_text}` {look}.\n"


def task_refusal() -> str:
    return (
        f"{NAME}: turn-end refused: the harness's task view shows a shell task this session launched "
        "still running, so this turn may not end on it.\n"
        "Two ways forward: await the task's completion notification; or, where the task is this "
        "session's own wait and nothing will make its condition true, stop it — an observer wrote "
        "nothing, so stopping it loses nothing.\n"
    )


def main(argv: list[str]) -> int:
    """Hot-path entry: the payload on stdin, the decision in the exit status."""
    return hook_output.run_hook(fire)
