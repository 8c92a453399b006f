"""Lab tier: `st2 eval` with an eval-only judge that is a real harness seat — the pinned Codex,
run by the eval's own `st2 up` as a `codex { … }` seat against the loopback fake model — and an
`ask` judge whose verdict is that seat's reply, sent by the shell tool the fake model calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_codex  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import fake_model  # noqa: E402,F401 (the fixture)

from st2.eval.run import RUN_MARKER  # noqa: E402
from st2.process.marked import processes_carrying  # noqa: E402
from support import st2_env  # noqa: E402

pytestmark = pytest.mark.lab

# The judge's prompt is a fake-model marker: the model answers it with one shell call, and that
# call replies to the prompt (the newest mail in the judge's inbox) with the verdict word. Codex
# runs the call in a login shell, whose profile resets PATH: st2 is named by its path.
ST2 = Path(sys.executable).parent / "st2"
ASK = f"FAKE_TOOL: {ST2} message reply $(ls $CATALOG/agents/lab/judge/resources/inbox | tail -n 1) -m {{word}}"


def spec(lab: Lab, executable: str, word: str) -> str:
    worker = ('inbox=\\"$CATALOG/agents/lab/worker/resources/inbox\\"; until [ -n \\"$(ls \\"$inbox\\")\\" ]; '
              'do sleep 0.1; done; echo built > \\"$CATALOG/built.txt\\"; '
              'st2 message reply \\"$(ls \\"$inbox\\" | head -n 1)\\" -m done; while :; do sleep 3600; done')
    return f'''host "lab"
agent "worker" {{
    command "{worker}"
    ding
}}
eval {{
    message {{ from "requester"; to "worker"; content "build it" }}
    max-timeout "60s"
    agent "judge" {{
        workspace "{lab.workspace}"
        codex {{
            executable "{executable}"
            config "model_providers.fake.request_max_retries=0" "model_providers.fake.stream_max_retries=0"
        }}
    }}
    judges {{
        judge "built" {{ file "built.txt" has "built" }}
        judge "second opinion" {{
            timeout "150s"
            ask "judge" "{ASK.format(word=word)}"
        }}
    }}
}}
'''


@pytest.mark.parametrize("word, verdict, status", [("PASS", "pass", 0), ("FAIL", "fail", 1)])
def test_an_ask_judge_reads_a_real_codex_seats_reply(tmp_path: Path, fake_model: FakeModel, word: str,
                                                     verdict: str, status: int) -> None:
    harness = require_harness("codex")
    lab = Lab.create(tmp_path / "lab")
    env = st2_env() | configure_codex(lab, harness, fake_model)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "eval.kdl").write_text(spec(lab, str(harness.executable), word))
    completed = subprocess.run([sys.executable, "-m", "st2", "eval", str(tmp_path / "e"), "--json", "--keep"],
                               capture_output=True, text=True, env=env, cwd=REPO, timeout=400)
    result = json.loads(completed.stdout)
    try:
        assert completed.returncode == status, completed.stdout + completed.stderr
        assert (result["verdict"], result["done"]) == (verdict, True)
        assert result["judges"][1] == {"name": "second opinion", "kind": "ask", "passed": word == "PASS",
                                       "detail": f"judge: {word}"}
        # The reply came from the harness's own shell tool, called by the model it asked.
        assert any(entry["summary"].get("last_is_tool_result") for entry in fake_model.model_requests()
                   if entry.get("wire") == "responses")
        assert processes_carrying(RUN_MARKER, result["kept"]) == []
    finally:
        import shutil

        shutil.rmtree(result["kept"], ignore_errors=True)
