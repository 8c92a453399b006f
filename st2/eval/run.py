"""``st2 eval``: run one eval spec end to end and return its verdict.

The order is arrange, act, assert, and always tear down:

1. a hermetic world (:mod:`st2.eval.world`): a temp catalog holding the fixture and the team, and
   a private state home; every process the eval starts inherits ``CATALOG``, ``XDG_STATE_HOME``
   and ``ST2_EVAL_RUN`` naming it;
2. the team boots through the real CLI, ``st2 up --once``; with ``supervise`` a resident ``st2 up``
   then keeps the seats running, relaunching a dead one from its declaration;
3. the kickoff is sent as ``st2 message send <to> --as <from>`` sends it, and the eval waits for
   the kickoff's recipient to mail the requester back (``done``), at most until ``max-timeout``;
4. the ``run`` steps run in order within what is left of ``max-timeout``; a step that does not
   exit 0 (unless ``allow-nonzero``) is a failed entry of the verdict;
5. every judge runs, in order, each within its own ``timeout`` (default 60 s);
6. ``st2 down`` ends the team and its supervisor; then any process still carrying this eval's
   ``ST2_EVAL_RUN`` is ended by PID (its group when it leads one) and counted as ``leftover``;
   the world is removed unless ``keep``.

SIGINT, SIGTERM and SIGHUP only set a flag; the waits see it, stop, and step 6 runs all the same.
The verdict passes when nothing was interrupted, at least one judge ran and every entry passed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from st2.eval import judges as judging
from st2.eval.shell import end_group, run_command
from st2.eval.spec import Judge, Spec
from st2.eval.world import World, WorldRefused, build, make, remove

RUN_MARKER = "ST2_EVAL_RUN"
SCHEMA = "st2.eval-verdict.v1"
# A launcher's own harness session must not leak into the seats (a nested Claude turns one-shot).
LAUNCHER_SESSION = ("ST_AGENT", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "TMUX", "TMUX_PANE")
BOOT_SECONDS = 120.0
TEARDOWN_SECONDS = 60.0
SUPERVISE_INTERVAL = "1s"
POLL_SECONDS = 0.1


@dataclass
class Entry:
    name: str
    kind: str      # "run", "checks", "exec" or "ask"
    passed: bool
    detail: str

    def wire(self) -> dict:
        return {"name": self.name, "kind": self.kind, "passed": self.passed, "detail": self.detail}


@dataclass
class Verdict:
    spec: str
    done: bool | None = None
    interrupted: bool = False
    failure: str | None = None       # why the eval could not run its judges, or None
    entries: list[Entry] = field(default_factory=list)
    leftover: int = 0
    kept: str | None = None

    @property
    def passed(self) -> bool:
        return (not self.interrupted and self.failure is None and any(e.kind != "run" for e in self.entries)
                and all(entry.passed for entry in self.entries))

    @property
    def word(self) -> str:
        return "interrupted" if self.interrupted else ("pass" if self.passed else "fail")

    def wire(self) -> dict:
        """The ``st2.eval-verdict.v1`` object, fields in their pinned order."""
        return {"schema": SCHEMA, "spec": self.spec, "verdict": self.word, "done": self.done,
                "failure": self.failure, "judges": [entry.wire() for entry in self.entries],
                "leftover": self.leftover, "kept": self.kept}

    def lines(self) -> list[str]:
        from st2.base.terminal_text import escaped

        lines = [f"{'PASS' if entry.passed else 'FAIL'} {entry.kind} {escaped(entry.name)}: {escaped(entry.detail)}"
                 for entry in self.entries]
        if self.done is not None:
            lines.insert(0, f"team {'reported done' if self.done else 'did not report done before max-timeout'}")
        if self.failure:
            lines.append(f"eval failed: {escaped(self.failure)}")
        if self.leftover:
            lines.append(f"ended {self.leftover} process(es) the team left running")
        if self.kept:
            lines.append(f"kept: {self.kept}")
        counted = [entry for entry in self.entries if entry.kind != "run"]
        lines.append(f"verdict: {self.word} ({sum(e.passed for e in counted)}/{len(counted)} judges passed)")
        return lines


class _Stop:
    """Set by SIGINT, SIGTERM or SIGHUP; the handlers only record (the waits act)."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, object] = {}

    def __call__(self) -> bool:
        return self.signal is not None

    def install(self) -> None:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._previous[number] = signal.signal(number, self._record)

    def restore(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def _record(self, number, frame) -> None:
        self.signal = number


class Eval:
    def __init__(self, spec: Spec, *, keep: bool = False) -> None:
        assert spec.eval is not None
        self.spec, self.block, self.keep = spec, spec.eval, keep
        self.stop = _Stop()
        self.world: World | None = None
        self.verdict = Verdict(spec=str(spec.path))
        self.supervisor: subprocess.Popen | None = None

    # --- environment ---------------------------------------------------------------------------
    def base_env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in LAUNCHER_SESSION}
        # `st2` on PATH for the seats' and steps' own commands: this interpreter's entry first.
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(CATALOG=str(self.world.catalog), ST_ROOT=str(self.world.catalog),
                   XDG_STATE_HOME=str(self.world.state_home))
        env[RUN_MARKER] = self.world.marker
        return env

    def step_env(self, extra: dict[str, str]) -> dict[str, str]:
        env = self.base_env() | self.spec.env | extra
        env[RUN_MARKER] = self.world.marker
        return env

    def st2(self, *words: str, deadline: float, stoppable: bool = True) -> tuple[int | None, str, str]:
        runs = self.world.directory / "st2-calls"
        runs.mkdir(exist_ok=True)
        out, err = runs / "out", runs / "err"
        outcome = run_command([sys.executable, "-m", "st2", "--host", self.spec.host, *words], cwd=self.world.catalog,
                              env=self.base_env(), stdout=out, stderr=err, deadline=deadline,
                              stop=self.stop if stoppable else (lambda: False))
        return outcome.status, out.read_text(errors="replace"), err.read_text(errors="replace")

    # --- the run -------------------------------------------------------------------------------
    def run(self) -> Verdict:
        self.stop.install()
        self.world = make()
        try:
            self._arrange_act_assert()
        finally:
            self._tear_down()
            self.stop.restore()
        self.verdict.interrupted = self.stop()
        return self.verdict

    def _arrange_act_assert(self) -> None:
        try:
            build(self.spec, self.world)
        except (WorldRefused, OSError) as error:
            self.verdict.failure = str(error)
            return
        deadline = time.monotonic() + self.block.timeout
        if self.spec.agents and not self._boot(deadline):
            return
        if self.block.message is not None:
            kickoff = self._kickoff(deadline)
            if kickoff is None:
                return
            reply = judging.await_reply(self._requester(), f"{self.spec.host}.{self.block.message.recipient}",
                                        kickoff, deadline, self.stop)
            self.verdict.done = reply is not None
        for step in self.block.runs:
            if self.stop():
                return
            self.verdict.entries.append(self._run_step(step, deadline))
        for judge in self.block.judges:
            if self.stop():
                return
            self.verdict.entries.append(self._judge(judge))

    def _boot(self, deadline: float) -> bool:
        status, out, err = self.st2("up", "--once", deadline=min(deadline, time.monotonic() + BOOT_SECONDS))
        if status != 0:
            if not self.stop():
                self.verdict.failure = f"st2 up --once exited {status}: {_last_line(err or out)}"
            return False
        if self.block.supervise:
            log = open(self.world.directory / "supervisor.log", "wb")
            self.supervisor = subprocess.Popen(
                [sys.executable, "-m", "st2", "--host", self.spec.host, "up", "--interval", SUPERVISE_INTERVAL],
                cwd=self.world.catalog, env=self.base_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
            log.close()
        return True

    def _requester(self) -> Path:
        from st2.catalog.layout import PRINCIPALS_DIR

        return self.world.catalog / PRINCIPALS_DIR / self.spec.host / self.block.message.sender

    def _kickoff(self, deadline: float) -> str | None:
        message = self.block.message
        path = self.spec.folder / message.content
        body = path.read_text() if path.is_file() else message.content
        status, out, err = self.st2("message", "send", message.recipient, "--as", message.sender, "--subject",
                                    "eval kickoff", "-m", body, "--json", deadline=deadline)
        if status != 0:
            if not self.stop():
                self.verdict.failure = f"the kickoff was not sent: {_last_line(err or out)}"
            return None
        return json.loads(out)["filename"]

    def _run_step(self, step, deadline: float) -> Entry:
        runs = self.world.catalog / ".runs"
        runs.mkdir(exist_ok=True)
        cwd = judging.inside(self.world.catalog, step.workspace or ".")
        if cwd is None or not cwd.is_dir():
            return Entry(step.label, "run", False, f"workspace {step.workspace!r} is not a folder in the catalog")
        outcome = run_command(["sh", "-c", step.command], cwd=cwd, env=self.step_env(step.env),
                              stdout=runs / f"{step.label}.out", stderr=runs / f"{step.label}.err", deadline=deadline,
                              stop=self.stop)
        if outcome.status is None:
            return Entry(step.label, "run", False, "interrupted" if outcome.interrupted else "max-timeout passed")
        passed = outcome.status == 0 or step.allow_nonzero
        return Entry(step.label, "run", passed, f"exited {outcome.status}")

    def _judge(self, judge: Judge) -> Entry:
        timeout = judge.timeout or judging.DEFAULT_TIMEOUT
        if judge.checks:
            passed, detail = judging.declarative(self.world.catalog, judge)
            return Entry(judge.name, "checks", passed, detail)
        if judge.command is not None:
            judges = self.world.directory / "judges"
            judges.mkdir(exist_ok=True)
            outcome = run_command(["sh", "-c", judge.command], cwd=self.world.catalog, env=self.step_env({}),
                                  stdout=judges / "out", stderr=judges / "err",
                                  deadline=time.monotonic() + timeout, stop=self.stop)
            if outcome.status is None:
                return Entry(judge.name, "exec", False, "interrupted" if outcome.interrupted else "timed out")
            return Entry(judge.name, "exec", outcome.status == 0, f"exited {outcome.status}")
        return self._ask(judge, timeout)

    def _ask(self, judge: Judge, timeout: float) -> Entry:
        agent, prompt = judge.ask
        sender = self.block.message.sender if self.block.message else "requester"
        if self.block.message is None:
            from st2.bus.principals import ensure_principal

            ensure_principal(self.world.catalog, self.spec.host, sender)
        deadline = time.monotonic() + timeout
        status, out, err = self.st2("message", "send", agent, "--as", sender, "--subject",
                                    f"eval judge: {judge.name}", "-m", prompt, "--json", deadline=deadline)
        if status != 0:
            return Entry(judge.name, "ask", False, f"the prompt was not sent: {_last_line(err or out)}")
        from st2.catalog.layout import PRINCIPALS_DIR

        reply = judging.await_reply(self.world.catalog / PRINCIPALS_DIR / self.spec.host / sender,
                                    f"{self.spec.host}.{agent}", json.loads(out)["filename"], deadline, self.stop)
        if reply is None:
            return Entry(judge.name, "ask", False, f"{agent} did not reply within {timeout:g}s")
        verdict = judging.ask_verdict(reply.body)
        first = _last_line(reply.body.strip().splitlines()[0] if reply.body.strip() else "")
        if verdict is None:
            return Entry(judge.name, "ask", False, f"{agent} replied neither PASS nor FAIL: {first}")
        return Entry(judge.name, "ask", verdict, f"{agent}: {first}")

    # --- teardown ------------------------------------------------------------------------------
    def _tear_down(self) -> None:
        if self.world is None:
            return
        if self.spec.agents:
            self.st2("down", deadline=time.monotonic() + TEARDOWN_SECONDS, stoppable=False)
        if self.supervisor is not None:
            if self.supervisor.poll() is None:
                end_group(self.supervisor.pid)
            self.supervisor.wait()
        from st2.process.marked import processes_carrying

        left = processes_carrying(RUN_MARKER, self.world.marker)
        for pid in left:
            _end(pid)
        self.verdict.leftover = len(left)
        if self.keep:
            self.verdict.kept = str(self.world.directory)
        else:
            remove(self.world)


def _end(pid: int) -> None:
    try:
        if os.getpgid(pid) == pid:
            end_group(pid)
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(POLL_SECONDS)
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(no output)"
