"""Capture the frames st2's channel extension writes inside the real pi / omp (pinned builds),
beside the lab probe's own view of the same events.

    python tests/lab/capture_channel.py pi|omp [--out DIR]

Runs ``<harness> --mode rpc -e hooks/<harness>-channel.ts -e tests/lab/extension/context-usage.ts``
offline against the fake model (hi; FAKE_TOOL echo; compact; after compact), with the channel
on an inherited pipe exactly as the session wrapper passes it ($ST2_CHANNEL_FD). Writes
``captures/<harness>/<version>/channel/frames.jsonl`` (the wire, verbatim, one frame a line),
``probe.jsonl`` (the probe's per-event getContextUsage()) and ``PROVENANCE.md``.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import os
import select
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from fake_model import FakeModel  # noqa: E402
from harnesses import install, load_manifest  # noqa: E402
from lab_config import EXTENSION, Lab, configure_pi  # noqa: E402
from lab_drivers import PiRpc  # noqa: E402

STEPS = "--mode rpc (fake-anthropic): hi; FAKE_TOOL echo; compact; after compact"


def read_available(descriptor: int, sink: bytearray) -> None:
    while select.select([descriptor], [], [], 0)[0]:
        chunk = os.read(descriptor, 65536)
        if not chunk:
            return
        sink.extend(chunk)


def capture(name: str, out: Path | None = None) -> Path:
    harness = load_manifest()[name]
    install(harness)
    output = out or REPO / "captures" / name / harness.version / "channel"
    output.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="st2-channel-") as temporary, FakeModel() as fake:
        lab = Lab.create(Path(temporary))
        env = configure_pi(lab, harness, fake)
        read_end, write_end = os.pipe()
        fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
        env["ST2_CHANNEL_FD"] = str(write_end)
        frames = bytearray()
        extension = REPO / "hooks" / f"{name}-channel.ts"
        rpc = PiRpc(harness.executable, lab, env, "fake-anthropic", "fake-claude", offline=name == "pi",
                    extensions=(extension, EXTENSION), pass_fds=(write_end,))
        os.close(write_end)
        try:
            for step in ("hi", "FAKE_TOOL: echo channel-tool-ok"):
                rpc.prompt(step)
                read_available(read_end, frames)
            rpc.command({"type": "compact"}, timeout=120)
            read_available(read_end, frames)
            rpc.prompt("after compact")
        finally:
            rpc.close()
        read_available(read_end, frames)
        os.close(read_end)
        probe = lab.logs / "extension.jsonl"
        (output / "frames.jsonl").write_bytes(bytes(frames))
        (output / "probe.jsonl").write_text(probe.read_text() if probe.exists() else "")
    needs = f" (+ {', '.join(harness.needs)})" if harness.needs else ""
    (output / "PROVENANCE.md").write_text(
        f"# Channel capture: {name} {harness.version}\n\n"
        f"- harness: {name}, npm `{harness.package}@{harness.version}`{needs}\n"
        f"- date: {datetime.date.today().isoformat()}\n"
        f"- made by: `python tests/lab/capture_channel.py {name}` (real binary, offline, fake model on 127.0.0.1)\n"
        f"- session: {STEPS}\n"
        f"- extensions: hooks/{name}-channel.ts (frames.jsonl: its wire on the inherited pipe, verbatim) and "
        "tests/lab/extension/context-usage.ts (probe.jsonl: getContextUsage() per event)\n"
        f"- fake usage per answer: {fake_usage()}\n")
    return output


def fake_usage() -> str:
    return "input 9900, output 42, cache_read 1200, cache_creation 300 (the fake model's defaults)"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("harness", choices=("pi", "omp"))
    parser.add_argument("--out", type=Path)
    arguments = parser.parse_args(argv)
    print(capture(arguments.harness, arguments.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
