"""`st2 demo`: st2's main job on the bundled demo catalog, shown step by step.

Builds the demo catalog (`shell` seats, no model account) under a temp dir with its own runtime
state, then runs the real CLI against it: `st2 up --once` launches each seat into its own tmux
server, a message goes over the bus, presence is declared, the supervisor is SIGKILLed and a new
one adopts every seat with the same PID, `st2 agents` shows the roster, and `st2 down` ends it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

DEMO_HOST = "demo"


def build_demo_catalog(destination: Path) -> Path:
    """Copy the bundled demo catalog to ``destination/catalog`` and return its root."""
    root = Path(destination) / "catalog"
    source = resources.files("st2.demo") / "catalog"
    with resources.as_file(source) as source_path:
        shutil.copytree(source_path, root)
    for declaration in sorted((root / "agents").glob("*/*/agent.kdl")):
        (declaration.parent / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
        (declaration.parent / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    from st2.bus.principals import ensure_operator

    ensure_operator(root, DEMO_HOST)  # the identity the human at this shell sends as
    return root


class DemoFailed(Exception):
    pass


class Demo:
    def __init__(self, directory: Path, echo) -> None:
        self.directory = directory
        self.root = build_demo_catalog(directory)
        self.echo = echo
        self.env = dict(os.environ)
        self.env.update(CATALOG=str(self.root), XDG_STATE_HOME=str(directory / "state"))
        self.env.pop("ST_AGENT", None)

    def st2(self, *args: str, show: bool = True, check: bool = True, **extra_env: str) -> subprocess.CompletedProcess:
        env = dict(self.env, **extra_env)
        if show:
            prefix = " ".join(f"{key}={value}" for key, value in extra_env.items())
            self.echo(f"\n$ {prefix + ' ' if prefix else ''}st2 {shlex.join(args)}")
        completed = subprocess.run([sys.executable, "-m", "st2", *args, "--host", DEMO_HOST], env=env,
                                   capture_output=True, text=True, timeout=120)
        if show:
            for stream in (completed.stdout, completed.stderr):
                if stream.strip():
                    self.echo(stream.rstrip("\n"))
        if check and completed.returncode != 0:
            raise DemoFailed(f"st2 {' '.join(args)} exited {completed.returncode}")
        return completed

    def agent_pids(self) -> dict[str, int]:
        inventory = json.loads(self.st2("tasks", "--json", show=False).stdout)
        return {task["runtimeId"]: task["runtime"]["pid"] for task in inventory["tasks"]
                if task["kind"] == "pty" and task["runtime"]["state"] == "running"}

    def run(self) -> None:
        self.echo(f"demo catalog: {self.root} (host {DEMO_HOST})")
        self.st2("validate")
        self.st2("up", "--once")
        before = self.agent_pids()
        if sorted(before) != ["demo.builder", "demo.planner"]:
            raise DemoFailed(f"expected the two running seats in tmux, found {sorted(before)}")
        self.st2("message", "send", "builder", "--subject", "build the parser", "-m",
                 "Please build the parser and mail me when CI is green.", ST_AGENT="demo.planner")
        self.st2("status", "--set", "busy", ST_AGENT="demo.builder")
        self.echo("\n# you, at this shell, send as the catalog's operator principal (principals/demo/operator)")
        self.st2("message", "send", "planner", "--subject", "status?", "-m", "How is the parser going?")
        self.st2("message", "ls", "builder")
        self.show_ding()

        self.echo("\n# the supervisor is SIGKILLed; its seats keep running and a new one adopts them")
        supervisor = subprocess.Popen([sys.executable, "-m", "st2", "up", "--interval", "30s", "--host", DEMO_HOST],
                                      env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
        time.sleep(2)
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
        self.echo(f"killed st2 up (pid {supervisor.pid}) with SIGKILL")
        self.st2("up", "--once")
        after = self.agent_pids()
        for runtime_id, pid in before.items():
            self.echo(f"{runtime_id}: pid {pid} before, {after.get(runtime_id)} after")
        if after != before:
            raise DemoFailed("a seat did not survive the supervisor's SIGKILL with its PID")

        self.st2("agents")
        self.st2("agents", "--json", "--enrich")
        self.st2("doctor", check=False)

    # --- DING step (st2/ding): the builder's notifier, launched by `up` as demo.builder.ding,
    # pastes one notice for the planner's mail into the builder's terminal and presses Return
    # once the screen shows it sitting in the composer; declared `busy` does not defer it.
    def show_ding(self, timeout: float = 15.0) -> None:
        from st2.runtime import layout
        from st2.runtime.scope import RuntimeScope
        from st2.runtime.tmux import SESSION_NAME, client_argv

        self.echo("\n# DING: the builder's notifier types one notice into the builder's terminal")
        scope = RuntimeScope(self.root, DEMO_HOST, state_dir=Path(self.env["XDG_STATE_HOME"]) / "st2")
        socket = str(scope.socket("demo.builder"))
        self.echo(f"$ tmux -S {socket} capture-pane -p -t st2")
        record = layout.ding_ownership(scope.directory) / "demo.builder.json"
        deadline = time.monotonic() + timeout
        pane, settled = "", []
        while time.monotonic() < deadline:
            pane = subprocess.run(client_argv(socket, "capture-pane", "-p", "-t", SESSION_NAME), capture_output=True,
                                  text=True, timeout=5).stdout.rstrip("\n")
            try:  # the notifier settles a notice only once the screen proves it was submitted
                settled = json.loads(record.read_text()).get("settled") or []
            except (OSError, ValueError):
                settled = []
            if "[DING]" in pane and settled:
                break
            time.sleep(0.1)
        self.echo(pane)
        if "[DING]" not in pane or not settled:
            raise DemoFailed("no DING notice was delivered to the builder's terminal")
        self.echo(f"delivered (screen-verified): {', '.join(settled)}")

    def tear_down(self) -> None:
        self.st2("down", check=False)


def run_demo(keep: bool, echo) -> int:
    """Run the demo; clean up (seats and files) unless ``keep``. Return the exit status."""
    directory = Path(tempfile.mkdtemp(prefix="st2-demo-", dir="/tmp"))
    demo = Demo(directory, echo)
    status = 0
    try:
        demo.run()
        echo("\ndemo ok")
    except DemoFailed as failure:
        echo(f"\ndemo failed: {failure}")
        status = 1
    finally:
        if keep:
            echo(f"kept: {directory} (its seats are still running; end them with "
                 f"CATALOG={demo.root} XDG_STATE_HOME={directory / 'state'} st2 down --host {DEMO_HOST})")
        else:
            demo.tear_down()
            shutil.rmtree(directory, ignore_errors=True)
    return status
