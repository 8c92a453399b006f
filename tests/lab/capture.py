"""Capture tool: re-run a scripted session of one real harness against the fake model and write
what it emitted, verbatim, with a provenance file.

    python tests/lab/capture.py <harness> [--build VERSION] [--out DIR]

``<harness>`` is a name from tests/lab/harnesses.toml, run at its pin or at one of its measured
builds (``--build``); DIR defaults to ``captures/<harness>/<version>/lab``. The session is: a plain turn, a tool call, a permission
prompt where the harness has one, a compaction and a turn after it. Written files:

    <transcript files>          the harness's own frames/events/outputs, one JSON per line
    fake_model_requests.jsonl   what the harness asked the fake (path, wire, summary, answer, usage)
    PROVENANCE.md               harness, package@version, date, fake usage numbers, session

Local detail is replaced by fixed placeholders so captures are reproducible: the temp lab root
becomes ``/LAB`` (also in its dash-joined form, as Claude names project dirs), this repository
``/REPO``, the fake's port ``FAKEPORT``, a harness server's port ``SERVEPORT``. Timestamps and
ids stay verbatim; ``normalize()`` masks them when two captures are compared.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

LAB_DIR = Path(__file__).resolve().parent
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from harnesses import REPO, Harness, install, load_manifest  # noqa: E402
from lab_config import Lab, configure_claude, configure_codex, configure_opencode, configure_pi  # noqa: E402
from lab_drivers import ClaudeTui, CodexAppServer, OpencodeServer, PiRpc, claude_print  # noqa: E402

Session = Callable[[Harness, Lab, FakeModel], dict[str, str]]


def _lines(items: list) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def _by_direction(stem: str, transcript: list[dict]) -> dict[str, str]:
    """Frames we sent and frames the harness sent, each in its own order. (One merged file
    would not be reproducible: how a notification interleaves with our next request is a race.)"""
    return {f"{stem}.client.jsonl": _lines([frame["msg"] for frame in transcript if frame["dir"] == "out"]),
            f"{stem}.harness.jsonl": _lines([frame["msg"] for frame in transcript if frame["dir"] == "in"])}


# ------------------------------------------------------------------------------ sessions
def session_claude(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """Print mode, one ``claude -p`` per step, ``--continue`` after the first; hooks teed."""
    env = configure_claude(lab, harness, fake)
    model = ("--model", "claude-sonnet-4-5")
    steps = [
        ("1-plain", "hi", ()),
        ("2-tool", "FAKE_TOOL: echo claude-tool-ok", ("--allowedTools", "Bash(echo:*)")),
        ("3-subagent", "FAKE_SUBAGENT do it", ()),
        # Not allowed: print mode cannot ask, so the permission request is denied.
        ("4-permission", "FAKE_TOOL: touch made-by-tool.txt", ()),
        ("5-compact", "/compact", ()),
        ("6-after-compact", "after compact", ()),
    ]
    files = {}
    for index, (name, prompt, extra) in enumerate(steps):
        resume = ("--continue",) if index else ()
        events = claude_print(harness.executable, lab, env, prompt, *model, *resume, *extra, timeout=120)
        files[f"print-{name}.stream.jsonl"] = _lines(events)
    hooks = lab.logs / "hooks.jsonl"
    files["hooks.jsonl"] = hooks.read_text() if hooks.exists() else ""
    return files


def session_codex(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """``codex app-server`` (``on-request``, ``workspace-write``); an escalated ``touch`` asks for
    approval, which is accepted. (0.171.0 refuses ``approval_policy = "untrusted"``.)"""
    env = configure_codex(lab, harness, fake, context_window=200000, approval_policy="on-request",
                          sandbox_mode="workspace-write")
    server = CodexAppServer(harness.executable, lab, env)
    try:
        server.start_thread(lab)
        server.turn("hi")
        server.turn("FAKE_TOOL: echo codex-tool-ok")
        server.turn("FAKE_ESCALATE: touch made-by-tool.txt", on_request=lambda request: {"decision": "accept"})
        server.compact()
        server.turn("after compact")
    finally:
        server.close()
    return _by_direction("app-server", server.transcript)


def session_opencode(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """``opencode serve``; bash asks for permission (answered ``once``); ``summarize`` compacts."""
    env = configure_opencode(lab, harness, fake, permission={"bash": "ask"})
    server = OpencodeServer(harness.executable, lab, env)
    model = {"providerID": "fake", "modelID": "fake-model"}
    responses: list[dict] = []
    try:
        session = server.post("/session", {})
        responses.append({"request": "POST /session", "response": session})
        path = f"/session/{session['id']}/message"

        def prompt(text: str) -> None:
            reply = server.post(path, {"model": model, "parts": [{"type": "text", "text": text}]})
            responses.append({"request": f"POST /session/ID/message {text!r}", "response": reply})

        prompt("hi")
        # The tool call waits on a permission; the prompt blocks until it is answered.
        worker = threading.Thread(target=prompt, args=("FAKE_TOOL: echo opencode-tool-ok",))
        worker.start()
        asked = server.wait_event(lambda event: event.get("type", "").startswith("permission.")
                                  and str(event["properties"].get("id", "")).startswith("per"), 120, "permission asked")
        answer = server.post(f"/permission/{asked['properties']['id']}/reply", {"reply": "once"})
        responses.append({"request": "POST /permission/ID/reply once", "response": answer})
        worker.join(180)
        summarized = server.post(f"/session/{session['id']}/summarize", model, timeout=180)
        responses.append({"request": "POST /session/ID/summarize", "response": summarized})
        server.wait_event(lambda event: event.get("type") == "session.compacted", 60, "session.compacted")
        prompt("after compact")
        messages = server.get(f"/session/{session['id']}/message")
        responses.append({"request": "GET /session/ID/message", "response": messages})
        providers = server.get("/config/providers")
    finally:
        server.close()
    files = {
        "event.sse": "\n".join(server.raw_events) + "\n",
        "http_responses.jsonl": _lines(responses),
        "config_providers.fake.json": json.dumps(
            next(p for p in providers["providers"] if p["id"] == "fake"), indent=1) + "\n",
    }
    files["_serve_port"] = str(server.port)
    return files


def session_pi(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """``--mode rpc`` with the context-usage extension: hi, tool call, compact, after compact."""
    env = configure_pi(lab, harness, fake)
    rpc = PiRpc(harness.executable, lab, env, "fake-anthropic", "fake-claude", offline=harness.name == "pi")
    try:
        rpc.prompt("hi")
        rpc.prompt("FAKE_TOOL: echo pi-tool-ok")
        rpc.command({"type": "compact"}, timeout=120)
        rpc.prompt("after compact")
    finally:
        rpc.close()
    extension = lab.logs / "extension.jsonl"
    return _by_direction("rpc", rpc.transcript) | {
            "extension_context_usage.jsonl": extension.read_text() if extension.exists() else ""}


# The batched-tool session (docs/drivers.md §Hook events): one assistant turn carrying two Bash calls, one allowed
# by the workspace settings and one that asks, in both orders; the ask answered Yes, and No.
BATCHES = (
    ("allowed-first-approved", "FAKE_TOOLS: echo batch-allowed ;; touch batch-asks.txt", "1"),
    ("asking-first-approved", "FAKE_TOOLS: touch batch-asks.txt ;; echo batch-allowed", "1"),
    ("asking-first-denied", "FAKE_TOOLS: touch batch-asks.txt ;; echo batch-allowed", "3"),
)


def _hook_labels(log: Path) -> list[str]:
    return [json.loads(line)["label"] for line in log.read_text().splitlines()] if log.exists() else []


def _quiet(log: Path, seconds: float = 3.0, timeout: float = 60.0) -> None:
    """Wait until no hook has run for ``seconds`` (the harness is done reacting)."""
    import time

    deadline = time.monotonic() + timeout
    count, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        now = len(_hook_labels(log))
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
        time.sleep(0.1)


def session_claude_batched(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """The interactive TUI (print mode cannot ask), one fresh session per batch; hooks teed with
    their arrival time; the screen captured while the permission prompt is open, then answered."""
    files = {}
    for name, prompt, answer in BATCHES:
        run = Lab.create(lab.root / name)
        env = configure_claude(run, harness, fake, stamp_hooks=True, allow=("Bash(echo:*)",))
        tui = ClaudeTui(harness.executable, run, env, "--model", "claude-sonnet-4-5")
        log = run.logs / "hooks.jsonl"
        try:
            tui.wait_screen(lambda screen: "? for shortcuts" in screen or "← for agents" in screen, 90, "the composer")
            _quiet(log, 1.0)
            tui.type(prompt)
            tui.wait_screen(lambda screen: "Do you want to proceed?" in screen, 60, "the permission prompt")
            _quiet(log)                       # whatever runs while the prompt is open has run
            files[f"{name}.prompt-screen.txt"] = tui.screen()
            tui._tmux("send-keys", "-t", "lab", answer)
            _quiet(log)
            files[f"{name}.final-screen.txt"] = tui.screen()
        finally:
            tui.close()
        files[f"{name}.hooks.jsonl"] = log.read_text() if log.exists() else ""
    return files


def session_claude_statusline(harness: Harness, lab: Lab, fake: FakeModel) -> dict[str, str]:
    """The interactive TUI (the status line renders only there), ``--model claude-sonnet-4-5``:
    the payloads before the first reply, after a reply of 99000 input + 300 cache creation + 1200
    cache read (100500 of 200000: 50.25 %), and after a second reply of 100000 + 300 + 1000
    (101300: 50.65 %); hooks teed. (2.1.250 refuses /compact this early: "Not enough messages to
    compact".)"""
    env = configure_claude(lab, harness, fake)
    fake.set_usage(input=99000, cache_creation=300, cache_read=1200, output=42)
    tui = ClaudeTui(harness.executable, lab, env, "--model", "claude-sonnet-4-5")
    try:
        tui.wait_status(lambda line: True, 90, "at start-up")
        tui.type("hi")
        tui.wait_status(lambda line: (line["context_window"].get("current_usage") or {}).get("input_tokens") == 99000,
                        90, "after the first reply")
        fake.set_usage(input=100000, cache_creation=300, cache_read=1000, output=42)
        tui.type("again")
        tui.wait_status(lambda line: (line["context_window"].get("current_usage") or {}).get("input_tokens") == 100000,
                        90, "after the second reply")
        time.sleep(1.0)  # the status line refreshes a last time once the turn has ended
    finally:
        tui.close()
    hooks = lab.logs / "hooks.jsonl"
    return {"statusline-stdin.jsonl": _lines(tui.status_lines()),
            "hooks.jsonl": hooks.read_text() if hooks.exists() else ""}


SESSIONS: dict[str, Session] = {
    "claude-code": session_claude, "codex": session_codex, "opencode": session_opencode,
    "pi": session_pi, "omp": session_pi,
}
# Extra sessions, ``--session NAME``: (harness, name) -> (session, steps); written to
# captures/<harness>/<version>/<name>/.
VARIANTS: dict[tuple[str, str], tuple[Session, str]] = {
    ("claude-code", "statusline"): (
        session_claude_statusline,
        "interactive TUI (--model claude-sonnet-4-5), the status line teed (one payload per line): start-up; "
        "hi (fake usage input 99000, cache creation 300, cache read 1200, output 42); again (input 100000, "
        "cache creation 300, cache read 1000, output 42)"),
    ("claude-code", "batched-tool"): (
        session_claude_batched,
        "interactive TUI (--model claude-sonnet-4-5, permissions.allow Bash(echo:*)), a fresh session per batch, "
        "hooks teed with arrival atMs: one assistant turn with two Bash calls: echo (allowed) then touch (asks), "
        "answered 1 (Yes); touch then echo, answered 1 (Yes); touch then echo, answered 3 (No)"),
}
SESSION_STEPS = {
    "claude-code": "claude -p (stream-json, --model claude-sonnet-4-5, --continue): hi; FAKE_TOOL echo "
                   "(allowed); FAKE_SUBAGENT (Agent); FAKE_TOOL touch (permission denied in print mode); /compact; after compact",
    "codex": "app-server: initialize, thread/start; hi; FAKE_TOOL echo; FAKE_ESCALATE touch (approval accepted); "
             "thread/compact/start; after compact",
    "opencode": "serve: POST /session; hi; FAKE_TOOL echo (permission asked, replied once); summarize; after compact",
    "pi": "--mode rpc (fake-anthropic): hi; FAKE_TOOL echo; compact; after compact",
    "omp": "--mode rpc (fake-anthropic): hi; FAKE_TOOL echo; compact; after compact",
}


# ------------------------------------------------------------------- placeholders, compare
def scrub(text: str, lab: Lab, fake: FakeModel, serve_port: str | None) -> str:
    """Replace local paths and ports by fixed placeholders."""
    root = str(lab.root)
    for real, placeholder in ((root, "/LAB"), (root.replace("/", "-"), "-LAB"),
                              (root.replace("/", "-").replace(".", "-"), "-LAB"), (str(REPO), "/REPO")):
        text = text.replace(real, placeholder)
    text = text.replace(f"127.0.0.1:{fake.port}", "127.0.0.1:FAKEPORT")
    if serve_port:
        text = text.replace(f"127.0.0.1:{serve_port}", "127.0.0.1:SERVEPORT")
    return text


_MASKS = [
    (re.compile(r"Chunk ID: \w+"), "Chunk ID: <ID>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<UUID>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.-]\d+)?Z?"), "<TIME>"),
    (re.compile(r"\b(?:msg|toolu|call|resp|fc|chatcmpl|ses|prt|evt|per|req)_[A-Za-z0-9_]{6,}"), "<ID>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b"), "<HEX>"),
    (re.compile(r"\b1\d{9}(?:\d{3})?\b"), "<EPOCH>"),
    (re.compile(r"\b\d+\.\d+ seconds"), "<SECONDS>"),
]
# Keys whose values are times, durations or process ids in any harness's frames.
_VOLATILE_KEY = re.compile(r"(?i)(duration|_ms$|Ms$|At$|^time$|^ts$|created|updated|completed|start|end|pid|processId|cost)")


# A string of hex digits alone is a random id (pi's entry ids are eight): one drawn with no letter
# (about 1 in 43 of pi's) escapes the line mask below, which must keep decimal numbers.
_HEX_STRING = re.compile(r"[0-9a-f]{6,}")


def _mask_values(value):
    if isinstance(value, dict):
        return {key: ("<V>" if _VOLATILE_KEY.search(key) and not isinstance(item, (dict, list)) else _mask_values(item))
                for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_values(item) for item in value]
    if isinstance(value, str) and _HEX_STRING.fullmatch(value):
        return "<HEX>"
    return value


def normalize(text: str) -> str:
    """Mask timestamps, durations and ids so two captures of one session compare equal."""
    lines = []
    for line in text.splitlines():
        prefix, _, body = line.partition("data: ") if line.startswith("data: ") else ("", "", line)
        try:
            line = prefix + ("data: " if prefix or line.startswith("data: ") else "") + json.dumps(_mask_values(json.loads(body)))
        except ValueError:
            pass
        for pattern, replacement in _MASKS:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines)


# ------------------------------------------------------------------------------- capture
def capture(name: str, out: Path, variant: str | None = None, build: str | None = None) -> Path:
    """Run the scripted session of harness ``name`` (or its ``variant`` session) at its pin (or
    the measured ``build``) and write its capture into ``out``."""
    session, steps = VARIANTS[(name, variant)] if variant else (SESSIONS[name], SESSION_STEPS[name])
    harness = load_manifest()[name]
    harness = harness.build(build) if build else harness
    install(harness)
    out.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix="st2-capture-"))
    try:
        with FakeModel() as fake:
            lab = Lab.create(temporary)
            usage = fake.usage
            files = session(harness, lab, fake)
            serve_port = files.pop("_serve_port", None)
            requests = [{"seq": entry["seq"], "method": entry["method"], "path": entry["path"],
                         "user_agent": entry["headers"].get("User-Agent") or entry["headers"].get("user-agent"),
                         "wire": entry.get("wire"), "summary": entry.get("summary"),
                         "answer": {k: v for k, v in (entry.get("answer") or {}).items() if k != "call_id"} or None,
                         "usage": entry.get("usage")} for entry in fake.requests]
            files["fake_model_requests.jsonl"] = _lines(requests)
            for file_name, text in files.items():
                (out / file_name).write_text(scrub(text, lab, fake, serve_port))
    finally:
        # ST2_LAB_KEEP=1 leaves the lab directory (harness logs, stderr) for a post-mortem.
        if not os.environ.get("ST2_LAB_KEEP"):
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            print(f"lab directory kept: {temporary}", file=sys.stderr)
    (out / "PROVENANCE.md").write_text(
        f"# Lab capture: {name} {harness.version}\n\n"
        f"- harness: {name}, npm `{harness.package}@{harness.version}`"
        + (f" (+ {', '.join(harness.needs)})" if harness.needs else "") + "\n"
        f"- date: {datetime.datetime.now(datetime.timezone.utc).date().isoformat()}\n"
        f"- made by: `python tests/lab/capture.py {name}{f' --session {variant}' if variant else ''}"
        f"{f' --build {build}' if build else ''}` "
        "(real binary, offline, fake model on 127.0.0.1)\n"
        f"- session: {steps}\n"
        f"- fake usage per answer: {json.dumps(asdict(usage))} "
        "(Anthropic input/cache_read/cache_creation/output; Responses and Chat input includes cache_read)\n"
        "- placeholders: /LAB = temp lab root (HOME is /LAB/home, workspace /LAB/workspace), "
        "/REPO = this repository, FAKEPORT = fake model port, SERVEPORT = harness server port\n"
        "- verbatim otherwise: timestamps and ids are the harness's own\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Capture a scripted session of a real harness.")
    parser.add_argument("harness", choices=sorted(SESSIONS))
    parser.add_argument("--session", choices=sorted({variant for _, variant in VARIANTS}),
                        help="an extra session of the harness instead of the standard one")
    parser.add_argument("--build", help="a measured build of the harness (harnesses.toml) instead of its pin")
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args(argv)
    if arguments.session and (arguments.harness, arguments.session) not in VARIANTS:
        parser.error(f"{arguments.harness} has no session {arguments.session}")
    harness = load_manifest()[arguments.harness]
    try:
        harness = harness.build(arguments.build) if arguments.build else harness
    except ValueError as refusal:
        parser.error(str(refusal))
    out = arguments.out or REPO / "captures" / arguments.harness / harness.version / (arguments.session or "lab")
    print(capture(arguments.harness, out, arguments.session, arguments.build))
    return 0


if __name__ == "__main__":
    sys.exit(main())
