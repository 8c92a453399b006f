"""checks/extension-smoke passes on the shipped pi and omp channel extensions and fails on each
kind of broken one — the mutations below are the proof it is not vacuous: a flattened envelope
(every Python fixture would stay green while no record is ever written), a lifecycle event the
pinned build does not declare, a moved declaration, a use before declaration inside a handler
body (only a populated context reaches it), an estimate published as omp's prompt figure, a
countless edge turned into a count, a re-pull that runs during omp's turn or from a failing
pull, and a turn frame that reads omp's credential bit beside another class, names a flag value
the pinned build does not have, or comes from pi (which types no errors).

It type-checks against the lab's pinned pi and omp builds and installs the pinned TypeScript
toolchain from npm when missing, so it runs with the lab tier (``scripts/dev test``, CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "tests" / "lab"
if str(LAB) not in sys.path:
    sys.path.append(str(LAB))

from harnesses import cache_root  # noqa: E402

pytestmark = pytest.mark.lab


def cache() -> str:
    return str(cache_root())


def run_check(*trees: Path) -> subprocess.CompletedProcess:
    if shutil.which("npm") is None and not Path(cache(), "typescript-5.9.3").is_dir():
        pytest.skip("LAB TIER NOT RUN: npm is not on PATH")
    return subprocess.run([sys.executable, str(REPO / "checks" / "extension-smoke"), *map(str, trees)],
                          capture_output=True, text=True, timeout=900, env=os.environ | {"ST2_LAB_CACHE": cache()})


def test_the_shipped_extensions_pass_the_smoke() -> None:
    result = run_check()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "extension-smoke: type-checked with typescript 5.9.3 against pi 0.73.1 and omp 18.2.3",
        "extension-smoke: pi: 7 handlers x 4 contexts, 40 frames",
        "extension-smoke: pi: re-pull every 5 ms while settled, none otherwise",
        "extension-smoke: pi: 0 turn results from 9 run ends",
        "extension-smoke: omp: 9 handlers x 4 contexts, 52 frames",
        "extension-smoke: omp: re-pull every 5 ms while settled, none otherwise",
        "extension-smoke: omp: 9 turn results from 9 run ends",
    ]


MUTATIONS = {
    "flattened-envelope": (
        "st2-channel.ts",
        'this.channel?.send({ type: "context", event, reading, compaction });',
        'this.channel?.send({ type: "context", event, ...reading, compaction });',
        'envelope ["type","event","tokens","contextWindow","percent","model","costUsd","compaction"]',
    ),
    "an-event-pi-0.73.1-does-not-have": (
        "pi-channel.ts",
        '  pi.on("turn_end",',
        '  pi.on("agent_settled", (event, ctx) => guarded(() => producer.state("agent_end", "idle")));\n  pi.on("turn_end",',
        "Argument of type '\"agent_settled\"' is not assignable",
    ),
    "a-moved-declaration": (
        "pi-channel.ts",
        "{ tokens: number | null; contextWindow: number; percent: number | null } | undefined",
        "{ tokens: number; contextWindow: number; percent: number } | undefined",
        "error TS2344: Type 'false' does not satisfy the constraint 'true'",
    ),
    "use-before-declaration": (
        "pi-channel.ts",
        '    producer.hold(field(event, "message"));',
        # Through a closure: the type check cannot see the order, only running the body can.
        '    const peek = () => pending;\n    if (peek() === undefined) return;\n'
        '    const pending: unknown = field(event, "message");\n    producer.hold(field(event, "message"));',
        "pi: message_end (populated context): 0 context frames, expected one",
    ),
    "an-estimate-as-omps-prompt-figure": (
        "omp-channel.ts",
        '  pi.on("message_end", (event, ctx) => guarded(() => producer.hold(field(event, "message"))));',
        '  pi.on("message_end", (event, ctx) => guarded(() => {\n'
        '    producer.hold(field(event, "message"));\n'
        '    producer.context("message_end", producer.reading(ctx));\n'
        '  }));',
        "omp: message_end (populated context): an estimate published as omp's prompt figure",
    ),
    "a-re-pull-while-omps-turn-runs": (
        "omp-channel.ts",
        "    producer.unsettle(); // from here until the next settle omp's answer is an estimate\n",
        "",
        "omp: a re-pull while a turn runs (an estimate)",
    ),
    "a-re-pull-from-a-failing-pull": (
        "st2-channel.ts",
        '    if (usage === null || typeof usage !== "object") return;\n',
        "",
        "pi: a re-pull from a context whose pull throws",
    ),
    "an-auth-bit-read-beside-another-class": (
        "omp-channel.ts",
        'field(last, "errorId") === (ERROR_CLASS | AUTH_FAILED)',
        '(Number(field(last, "errorId")) & AUTH_FAILED) !== 0',
        "omp: agent_end on the credential class beside a usage limit: "
        '[{"type":"turn","event":"agent_end","result":"credentialRejected"}]',
    ),
    "a-flag-value-omp-does-not-have": (
        "omp-channel.ts",
        "export const AUTH_FAILED = 0x0100_0000;",
        "export const AUTH_FAILED = 0x0200_0000;",
        "error TS2344: Type 'false' does not satisfy the constraint 'true'",
    ),
    "a-turn-result-from-pi": (
        "pi-channel.ts",
        '    producer.state("agent_end", "idle");',
        '    producer.turn("agent_end", "ordinary");\n    producer.state("agent_end", "idle");',
        "pi: agent_end on a settled reply: ",
    ),
    "a-countless-edge-counted": (
        "st2-channel.ts",
        "  if (!Array.isArray(entries)) return null;",
        "  if (!Array.isArray(entries)) return 0;",
        "count 0, expected null (a countless edge when the session store cannot be read)",
    ),
}


def mutated(tmp_path: Path, mutation: str, name: str, old: str, new: str) -> Path:
    """A copy of ``hooks/`` with ``old`` replaced by ``new`` in ``name``."""
    hooks = tmp_path / mutation / "hooks"
    shutil.copytree(REPO / "hooks", hooks)
    path = hooks / name
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not once in {name}: the mutation would prove nothing"
    path.write_text(text.replace(old, new))
    return hooks


def test_a_broken_extension_fails_the_smoke(tmp_path: Path) -> None:
    """Every mutation in one run of the check (one type-check program: parsing the builds'
    declarations is nearly all of a run), beside an unbroken copy that must still pass in it."""
    trees = {mutation: mutated(tmp_path, mutation, *MUTATIONS[mutation][:3]) for mutation in sorted(MUTATIONS)}
    unbroken = tmp_path / "unbroken" / "hooks"
    shutil.copytree(REPO / "hooks", unbroken)
    result = run_check(unbroken, *trees.values())
    assert result.returncode == 1, result.stdout
    assert [line for line in result.stdout.splitlines() if not line.startswith(f"extension-smoke: {unbroken}: ")] == []
    assert f"extension-smoke: {unbroken}: omp: 9 turn results from 9 run ends" in result.stdout.splitlines()
    assert f"{unbroken}:" not in result.stderr
    for mutation, tree in trees.items():
        findings = [line for line in result.stderr.splitlines() if line.startswith(f"extension-smoke: {tree}: ")]
        assert any(MUTATIONS[mutation][3] in line for line in findings), f"{mutation}: {findings}"
