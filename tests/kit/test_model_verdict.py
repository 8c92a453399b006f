"""model-verdict's decision table over transcripts this test writes: every verdict row reached
and missed, both operand forms, the newest-record rule, the effort field and clause, a
consumer's roster, the shape refusals. Hermetic: the subject sees only the mapping built here
(no DELEGATION_KIT_* from the running process), with the binding in a sandbox knob file."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from kit_support import hermetic_environment, run_st2
from st2.kit.model_verdict import verdict

OPUS = "claude-opus-4-5-20251101"
HAIKU = "claude-haiku-4-5-20251001"
SONNET = "claude-sonnet-4-5-20250929"
BINDING = "DELEGATION_KIT_TIER_MODEL[] = judgment=opus,high\nDELEGATION_KIT_TIER_MODEL[] = mechanical=claude-haiku-4-5-20251001\n"
OFF_TIER = " — the session is not on its expected tier; stop before work that needs it and have it re-dispatched at that tier"
UNVERIFIED = " — tier unverified, not refused; the caller's rule says whether to proceed"
SESSION = "5f3a9c21-7b7e-4c0e-9d2a-0123456789ab"


def assistant(model: str, effort: str | None = "high", usage=None) -> str:
    record = {"type": "assistant", "sessionId": SESSION,
              "message": {"model": model, "role": "assistant", "usage": usage if usage is not None else {"input_tokens": 3, "output_tokens": 9, "cache_read_input_tokens": 0}}}
    if effort is not None:
        record["effort"] = effort
    return json.dumps(record)


class Case:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.sessions = root / "projects"
        self.sessions.mkdir()
        self.knobs = root / "delegation-config.knobs"
        self.knobs.write_text(BINDING + f"DELEGATION_KIT_SESSIONS_DIR = {self.sessions}\n")
        self.environ = {"HOME": str(root), "XDG_CONFIG_HOME": str(root / "config"), "DELEGATION_KIT_KNOB_FILE": str(self.knobs)}

    def transcript(self, *lines: str, name: str = SESSION) -> Path:
        path = self.sessions / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines))
        return path

    def run(self, *argv: str) -> tuple[str, int, str]:
        err = io.StringIO()
        line, status = verdict(list(argv), environ=self.environ, cwd=str(self.root), stderr=err)
        return line, status, err.getvalue()


@pytest.fixture
def case(tmp_path: Path) -> Case:
    return Case(tmp_path)


def test_read_a_bare_read_of_an_unbound_id(case) -> None:
    case.transcript(assistant(SONNET))
    assert case.run() == (f"model-verdict: id={SONNET} effort=high session=5f3a9c21 class=none expect=- -> READ", 0, "")


def test_read_names_the_classes_and_carries_no_effort_clause(case) -> None:
    case.transcript(assistant(OPUS, "low"))
    assert case.run() == (f"model-verdict: id={OPUS} effort=low session=5f3a9c21 class=judgment expect=- -> READ", 0, "")


@pytest.mark.parametrize(("model", "expect", "line_tail"), [
    (HAIKU, "mechanical", f"id={HAIKU} effort=high session=5f3a9c21 class=mechanical expect=mechanical -> OK"),  # exact id
    (OPUS, "judgment", f"id={OPUS} effort=high session=5f3a9c21 class=judgment expect=judgment -> OK"),  # alias token
    (OPUS, "mechanical", f"id={OPUS} effort=high session=5f3a9c21 class=judgment expect=mechanical -> OK"),  # stronger under a floor
    (HAIKU, "judgment", f"id={HAIKU} effort=high session=5f3a9c21 class=mechanical expect=judgment -> BELOW{OFF_TIER}"),
    (SONNET, "judgment", f"id={SONNET} effort=high session=5f3a9c21 class=none expect=judgment -> UNBOUND{OFF_TIER}"),
])
def test_the_expect_rows(case, model, expect, line_tail) -> None:
    case.transcript(assistant(model))
    line, status, err = case.run("--expect", expect)
    assert (line, err) == ("model-verdict: " + line_tail, "")
    assert status == {"OK": 0, "BELOW": 1, "UNBOUND": 1}[line_tail.split("-> ")[1].split(" ")[0]]


def test_ok_carries_the_effort_clause_only_where_the_class_binds_a_different_effort(case) -> None:
    case.transcript(assistant(OPUS, "medium"))
    assert case.run("--expect", "judgment")[0:2] == (
        f"model-verdict: id={OPUS} effort=medium session=5f3a9c21 class=judgment expect=judgment -> OK"
        " — running effort medium is not the class's bound high", 0)
    case.transcript(assistant(HAIKU, "medium"))
    assert case.run("--expect", "mechanical")[0] == (
        f"model-verdict: id={HAIKU} effort=medium session=5f3a9c21 class=mechanical expect=mechanical -> OK")
    case.transcript(assistant(OPUS, None))
    assert case.run("--expect", "judgment")[0] == (
        f"model-verdict: id={OPUS} effort=- session=5f3a9c21 class=judgment expect=judgment -> OK")


@pytest.mark.parametrize(("lines", "cause"), [
    ((), "no assistant record with non-zero usage in {path}"),
    ((assistant(OPUS, usage={"input_tokens": 0, "output_tokens": 0}),), "no assistant record with non-zero usage in {path}"),
])
def test_unknown_without_a_model_record(case, lines, cause) -> None:
    path = case.transcript(*lines)
    assert case.run("--expect", "judgment") == (
        f"model-verdict: id=- effort=- session=5f3a9c21 class=none expect=judgment -> UNKNOWN ({cause.format(path=path)}){UNVERIFIED}", 2, "")


def test_unknown_under_an_empty_binding_and_an_unbound_expected_class(case) -> None:
    case.transcript(assistant(OPUS))
    assert case.run("--expect", "routing") == (
        f"model-verdict: id={OPUS} effort=high session=5f3a9c21 class=judgment expect=routing -> UNKNOWN (expected class routing is unbound){UNVERIFIED}", 2, "")
    case.knobs.write_text(f"DELEGATION_KIT_SESSIONS_DIR = {case.sessions}\n")
    assert case.run("--expect", "judgment") == (
        f"model-verdict: id={OPUS} effort=high session=5f3a9c21 class=none expect=judgment -> UNKNOWN (the tier binding is empty){UNVERIFIED}", 2, "")
    assert case.run()[1] == 0  # a bare read needs no binding


def test_both_operand_forms_and_the_agent_prefix(case) -> None:
    case.transcript(assistant(HAIKU))
    child = case.transcript(assistant(OPUS), name=f"{SESSION}/subagents/agent-a81f02c4d5")
    os.utime(child, (1, 1))  # older than the lead's, so a bare read picks the lead
    assert case.run("a81f02c4")[0] == f"model-verdict: id={OPUS} effort=high session=a81f02c4 class=judgment expect=- -> READ"
    assert case.run(str(child))[0] == f"model-verdict: id={OPUS} effort=high session=a81f02c4 class=judgment expect=- -> READ"
    assert case.run()[0] == f"model-verdict: id={HAIKU} effort=high session=5f3a9c21 class=mechanical expect=- -> READ"
    assert case.run("deadbeef") == (
        f"model-verdict: id=- effort=- session=deadbeef class=none expect=- -> UNKNOWN (no transcript under {case.sessions} for key deadbeef){UNVERIFIED}", 2, "")


def test_the_newest_record_wins_a_mid_file_switch(case) -> None:
    case.transcript(assistant(HAIKU), assistant(OPUS, "max"), assistant(HAIKU, usage={"input_tokens": 0}), '{"type":"assistant", torn')
    assert case.run()[0] == f"model-verdict: id={OPUS} effort=max session=5f3a9c21 class=judgment expect=- -> READ"


def test_the_sessions_dir_is_derived_when_the_knob_is_empty(case) -> None:
    case.knobs.write_text(BINDING)
    derived = case.root / ".claude" / "projects" / str(case.root).replace("/", "-").replace("_", "-").replace(".", "-")
    derived.mkdir(parents=True)
    (derived / f"{SESSION}.jsonl").write_text(assistant(HAIKU) + "\n")
    assert case.run()[0] == f"model-verdict: id={HAIKU} effort=high session=5f3a9c21 class=mechanical expect=- -> READ"


def test_a_consumers_roster_ranks_its_classes(case) -> None:
    case.knobs.write_text(
        "DELEGATION_KIT_TIER_CLASSES[] = deep\nDELEGATION_KIT_TIER_CLASSES[] = cheap\n"
        "DELEGATION_KIT_TIER_MODEL[] = deep=opus\nDELEGATION_KIT_TIER_MODEL[] = cheap=haiku\n"
        f"DELEGATION_KIT_SESSIONS_DIR = {case.sessions}\n")
    case.transcript(assistant(OPUS))
    assert case.run("--expect", "cheap")[0:2] == (f"model-verdict: id={OPUS} effort=high session=5f3a9c21 class=deep expect=cheap -> OK", 0)
    case.transcript(assistant(HAIKU))
    assert case.run("--expect", "deep")[1] == 1
    assert case.run("--expect", "judgment") == ("", 2, (
        "model-verdict: --expect judgment names no class of DELEGATION_KIT_TIER_CLASSES (deep, cheap)\n"
        "usage: st2 model-verdict [--expect <class>] [--] [<transcript.jsonl | session8>]\n"))


def test_shape_refusals_and_the_escape(case) -> None:
    usage = "usage: st2 model-verdict [--expect <class>] [--] [<transcript.jsonl | session8>]\n"
    assert case.run("--bogus") == ("", 2, "model-verdict: unrecognized option: --bogus\n" + usage)
    assert case.run("--expect") == ("", 2, "model-verdict: --expect needs a value\n" + usage)
    assert case.run("a.jsonl", "b.jsonl") == ("", 2, "model-verdict: unexpected second operand: b.jsonl\n" + usage)
    dashed = case.transcript(assistant(HAIKU), name="-dash")
    assert case.run("--", str(dashed).replace(str(case.sessions) + "/", "")) [1] == 2  # relative, not found
    assert case.run("--", str(dashed))[0] == f"model-verdict: id={HAIKU} effort=high session=-dash class=mechanical expect=- -> READ"


@pytest.mark.process
@pytest.mark.process
def test_the_cli_prints_the_line_and_exits_with_the_status(case, sandbox) -> None:
    case.transcript(assistant(HAIKU))
    environ = hermetic_environment(sandbox, DELEGATION_KIT_KNOB_FILE=str(case.knobs))
    result = run_st2(["model-verdict", "--expect", "judgment"], environ)
    assert (result.returncode, result.stdout.decode(), result.stderr.decode()) == (
        1, f"model-verdict: id={HAIKU} effort=high session=5f3a9c21 class=mechanical expect=judgment -> BELOW{OFF_TIER}\n", "")
