"""Campaign part 4 — bad input, over every reader.

Hypothesis generates each reader's input (full size 10,000 cases per reader): random bytes,
near-valid documents (a real record with fields deleted, retyped, duplicated, truncated or
padded), hostile JSON values, deep nesting and multi-megabyte inputs. Every file reader is also
pointed at what a hostile seat can plant where a small regular file is expected: a FIFO, a
directory, a character device, a dangling symlink, a symlink to a real record, and a sparse
300 MB file. Each call runs under a watchdog (``ITIMER_REAL``), so a hang is counted, not fatal.

- exceptions: anything but the reader's documented refusal escaping the call;
- fabricated: a projected definite value the input does not carry (a number that is not the
  input's own, a presence or state word the record does not say, a snapshot key whose value is
  ambiguous because the key is duplicated, a whole record read out of a non-regular file);
- hangs: a call that did not return within its bound;
- every file case also checks that the refusal wrote nothing (a write counts as fabricated).

``RESULT exceptions=<n> fabricated=<n> hangs=<n> cases=<n>``.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fault_common import Verdict, scaled

FULL_CASES = 10_000
BOUND_SECONDS = 5.0      # CPU seconds one reader call may spend (ITIMER_PROF: a spin, whatever the load)
BLOCK_SECONDS = 30.0     # wall seconds it may take (ITIMER_REAL: a blocking open or read)
NOW_MS = 1_796_000_000_000
HUGE = 5 * 1024 * 1024


class Hang(BaseException):
    """Raised by the watchdog inside a call that overran its bound (BaseException: a reader's
    ``except Exception`` cannot swallow it)."""


_FIRED = [False]   # set by the watchdog, so a Hang that could not be delivered is still counted


def _alarm(signum, frame):
    _FIRED[0] = True
    raise Hang()


@dataclass
class Tally:
    cases: int = 0
    exceptions: int = 0
    fabricated: int = 0
    hangs: int = 0
    evidence: list[str] = field(default_factory=list)

    def note(self, kind: str, text: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.evidence) < 20:
            self.evidence.append(f"{kind}: {text}")


# What a CLI call has left of the interpreter's default recursion limit when it reaches a reader
# (hypothesis raises the limit while it runs a test, which would hide a RecursionError).
STACK_ALLOWANCE = 950


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def guarded(tally: Tally, label: str, call: Callable[[], Any], refusals: tuple = ()) -> tuple[bool, Any]:
    """Run ``call`` under the watchdog and the stack a CLI call has; ``(True, value)`` when it
    returned, ``(True, None)`` for a documented refusal, ``(False, None)`` when it hung or raised
    anything else."""
    tally.cases += 1
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_depth() + STACK_ALLOWANCE)
    # The spin bound is CPU time, so a loaded machine (the suite runs three workers a core) cannot
    # stretch an honest call past it; a blocking call spends none, so wall time bounds it too. A
    # Hang raised where Python cannot deliver it (inside a garbage-collection callback it is
    # printed and dropped) still counts: the flag says the watchdog fired.
    _FIRED[0] = False
    previous = {number: signal.signal(number, _alarm) for number in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_PROF, BOUND_SECONDS)
    signal.setitimer(signal.ITIMER_REAL, BLOCK_SECONDS)
    try:
        value = call()
        if _FIRED[0]:
            raise Hang()
        return True, value
    except Hang:
        tally.note("hangs", f"{label}: no return within {BOUND_SECONDS:g} s of CPU or {BLOCK_SECONDS:g} s")
    except refusals:
        return True, None
    except BaseException as error:  # noqa: BLE001 - counting what escapes is the point
        tally.note("exceptions", f"{label}: {type(error).__name__}: {str(error)[:160]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        for number, handler in previous.items():
            signal.signal(number, handler)
        sys.setrecursionlimit(limit)
    return False, None


def _json(data: bytes) -> dict | None:
    """The input as one JSON object when it strictly is one (no duplicates), else None."""
    try:
        pairs_seen: list[list] = []

        def hook(pairs):
            keys = [key for key, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ValueError("duplicate")
            return dict(pairs)

        value = json.loads(data.decode("utf-8"), object_pairs_hook=hook)
        del pairs_seen
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


# --- the readers -----------------------------------------------------------------------------------
# Each: name, valid example documents, byte reader (data -> findings list of fabricated fields),
# file reader (path -> findings) and its documented refusals.


def _context_bytes(data: bytes) -> list[str]:
    from st2.records import harness_context

    reading = harness_context.read(data, NOW_MS)
    return _context_findings(data, reading)


def _context_findings(data: bytes | None, reading) -> list[str]:
    from st2.records import harness_context

    if reading is None:
        return []
    source = _json(data) if data is not None else None
    if source is None:
        return ["a context reading from bytes that are not one strict JSON object"]
    wire = harness_context.to_wire(reading)
    findings = []
    for key in ("usedTokens", "windowTokens", "usedPercent", "costUsd", "sessionTotalTokens"):
        value = wire.get(key)
        if value is not None and (key not in source or source[key] != value):
            findings.append(f"{key}={value!r} but the record says {source.get(key, '<absent>')!r}")
    percent = wire.get("usedPercent")
    if percent is not None and (not math.isfinite(percent) or percent < 0):
        findings.append(f"usedPercent={percent!r} is outside finite >= 0")
    return findings


def _state_bytes(data: bytes) -> list[str]:
    from st2.records import harness_state

    return _state_findings(data, harness_state.read(data, NOW_MS))


def _state_findings(data: bytes | None, observed) -> list[str]:
    from st2.records import harness_state

    if observed is None:
        return []
    wire = harness_state.to_wire(observed)
    if wire.get("state") in (None, "unknown"):
        return []
    source = _json(data) if data is not None else None
    if source is None or source.get("state") != wire["state"]:
        return [f"state {wire['state']!r} but the record says {None if source is None else source.get('state')!r}"]
    return []


def _status_bytes(data: bytes) -> list[str]:
    from st2.records import status

    return _status_findings(data, status.read(data, NOW_MS).presence)


def _status_findings(data: bytes | None, presence: str) -> list[str]:
    if presence in ("offline", "unknown"):
        return []
    first = (data or b"").split(b"\n", 1)[0].strip()
    if first != presence.encode():
        return [f"presence {presence!r} but the record's first line is {first[:40]!r}"]
    return []


def _diagnostic_bytes(data: bytes) -> list[str]:
    from st2.records import driver_diagnostic

    diagnostic = driver_diagnostic.read(data, NOW_MS)
    if diagnostic.status not in ("absent", "failure", "indeterminate"):
        return [f"diagnostic status {diagnostic.status!r}"]
    if diagnostic.status != "failure":
        return []                   # absent or indeterminate: never healthy, never a definite failure
    source = _json(data)
    if source is None:
        return ["a definite failure from bytes that are not one strict JSON object"]
    return [f"{key}={getattr(diagnostic, attribute)!r} but the record says {source.get(key)!r}"
            for key, attribute in (("driver", "driver"), ("stage", "stage"), ("reason", "reason"),
                                   ("source", "source"), ("observedAt", "observed_at"))
            if source.get(key) != getattr(diagnostic, attribute)]


def _message_bytes(data: bytes) -> list[str]:
    from st2.bus.envelope import parse

    message = parse("1796000000000-abcdef.md", data)
    return _message_findings(data, message)


def _message_findings(data: bytes | None, message) -> list[str]:
    if message is None:
        return []
    text = (data or b"").decode("utf-8", errors="replace")
    findings = []
    for key, value in (("from", message.sender), ("subject", message.subject)):
        if value is not None and f"{key}:" not in text:
            findings.append(f"{key}={value!r} but the file has no {key}: line")
    return findings


def _snapshot_bytes(data: bytes) -> list[str]:
    from st2.records import usage_snapshot as snapshot

    return _snapshot_findings(data, snapshot.read(data))


def _snapshot_findings(data: bytes | None, reading) -> list[str]:
    from st2.records import usage_snapshot as snapshot

    if reading is None or reading.outcome != snapshot.READ:
        return []
    lines = (data or b"").decode("utf-8", errors="replace").split("\n")[:-1]
    findings = []
    for key in ("five_hour_used_pct", "five_hour_resets_at", "updated_at", "seven_day_used_pct"):
        values = [line.partition("=")[2] for line in lines if line.partition("=")[0] == key]
        if len(set(values)) > 1:
            findings.append(f"{key} given {len(values)} times ({values[:3]}) and read as {getattr(reading.snapshot, key)!r}")
    return findings


def _declaration_bytes(data: bytes) -> list[str]:
    from st2.declarations.agent import parse_agent

    text = data.decode("utf-8", errors="replace")
    declaration, diagnostics = parse_agent(text, path=Path("/catalog/agents/h/x/agent.kdl"), source=None)
    return _declaration_findings(text, declaration, diagnostics)


def _declaration_findings(text: str, declaration, diagnostics) -> list[str]:
    if declaration is None:
        return [] if diagnostics else ["refused with no diagnostic"]
    if f'"{declaration.identity}"' not in text and declaration.identity not in text:
        return [f"identity {declaration.identity!r} is not in the text"]
    return []


def _payload_bytes(data: bytes) -> list[str]:
    from st2.drivers.claude import events, payload

    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []                                   # the hook refuses what is not JSON
    reading = payload.reading(value)
    for event in ("UserPromptSubmit", "Stop", "PermissionRequest", "PreCompact", "SessionStart"):
        events.observation(event, value)
        events.compaction(event, value)
    window = value.get("context_window") if isinstance(value, dict) else None
    window = window if isinstance(window, dict) else {}
    findings = []
    for attribute, key in (("used_tokens", "total_input_tokens"), ("window_tokens", "context_window_size"),
                           ("used_percent", "used_percentage")):
        got = getattr(reading, attribute)
        if got is not None and (key not in window or window[key] != got or isinstance(window[key], bool)):
            findings.append(f"{attribute}={got!r} but the payload says {window.get(key, '<absent>')!r}")
    if reading.used_tokens is not None and not isinstance(window.get("current_usage"), dict):
        findings.append("usedTokens published while current_usage is not an object")
    return findings


def _ledger_bytes(data: bytes) -> list[str]:
    from st2.delivery import ledger

    entries = ledger.decode(data, ledger.CODEX, "h.x", "h.x")
    if entries and _json(data) is None:
        return ["ledger entries from bytes that are not one strict JSON object"]
    return []


VALID = {
    "harness-context": [b'{"schema":"st2.harness-context.v1","agent":"h.x","harness":"claude","usedTokens":1200,'
                        b'"windowTokens":200000,"usedPercent":0.6,"model":"m","costUsd":0.01,"sessionTotalTokens":null,'
                        b'"rateLimits":{"fiveHour":null,"sevenDay":null},"compactions":0,"lastCompactionMs":null,'
                        b'"lastCompactionTrigger":null,"incarnation":"i","observedAtMs":1795999990000,'
                        b'"writtenAtMs":1795999990000}\n'],
    "harness-state": [b'{"schema":"st2.harness-state.v1","agent":"h.x","harness":"claude","state":"active",'
                      b'"blockedOn":"none","inputBuffer":"empty","ask":"none","reason":null,"exit":null,'
                      b'"ptySession":"h.x","incarnation":"i","seq":1,"sinceMs":1795999990000,'
                      b'"writtenAtMs":1795999990000,"transitions":1}\n'],
    "status": [b"busy\nv1 1795999990000\n", b"dnd\n", b"available\nv1 1795999999999\n"],
    "driver-diagnostic": [b'{"schema":"st2.driver-diagnostic.v1","driver":"codex","stage":"start","reason":"x",'
                          b'"source":"s","producerVersion":"1","support":"supported","observedAt":1795999990000,'
                          b'"recovery":"publishFailureOrClearOnStageRecovery"}\n'],
    "message": [b"---\nfrom: h.a\nsubject: hi\ntags: a,b\npriority: high\n---\nbody\n", b"no front matter\n"],
    "usage-snapshot": [b"five_hour_used_pct=42\nfive_hour_resets_at=1796003600\nupdated_at=1795999990\n"
                       b"seven_day_used_pct=10\nseven_day_resets_at=1796500000\n"],
    "declaration": [b'agent "x" {\n    name "X"\n    argv "sleep" "1"\n    ding\n    desired-state "suspended" reason="r"\n'
                    b'    restart { attempts 3; interval "60s"; }\n    exec "w" { argv "make"; keep #true; }\n}\n'],
    "hook-payload": [b'{"session_id":"s","model":{"id":"m"},"cost":{"total_cost_usd":0.2},"context_window":'
                     b'{"total_input_tokens":11400,"context_window_size":200000,"used_percentage":6,'
                     b'"current_usage":{"input_tokens":9900}},"rate_limits":{"five_hour":{"used_percentage":12}}}'],
    "delivery-ledger": [b'{"schema":"st2.delivery-ledger.v1","harness":"codex","agent":"h.x","runtimeId":"h.x",'
                        b'"entries":[]}\n'],
}

BYTE_READERS: dict[str, tuple[Callable[[bytes], list[str]], tuple]] = {
    "harness-context": (_context_bytes, ()),
    "harness-state": (_state_bytes, ()),
    "status": (_status_bytes, ()),
    "driver-diagnostic": (_diagnostic_bytes, ()),
    "message": (_message_bytes, ()),
    "usage-snapshot": (_snapshot_bytes, ()),
    "declaration": (_declaration_bytes, ()),
    "hook-payload": (_payload_bytes, ()),
    "delivery-ledger": (_ledger_bytes, ("quarantined",)),
}
READERS = tuple(BYTE_READERS)


def _refusals(name: str) -> tuple:
    if name == "delivery-ledger":
        from st2.delivery.ledger import Quarantined

        return (Quarantined,)
    return ()


# --- file readers over planted non-regular and huge files ---------------------------------------


def _file_call(name: str, path: Path) -> list[str]:
    """Read ``path`` with the reader's own file entry point; findings as for bytes, where any
    definite value read from a non-regular or oversize file is fabricated."""
    if name == "harness-context":
        from st2.records import harness_context

        reading = harness_context.read_file(path, NOW_MS)
        return [] if reading is None else ["a context reading from a planted file"]
    if name == "harness-state":
        from st2.records import harness_state

        observed = harness_state.read_file(path, NOW_MS)
        wire = harness_state.to_wire(observed) if observed is not None else None
        return [] if wire is None or wire.get("state") == "unknown" else [f"state {wire['state']!r} from a planted file"]
    if name == "status":
        from st2.records import status

        presence = status.read_file(path, NOW_MS).presence
        return [] if presence in ("offline", "unknown") else [f"presence {presence!r} from a planted file"]
    if name == "driver-diagnostic":
        from st2.records import driver_diagnostic

        status_word = driver_diagnostic.read_file(path, NOW_MS).status
        return [] if status_word in ("absent", "indeterminate", "failure") else [f"diagnostic {status_word!r}"]
    if name == "message":
        from st2.bus.mailbox import read_message

        message = read_message(path.parent, path.name)
        return [] if message is None else [f"a message from a planted file (body {len(message.body)} chars)"]
    if name == "usage-snapshot":
        from st2.records import usage_snapshot as snapshot

        reading = snapshot.read_file(str(path))
        return [] if reading.outcome != snapshot.READ else ["a READ snapshot from a planted file"]
    if name == "declaration":
        from st2.declarations.agent import load_agent

        declaration, diagnostics = load_agent(path)
        if declaration is not None:
            return ["a declaration from a planted file"]
        return [] if diagnostics else ["refused with no diagnostic"]
    if name == "hook-payload":
        return []               # a payload arrives on stdin, never from a catalog path
    if name == "delivery-ledger":
        from st2.delivery import ledger

        loaded = ledger.Ledger.load(path, path.parent / "staging", ledger.CODEX, "h.x", "h.x")
        return [] if not loaded.entries else ["ledger entries from a planted file"]
    raise KeyError(name)


def _filename(name: str) -> str:
    return {"message": "1796000000000-abcdef.md", "declaration": "agent.kdl", "usage-snapshot": "usage.txt",
            "delivery-ledger": "delivery-ledger.json"}.get(name, name)


PLANTS = ("fifo", "directory", "char-device", "dangling-symlink", "symlink-to-record", "sparse-300mb", "huge-5mb")


def _plant(kind: str, path: Path, valid: bytes) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "char-device":
        os.symlink("/dev/zero", path)
    elif kind == "dangling-symlink":
        os.symlink(path.parent / "nowhere", path)
    elif kind == "symlink-to-record":
        real = path.parent / "elsewhere"
        real.write_bytes(valid)
        os.symlink(real, path)
    elif kind == "sparse-300mb":
        with open(path, "wb") as handle:
            handle.write(valid)
            handle.truncate(300 * 1024 * 1024)
    elif kind == "huge-5mb":
        path.write_bytes(valid.rstrip(b"\n") + b" " * HUGE + b"\n")


def _tree(directory: Path) -> dict[str, tuple]:
    state = {}
    for entry in sorted(directory.rglob("*")):
        status = os.lstat(entry)
        state[str(entry)] = (status.st_mode, status.st_size, status.st_mtime_ns)
    return state


def file_cases(name: str, tally: Tally, base: Path) -> None:
    if name == "hook-payload":
        return
    for kind in PLANTS:
        directory = Path(tempfile.mkdtemp(dir=base, prefix=f"{kind}-"))
        path = directory / _filename(name)
        _plant(kind, path, VALID[name][0])
        before = _tree(directory)
        done, findings = guarded(tally, f"{name} file {kind}", lambda: _file_call(name, path), _refusals(name))
        if done and findings and kind != "symlink-to-record":
            tally.note("fabricated", f"{name} file {kind}: {findings[0]}")
        if kind == "symlink-to-record" and done and findings and name in ("message", "delivery-ledger"):
            tally.note("fabricated", f"{name} file {kind}: followed a symlink out of place: {findings[0]}")
        if _tree(directory) != before:
            tally.note("fabricated", f"{name} file {kind}: the refusal wrote into {directory}")


# --- hypothesis over bytes --------------------------------------------------------------------------


def _strategy(name: str):
    from hypothesis import strategies as st

    valid = VALID[name]
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e308, -5, -0.4, 2**64, 2**63 - 1])
        | st.text(max_size=30),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
        max_leaves=8)

    @st.composite
    def json_mutation(draw):
        document = dict(json.loads(draw(st.sampled_from(valid))))
        for _ in range(draw(st.integers(1, 4))):
            keys = sorted(document)
            action = draw(st.sampled_from(["delete", "retype", "add", "duplicate"]))
            key = draw(st.sampled_from(keys)) if keys else "schema"
            if action == "delete":
                document.pop(key, None)
            elif action == "retype":
                document[key] = draw(json_values)
            elif action == "add":
                document[draw(st.text(max_size=10))] = draw(json_values)
        text = json.dumps(document, allow_nan=False)
        if draw(st.booleans()):          # a duplicated key, as a hand edit leaves it
            key = draw(st.sampled_from(sorted(document) or ["schema"]))
            text = text[:-1] + (", " if document else "") + json.dumps(key) + ": " + json.dumps(draw(json_values)) + "}"
        return text.encode()

    @st.composite
    def byte_mutation(draw):
        data = bytearray(draw(st.sampled_from(valid)))
        for _ in range(draw(st.integers(1, 6))):
            action = draw(st.sampled_from(["truncate", "insert", "flip", "repeat-line", "restate"]))
            position = draw(st.integers(0, len(data)))
            if action == "truncate":
                del data[position:]
            elif action == "insert":
                data[position:position] = draw(st.binary(min_size=1, max_size=16))
            elif action == "flip" and data:
                data[min(position, len(data) - 1)] ^= draw(st.integers(1, 255))
            elif action == "restate":      # a key given again with another value, as a hand edit leaves it
                lines = [line for line in bytes(data).split(b"\n") if b"=" in line or b": " in line]
                if lines:
                    line = lines[draw(st.integers(0, len(lines) - 1))]
                    separator = b"=" if b"=" in line else b": "
                    key = line.split(separator, 1)[0]
                    value = str(draw(st.integers(0, 2_000_000_000))).encode()
                    start = bytes(data).find(line)
                    place = draw(st.sampled_from([start, start + len(line) + 1]))
                    data[place:place] = key + separator + value + b"\n"
            elif action == "repeat-line":
                lines = bytes(data).split(b"\n")
                line = lines[min(draw(st.integers(0, len(lines) - 1)), len(lines) - 1)]
                data[position:position] = line + b"\n"
        return bytes(data)

    text_lines = st.lists(st.sampled_from([b"five_hour_used_pct=", b"five_hour_resets_at=", b"updated_at=",
                                           b"seven_day_used_pct=", b"from: ", b"subject: ", b"---", b"busy",
                                           b"v1 ", b"agent \"x\" {", b"}", b"dnd"]).flatmap(
        lambda head: st.binary(max_size=14).map(lambda tail: head + tail)), max_size=8).map(lambda ls: b"\n".join(ls) + b"\n")
    extremes = st.sampled_from([
        b"", b"\n", b"\x00" * 64, b"[" * 100_000, b'{"a":' * 50_000, b"\xff\xfe" * 100,
        b"x" * HUGE, b"agent \"x\" {\n" + b"    n { " * 500 + b"}" * 500 + b"\n}\n",
        b"agent \"x\" {\n" + b"    unknown-node 1\n" * 20_000 + b"}\n",
        b'{"usedPercent": 1e999}', b'{"usedPercent": NaN}', b"busy\nv1 99999999999999999999999\n",
    ])
    choices = [st.binary(max_size=512), byte_mutation(), text_lines, extremes]
    if valid[0].lstrip().startswith(b"{"):
        choices.append(json_mutation())
    return st.one_of(*choices)


def _limit(name: str) -> int:
    """The most bytes the reader's own file entry point passes on (it refuses a larger file
    whole): bytes beyond it are fed through that entry point, as a file, never straight in."""
    from st2.fs import read

    return {"message": read.MESSAGE_LIMIT, "declaration": read.DECLARATION_LIMIT,
            "usage-snapshot": read.SNAPSHOT_LIMIT, "delivery-ledger": read.RUNTIME_LIMIT}.get(name, read.RECORD_LIMIT)


def explore(name: str, cases: int, seed: int, tally: Tally, base: Path) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    reader, _ = BYTE_READERS[name]
    refusals = _refusals(name)
    limit = _limit(name)
    oversize = Path(tempfile.mkdtemp(dir=base, prefix="oversize-")) / _filename(name)

    @hypothesis_seed(seed)
    @settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(_strategy(name))
    def body(data: bytes) -> None:
        if len(data) > limit and name != "hook-payload":
            oversize.write_bytes(data)
            done, findings = guarded(tally, f"{name} oversize file ({len(data)})", lambda: _file_call(name, oversize),
                                     refusals)
            if done and findings:
                tally.note("fabricated", f"{name} oversize file ({len(data)}): {findings[0]}")
            return
        done, findings = guarded(tally, f"{name} bytes {data[:40]!r}…({len(data)})", lambda: reader(data), refusals)
        if done and findings:
            tally.note("fabricated", f"{name} {data[:60]!r}: {findings[0]}")

    body()


def run_reader(name: str, scale: float, base: Path, seed: int = 20261204) -> Tally:
    import logging

    tally = Tally()
    logging.disable(logging.WARNING)      # each refused record warns once: 10,000 lines of noise
    try:
        explore(name, scaled(FULL_CASES, scale, floor=50), seed, tally, Path(base))
        file_cases(name, tally, Path(base))
    finally:
        logging.disable(logging.NOTSET)
    return tally


def run(scale: float, base: Path, seed: int = 20261204) -> Verdict:
    totals = Tally()
    per_reader = {}
    for name in READERS:
        directory = Path(base) / name
        directory.mkdir(parents=True)
        tally = run_reader(name, scale, directory, seed)
        per_reader[name] = {key: getattr(tally, key) for key in ("exceptions", "fabricated", "hangs", "cases")}
        for key in ("exceptions", "fabricated", "hangs", "cases"):
            setattr(totals, key, getattr(totals, key) + getattr(tally, key))
        totals.evidence.extend(f"{name}: {line}" for line in tally.evidence[:5])
    return Verdict("bad-input", {"exceptions": totals.exceptions, "fabricated": totals.fabricated,
                                 "hangs": totals.hangs, "cases": totals.cases}, totals.evidence,
                   {"per_reader": per_reader})
