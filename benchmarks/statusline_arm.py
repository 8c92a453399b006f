"""Status-line arm latency: the tee (`st2 driver claude-statusline`) chaining to the kit's arm
renderer (`st2 driver claude-statusline-arm`) as the operator selects it, over a verbatim 2.1.328
payload with rate limits added, a seat with unread messages, a harness-context record and one
DELEGATION_KIT_STATUSLINE_INBOXES element — every group the arm renders is read.

Prints the median and p95 wall time of the tee and its renderer together, the same tee with
`printf ok` as its renderer (so the arm's own share shows), the median of `python -c pass` with
the same interpreter (the anchor), and the ratio (target <= 2.5), all interleaved so load weighs
on each alike. ST2_BENCH_RUNS sets the run count (default 100); ``--smoke`` runs the same path 3
times after one warm-up.
Last line: RESULT tee_arm_median_ms=<x> tee_arm_p95_ms=<y> ratio_python=<z>
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from statusline import payload_for, p95, timed  # noqa: E402  (the tee benchmark's own payload and timer)

RUNS = int(os.environ.get("ST2_BENCH_RUNS", "100"))
WARM_UPS = 5
SMOKE_RUNS, SMOKE_WARM_UPS = 3, 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} runs")
    runs, warm_ups = (SMOKE_RUNS, SMOKE_WARM_UPS) if parser.parse_args().smoke else (RUNS, WARM_UPS)
    st2 = Path(sys.executable).parent / "st2"
    if not st2.exists():
        print(f"no st2 console script beside {sys.executable}; install with pip install -e .", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="st2-bench-statusline-arm-") as directory:
        root = Path(directory)
        catalog = root / "catalog"
        seat = catalog / "agents" / "host" / "worker"
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "resources" / "archive").mkdir(parents=True)
        for index in range(3):
            (seat / "resources" / "inbox" / f"17000000000{index:02d}-abcdef.md").write_text("---\n---\nhi\n")
        project = root / "project"
        project.mkdir()
        (project / "gaps.md").write_text("- one\n- two\nprose\n")
        knobs = root / "delegation-config.knobs"
        knobs.write_text("DELEGATION_KIT_STATUSLINE_INBOXES[] = G=gaps.md\n")
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("DELEGATION_KIT_", "ST2_CLAUDE_", "ST_")) and key != "PYTHONDONTWRITEBYTECODE"}
        arm = f"{st2} driver claude-statusline-arm --identity host.worker --catalog {catalog}"
        env.update(HOME=str(root), ST_CLAUDE_STATUSLINE_RENDERER=arm, ST2_CLAUDE_SESSION="bench",
                   DELEGATION_KIT_KNOB_FILE=str(knobs), NO_COLOR="1")
        tee = [str(st2), "driver", "claude-statusline", "--identity", "host.worker", "--catalog", str(catalog)]
        anchor = [sys.executable, "-c", "pass"]
        now = int(time.time())

        def payload(index: int) -> bytes:
            value = json.loads(payload_for(index))
            value["workspace"]["project_dir"] = str(project)
            value["rate_limits"] = {"five_hour": {"used_percentage": 41, "resets_at": now + 4400},
                                    "seven_day": {"used_percentage": 63, "resets_at": now + 300000}}
            return json.dumps(value).encode()

        for _ in range(warm_ups):
            timed(tee, env, payload(0))
            timed(anchor, env, b"")
        plain_env = env | {"ST_CLAUDE_STATUSLINE_RENDERER": "printf ok"}
        samples, anchors, plain, line = [], [], [], b""
        for index in range(runs):
            elapsed, line = timed(tee, env, payload(index))
            if b" | G2 | inbox 3" not in line:
                print(f"run {index}: the tee printed {line!r}, not the arm's full line", file=sys.stderr)
                return 1
            samples.append(elapsed)
            anchors.append(timed(anchor, env, b"")[0])
            plain.append(timed(tee, plain_env, payload(index))[0])
    median, anchor_median = statistics.median(samples), statistics.median(anchors)
    ratio = median / anchor_median
    print(f"runs: {runs} (tee+arm and anchor interleaved); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    print(f"last line: {line.decode().rstrip()}")
    print(f"tee + arm renderer: median {median:.1f} ms, p95 {p95(samples):.1f} ms")
    print(f"the same tee with printf as its renderer: median {statistics.median(plain):.1f} ms "
          f"(the arm in process adds {median - statistics.median(plain):.1f} ms)")
    print(f"python -c pass (anchor): median {anchor_median:.1f} ms")
    print(f"ratio to the anchor: {ratio:.2f} (target <= 2.5)")
    print(f"RESULT tee_arm_median_ms={median:.1f} tee_arm_p95_ms={p95(samples):.1f} ratio_python={ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
