"""Drivers for the real harnesses: start one, talk to it, end it by its process group.

Every harness is started in its own session (``start_new_session``) so ``close()`` can end it
and everything it spawned with one ``killpg``; the tmux driver uses its own private socket and
kills that server. Every wait has a deadline on the monotonic clock and raises TimeoutError
naming what it waited for — a lab test never hangs past its budget.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Callable

from lab_config import EXTENSION, Lab


def end_process_group(process: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGTERM the process's group, then SIGKILL it after ``grace`` seconds; reap the leader."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:  # the leader may be gone while its children still hold the group
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ------------------------------------------------------------------------ JSON lines on stdio
class JsonLinesProcess:
    """A child speaking one JSON document per line on stdin/stdout (Codex app-server, pi rpc).

    ``transcript`` keeps every frame in order as ``{"dir": "out"|"in", "msg": …}``.
    """

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stderr_path: Path,
                 pass_fds: tuple[int, ...] = ()) -> None:
        self.transcript: list[dict[str, Any]] = []
        self._inbox: queue.Queue = queue.Queue()
        self._stderr = stderr_path.open("w")
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
            cwd=cwd, text=True, start_new_session=True, bufsize=1, pass_fds=pass_fds,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                message = {"unparsed": line}
            self.transcript.append({"dir": "in", "msg": message})
            self._inbox.put(message)
        self._inbox.put(None)

    def send(self, message: dict[str, Any]) -> None:
        self.transcript.append({"dir": "out", "msg": message})
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float, what: str) -> dict[str, Any]:
        """Consume frames until one satisfies ``predicate``; return it."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {what} within {timeout}s")
            try:
                message = self._inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise RuntimeError(f"harness exited (status {self.process.poll()}) before {what}")
            if predicate(message):
                return message

    def received(self) -> list[dict[str, Any]]:
        return [frame["msg"] for frame in self.transcript if frame["dir"] == "in"]

    def close(self) -> None:
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        end_process_group(self.process)
        self._stderr.close()


class CodexAppServer(JsonLinesProcess):
    """``codex app-server``: initialize → initialized → thread/start → turn/start."""

    def __init__(self, executable: Path, lab: Lab, env: dict[str, str]) -> None:
        super().__init__([str(executable), "app-server"], env, lab.workspace, lab.logs / "codex.stderr")
        self._next_id = 0
        self.thread_id: str | None = None

    def request(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        self._next_id += 1
        identifier = self._next_id
        self.send({"jsonrpc": "2.0", "method": method, "params": params, "id": identifier})
        reply = self.wait_for(lambda message: message.get("id") == identifier and "method" not in message,
                              timeout, f"reply to {method}")
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def start_thread(self, lab: Lab) -> str:
        self.request("initialize", {"clientInfo": {"name": "st2_lab", "title": "st2 lab", "version": "0.0.1"},
                                    "capabilities": {"experimentalApi": True}})
        self.send({"jsonrpc": "2.0", "method": "initialized"})
        self.thread_id = self.request("thread/start", {"cwd": str(lab.workspace)})["thread"]["id"]
        return self.thread_id

    def turn(self, text: str, timeout: float = 90, on_request: Callable[[dict], dict] | None = None) -> list[dict]:
        """Run one turn; answer server requests (approvals) with ``on_request``; return its frames."""
        start = len(self.transcript)
        self.request("turn/start", {"threadId": self.thread_id,
                                    "input": [{"type": "text", "text": text, "text_elements": []}]})
        self._until_turn_completed(timeout, on_request)
        return [frame["msg"] for frame in self.transcript[start:] if frame["dir"] == "in"]

    def compact(self, timeout: float = 90) -> list[dict]:
        start = len(self.transcript)
        self.request("thread/compact/start", {"threadId": self.thread_id})
        self._until_turn_completed(timeout, None)
        return [frame["msg"] for frame in self.transcript[start:] if frame["dir"] == "in"]

    def _until_turn_completed(self, timeout: float, on_request: Callable[[dict], dict] | None) -> None:
        deadline = time.monotonic() + timeout
        while True:
            message = self.wait_for(lambda m: m.get("method") == "turn/completed" or ("method" in m and "id" in m),
                                    max(deadline - time.monotonic(), 0.01), "turn/completed")
            if message.get("method") == "turn/completed":
                return
            # A server request (an approval): answer it or the turn never ends.
            result = on_request(message) if on_request else {"decision": "decline"}
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})


class PiRpc(JsonLinesProcess):
    """``pi``/``omp --mode rpc -e <extension>``: commands with ids, events without."""

    def __init__(self, executable: Path, lab: Lab, env: dict[str, str], provider: str, model: str,
                 offline: bool = True, extensions: tuple[Path, ...] = (EXTENSION,),
                 pass_fds: tuple[int, ...] = ()) -> None:
        loaded = [word for extension in extensions for word in ("-e", str(extension))]
        argv = [str(executable)] + (["--offline"] if offline else []) + [
            "--mode", "rpc", *loaded, "--provider", provider, "--model", model]
        super().__init__(argv, env, lab.workspace, lab.logs / "rpc.stderr", pass_fds)
        self._next_id = 0

    def command(self, body: dict[str, Any], timeout: float = 90) -> dict[str, Any]:
        self._next_id += 1
        identifier = f"req-{self._next_id}"
        self.send(body | {"id": identifier})
        return self.wait_for(lambda m: m.get("id") == identifier and m.get("type") == "response",
                             timeout, f"response to {body['type']}")

    def prompt(self, text: str, timeout: float = 90) -> None:
        """Send a prompt and wait for its ``agent_end``."""
        reply = self.command({"type": "prompt", "message": text}, timeout)
        if not reply.get("success"):
            raise RuntimeError(f"prompt refused: {reply}")
        self.wait_for(lambda m: m.get("type") == "agent_end", timeout, f"agent_end after {text!r}")


# ------------------------------------------------------------------------------- opencode
class OpencodeServer:
    """``opencode serve`` on a free loopback port, with ``GET /event`` read into ``events``."""

    def __init__(self, executable: Path, lab: Lab, env: dict[str, str], ready_timeout: float = 180) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._log = (lab.logs / "opencode.log").open("w")
        self.process = subprocess.Popen(
            [str(executable), "serve", "--port", str(self.port), "--hostname", "127.0.0.1"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, env=env,
            cwd=lab.workspace, start_new_session=True,
        )
        self.events: list[dict[str, Any]] = []
        self.raw_events: list[str] = []
        self._changed = threading.Condition()
        try:
            self._wait_ready(ready_timeout)
        except BaseException:
            self.close()
            raise
        self._reader = threading.Thread(target=self._read_events, daemon=True)
        self._reader.start()
        self.wait_event(lambda event: event.get("type") == "server.connected", 30, "server.connected")

    def _wait_ready(self, timeout: float) -> None:
        # opencode 1.18.33 accepts connections before it prints "listening"; a request that
        # arrives in that gap is never answered (seen: stuck for minutes). So wait for the line,
        # then ask with a bounded per-attempt timeout and retry. Bootstrapping the instance on
        # the first request takes 5-40 s on a loaded two-core machine.
        deadline = time.monotonic() + timeout
        log_path = Path(self._log.name)
        while "server listening" not in log_path.read_text(errors="replace"):
            if self.process.poll() is not None:
                raise RuntimeError(f"opencode serve exited with {self.process.returncode}: {log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"opencode serve printed no 'listening' line within {timeout}s")
            time.sleep(0.1)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"opencode serve exited with {self.process.returncode}")
            try:
                self.get("/config/providers", timeout=min(max(deadline - time.monotonic(), 1), 45))
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"opencode serve not ready within {timeout}s")

    def _read_events(self) -> None:
        try:
            with urllib.request.urlopen(self.base + "/event", timeout=3600) as stream:
                for raw in stream:
                    line = raw.decode().rstrip("\n")
                    self.raw_events.append(line)
                    if line.startswith("data:"):
                        with self._changed:
                            self.events.append(json.loads(line[5:]))
                            self._changed.notify_all()
        except (OSError, ValueError):
            return

    def wait_event(self, predicate: Callable[[dict], bool], timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = next((event for event in self.events if predicate(event)), None)
                if found is not None:
                    return found
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no opencode event {what} within {timeout}s")
                self._changed.wait(remaining)

    def _call(self, method: str, path: str, body: Any, timeout: float) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip() else None

    def get(self, path: str, timeout: float = 60) -> Any:
        return self._call("GET", path, None, timeout)

    def post(self, path: str, body: Any, timeout: float = 120) -> Any:
        return self._call("POST", path, body, timeout)

    def close(self) -> None:
        end_process_group(self.process)
        self._log.close()


# ---------------------------------------------------------------------------------- Claude
def claude_print(executable: Path, lab: Lab, env: dict[str, str], prompt: str, *extra: str,
                 timeout: float = 120) -> list[dict[str, Any]]:
    """``claude -p PROMPT --output-format stream-json --verbose``; return the events."""
    process = subprocess.Popen(
        [str(executable), "-p", prompt, "--output-format", "stream-json", "--verbose", *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        cwd=lab.workspace, text=True, start_new_session=True,
    )
    try:
        output, errors = process.communicate(timeout=timeout)
    finally:
        end_process_group(process)
    if process.returncode != 0:
        raise RuntimeError(f"claude -p exited {process.returncode}: {errors[-2000:]}")
    return [json.loads(line) for line in output.splitlines() if line.strip()]


class ClaudeTui:
    """The interactive Claude TUI in a tmux server on a private socket (one per test)."""

    def __init__(self, executable: Path, lab: Lab, env: dict[str, str], *extra: str) -> None:
        # A short private directory: a socket path must fit sun_path (104 bytes), which a
        # pytest tmp_path does not always do.
        self._socket_dir = Path(tempfile.mkdtemp(prefix="st2lab-"))
        self.socket = self._socket_dir / "tmux.sock"
        self.status_log = lab.logs / "statusline.jsonl"
        launcher = lab.root / "claude-tui.sh"
        exports = "".join(f"export {name}='{value}'\n" for name, value in env.items())
        words = " ".join(f"'{word}'" for word in (str(executable), *extra))
        launcher.write_text(f"#!/bin/sh\n{exports}cd '{lab.workspace}'\nexec {words}\n")
        launcher.chmod(0o755)
        self._tmux("new-session", "-d", "-x", "180", "-y", "50", "-s", "lab", str(launcher))
        self.pane_pid = int(self._tmux("display-message", "-p", "-t", "lab", "#{pane_pid}").strip())

    def _tmux(self, *words: str) -> str:
        result = subprocess.run(["tmux", "-S", str(self.socket), *words], capture_output=True, text=True,
                                timeout=30, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "xterm-256color"})
        if result.returncode != 0:
            raise RuntimeError(f"tmux {words[0]} failed: {result.stderr}")
        return result.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "lab")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "lab", "-l", text)
        # The composer takes the Return as a newline when it arrives in the same read as the
        # text; wait until the text is on screen before submitting.
        self.wait_screen(lambda screen: text in screen, 30, f"{text!r} in the composer")
        self._tmux("send-keys", "-t", "lab", "Enter")

    def status_lines(self) -> list[dict[str, Any]]:
        try:
            return [json.loads(line) for line in self.status_log.read_text().splitlines() if line.strip()]
        except FileNotFoundError:
            return []

    def wait_status(self, predicate: Callable[[dict], bool], timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((line for line in reversed(self.status_lines()) if predicate(line)), None)
            if found is not None:
                return found
            time.sleep(0.2)
        raise TimeoutError(f"no status line {what} within {timeout}s; screen:\n{self.screen()}")

    def wait_screen(self, predicate: Callable[[str], bool], timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.2)
        raise TimeoutError(f"screen never showed {what} within {timeout}s; screen:\n{screen}")

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=30)
        try:  # the pane's process leads its own group; end anything the TUI left behind
            os.killpg(self.pane_pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        shutil.rmtree(self._socket_dir, ignore_errors=True)
