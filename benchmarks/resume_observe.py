"""What issue 24 adds to a Claude hook: `st2 driver claude-observe --event UserPromptSubmit` of a
wrapper-exported session whose resumable-session record already names the payload's
`session_id` (every turn's case: an unlocked read, nothing written), against the same hook on
`PreToolUse`, which does no resume check (the named anchor), and `python -c pass`.

Both hook events write the same harness-state observation (active), so the ratio isolates the
session check. Interleaved rounds, so machine load weighs on every command alike.
Usage: python benchmarks/resume_observe.py [RUNS=30] [--smoke] (``--smoke``: the same path over 2
rounds after one warm-up).
Last line: RESULT resume_check_ratio=<observe UserPromptSubmit / observe PreToolUse>
observe_prompt_ms=<a> observe_tool_ms=<b> anchor_python_ms=<c>
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from st2.runtime import resumable_session  # noqa: E402

TOKEN = "bench-incarnation"
SESSION = "0b6a6f7e-bench-session"
WARM_UPS = 3
SMOKE_RUNS, SMOKE_WARM_UPS = 2, 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=30, help="interleaved rounds (default 30)")
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} rounds")
    options = parser.parse_args()
    runs, warm_ups = (SMOKE_RUNS, SMOKE_WARM_UPS) if options.smoke else (options.runs, WARM_UPS)
    st2 = Path(sys.executable).parent / "st2"
    if not st2.exists():
        print(f"no st2 console script beside {sys.executable}; install with pip install -e .", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="st2-bench-resume-") as directory:
        root = Path(directory)
        catalog = root / "catalog"
        (catalog / "agents" / "host" / "worker").mkdir(parents=True)
        store = resumable_session.SessionStore.of(catalog, "host", root / "state" / "st2")
        store.ensure()
        record = resumable_session.SessionRecord(runtime_id="host.worker", agent="host.worker", harness="claude",
                                                 incarnation=TOKEN, start="resumed", session_id=SESSION,
                                                 resumed_from=SESSION)
        store.record("host.worker").write_bytes(record.to_json())
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("ST2_CLAUDE_", "ST_")) and key not in ("PYTHONDONTWRITEBYTECODE", "CATALOG")}
        env.update(HOME=str(root), XDG_STATE_HOME=str(root / "state"), ST2_CLAUDE_SESSION=TOKEN,
                   ST2_CLAUDE_RUNTIME_ID="host.worker")
        identity = ["--identity", "host.worker", "--catalog", str(catalog)]
        payload = f'{{"session_id":"{SESSION}","prompt":"hi","tool_name":"Bash"}}'.encode()
        commands = {
            "prompt": [str(st2), "driver", "claude-observe", *identity, "--event", "UserPromptSubmit"],
            "tool": [str(st2), "driver", "claude-observe", *identity, "--event", "PreToolUse"],
            "python": [sys.executable, "-c", "pass"],
        }
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for index in range(-warm_ups, runs):  # warm-up rounds: bytecode and page caches
            for name, command in commands.items():
                start = time.perf_counter()
                completed = subprocess.run(command, env=env, cwd=root, input=payload, capture_output=True)
                elapsed = (time.perf_counter() - start) * 1000
                if completed.returncode != 0:
                    print(f"{name} failed: {completed.stderr[-2000:].decode(errors='replace')}", file=sys.stderr)
                    return 1
                if index >= 0:
                    samples[name].append(elapsed)
        after = resumable_session.read(store, "host.worker")
    if after != record:
        print(f"the unchanged check rewrote the record: {after}", file=sys.stderr)
        return 1
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{runs} interleaved rounds; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cpus")
    for name in commands:
        print(f"{name:7s} median {medians[name]:6.1f} ms")
    print(f"RESULT resume_check_ratio={medians['prompt'] / medians['tool']:.3f} observe_prompt_ms={medians['prompt']:.1f} "
          f"observe_tool_ms={medians['tool']:.1f} anchor_python_ms={medians['python']:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
