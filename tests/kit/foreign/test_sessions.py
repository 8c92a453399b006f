"""The foreign run's session rows (open, resume, close, collision) and class rows, under
stand-in adapters whose resume forms are scripts too."""

from __future__ import annotations

import pytest

import subprocess

pytestmark = pytest.mark.process  # every case spawns git or the real st2 CLI


def fields(out: str) -> dict[str, str]:
    head = out.split(" -> ", 1)[0].split(": ", 1)[1]
    return dict(word.split("=", 1) for word in head.split())


def verdict(out: str) -> str:
    return out.rstrip("\n").split(" -> ", 1)[1]


def resumable(foreign, marker_stream: str = ">&1", resume_words=("@SESSION_ID@",), mode_script="echo turn; "):
    foreign.adapter("talker", foreign.script("talker", f'{mode_script}echo "session id: s-42.x" {marker_stream}'))
    foreign.knob("DELEGATION_KIT_FOREIGN_SESSION_MARKER[] = talker=session id:")
    resume = foreign.script("talker-resume", 'echo "resumed $* with $(cat)"')
    foreign.knob(f"DELEGATION_KIT_FOREIGN_RESUME[] = talker={resume}",
                 *(f"DELEGATION_KIT_FOREIGN_RESUME[] = talker={word}" for word in resume_words))


def test_open_keeps_the_clone_and_records_the_session(foreign) -> None:
    resumable(foreign)
    status, out, _ = foreign.call("run", "talker", str(foreign.prompt))
    run_dir = foreign.run_dir()
    assert (status, verdict(out)) == (0, "OK — resumable: st2 foreign resume audit-7 <prompt-file>")
    assert (run_dir / "session.txt").read_text() == (
        f"adapter=talker mode=audit class=- model=- effort=- base={foreign.head} turn=1 id=s-42.x\n")
    assert (run_dir / "tree").is_dir() and (run_dir / "refs.txt").read_text().startswith(f"{foreign.head} HEAD\n")


def test_a_marker_only_on_stderr_records_the_id(foreign) -> None:
    resumable(foreign, marker_stream=">&2")
    foreign.call("run", "talker", str(foreign.prompt))
    assert (foreign.run_dir() / "session.txt").read_text().endswith(" id=s-42.x\n")


def test_no_id_captured_opens_no_session_when_the_form_needs_one(foreign) -> None:
    resumable(foreign, marker_stream="> /dev/null")
    status, out, _ = foreign.call("run", "talker", str(foreign.prompt))
    assert (status, verdict(out)) == (0, "OK — not resumable (no session id after the marker 'session id:')")
    assert not (foreign.run_dir() / "tree").exists() and not (foreign.run_dir() / "session.txt").exists()


def test_a_form_without_the_id_token_opens_a_session_recording_dash(foreign) -> None:
    foreign.adapter("plain", "true")
    foreign.knob("DELEGATION_KIT_FOREIGN_RESUME[] = plain=true")
    assert verdict(foreign.call("run", "plain", str(foreign.prompt))[1]).startswith("OK — resumable")
    assert (foreign.run_dir() / "session.txt").read_text().endswith(" turn=1 id=-\n")


def test_resume_substitutes_rotates_and_advances_the_turn(foreign) -> None:
    resumable(foreign, resume_words=("@SESSION_ID@", "--prompt=@PROMPT_FILE@"))
    foreign.call("run", "talker", str(foreign.prompt))
    second = foreign.root / "answer.md"
    second.write_text("Use the second option.\n")
    status, out, _ = foreign.call("resume", "audit-7", str(second))
    run_dir = foreign.run_dir()
    assert status == 0, out
    assert fields(out) == {"adapter": "talker", "mode": "audit", "class": "-", "key": "audit-7", "turn": "2", "budget": "OFF",
                           "exit": "0", "report": f"{run_dir}/report.txt", "patch": "none"}
    assert verdict(out) == "OK — resumable: st2 foreign resume audit-7 <prompt-file>"
    assert (run_dir / "report.txt").read_text() == f"resumed s-42.x --prompt={second} with Use the second option.\n"
    assert (run_dir / "report.1.txt").read_text() == "turn\nsession id: s-42.x\n"
    assert (run_dir / "session.txt").read_text().endswith(" turn=2 id=s-42.x\n")


def test_a_sweep_patch_covers_the_whole_session_a_failed_turn_included(foreign) -> None:
    foreign.adapter("sweeper", foreign.script("sweeper", "echo one > one.txt"))
    turn = foreign.script("sweeper-turn", 'echo "$(cat)" > "$1.txt"; [ "$1" != fail ]')
    foreign.knob(f"DELEGATION_KIT_FOREIGN_RESUME[] = sweeper={turn}", "DELEGATION_KIT_FOREIGN_RESUME[] = sweeper=fail")
    assert foreign.call("run", "sweeper", str(foreign.prompt), "--mode", "sweep")[0] == 0
    status, out, _ = foreign.call("resume", "audit-7", str(foreign.prompt))
    assert (status, verdict(out)) == (2, "FAILED (adapter exited 1)")
    assert fields(out)["turn"] == "2"
    patch = foreign.run_dir() / "change.patch"
    assert fields(out)["patch"] == str(patch)
    text = patch.read_text()
    assert "one.txt" in text and "fail.txt" in text
    subprocess.run(["git", "-C", str(foreign.repo), "apply", "--check", str(patch)], check=True)
    assert (foreign.run_dir() / "session.txt").exists()  # a failed turn keeps the session


def test_a_committing_resume_is_refused_and_ends_the_session(foreign) -> None:
    foreign.adapter("talker", "true")
    foreign.knob("DELEGATION_KIT_FOREIGN_RESUME[] = talker=" + foreign.script("c", "git -c user.email=x@y -c user.name=x commit -q --allow-empty -m x"))
    foreign.call("run", "talker", str(foreign.prompt))
    status, out, _ = foreign.call("resume", "audit-7", str(foreign.prompt))
    assert (status, verdict(out)) == (1, f"REFUSED (committed) — clone kept at {foreign.run_dir() / 'tree'}")
    assert not (foreign.run_dir() / "session.txt").exists() and (foreign.run_dir() / "tree").is_dir()


def test_resume_of_an_unknown_key_fails_without_a_spawn(foreign) -> None:
    assert foreign.call("resume", "nothing", str(foreign.prompt)) == (2, (
        "foreign-resume: adapter=- mode=- class=- key=nothing turn=- budget=- exit=- report=none patch=none "
        "-> FAILED (no open session under nothing)\n"), "")


def test_close_keeps_every_report_and_a_second_close_fails(foreign) -> None:
    resumable(foreign)
    foreign.call("run", "talker", str(foreign.prompt))
    foreign.call("resume", "audit-7", str(foreign.prompt))
    # a new run under an open session's key fails
    assert verdict(foreign.call("run", "talker", str(foreign.prompt))[1]) == "FAILED (key audit-7 holds an open session: resume or close it)"
    assert foreign.call("close", "audit-7") == (0, "foreign-resume: key=audit-7 -> CLOSED\n", "")
    run_dir = foreign.run_dir()
    assert sorted(path.name for path in run_dir.iterdir()) == ["report.1.txt", "report.txt", "stderr.1.txt", "stderr.txt"]
    assert foreign.call("close", "audit-7") == (2, "foreign-resume: key=audit-7 -> FAILED (no open session under audit-7)\n", "")
    # a new open clears the rotated reports a closed session left
    foreign.call("run", "talker", str(foreign.prompt))
    assert not (run_dir / "report.1.txt").exists()


def test_session_txt_reads_back_and_a_line_without_class_fields(foreign) -> None:
    from st2.kit.foreign import session

    values = {"adapter": "a", "mode": "sweep", "class": "mechanical", "model": "m", "effort": None, "base": "abc", "turn": "3", "id": "x"}
    assert session.parse(session.render(values)) == values | {"effort": "-"}
    assert session.parse("adapter=a mode=audit base=abc turn=1 id=-\n") == {
        "adapter": "a", "mode": "audit", "class": "-", "model": "-", "effort": "-", "base": "abc", "turn": "1", "id": "-"}


# --- the class rows ------------------------------------------------------------------------

def classed(foreign, effort_row=",high"):
    echo = foreign.script("echo-argv", 'printf "%s\\n" "$@"')
    foreign.adapter("vendor", echo, "--model=@MODEL@", "-c", "reasoning=@EFFORT@")
    foreign.knob("DELEGATION_KIT_FOREIGN_HARNESS[] = vendor=acme",
                 f"DELEGATION_KIT_FOREIGN_TIER_MODEL[] = acme/mechanical=acme-mini{effort_row}",
                 f"DELEGATION_KIT_FOREIGN_RESUME[] = vendor={echo}", "DELEGATION_KIT_FOREIGN_RESUME[] = vendor=again=@MODEL@/@EFFORT@")


def test_both_class_tokens_are_substituted_inside_words(foreign) -> None:
    classed(foreign)
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt), "--class", "mechanical")
    assert status == 0 and fields(out)["class"] == "mechanical"
    assert (foreign.run_dir() / "report.txt").read_text() == "--model=acme-mini\n-c\nreasoning=high\n"
    assert " class=mechanical model=acme-mini effort=high " in (foreign.run_dir() / "session.txt").read_text()


def test_class_shape_refusals_and_pre_budget_failures(foreign) -> None:
    classed(foreign)
    usage_tail = "usage: st2 foreign run <adapter> <prompt-file> [--mode audit|sweep] [--class <class>] [--key <key>]\n       st2 foreign run <adapter> --budget\n"
    assert foreign.call("run", "vendor", str(foreign.prompt)) == (2, "", "foreign-run: adapter vendor takes a class: --class <class> is required\n" + usage_tail)
    assert foreign.call("run", "vendor", str(foreign.prompt), "--class", "senior") == (
        2, "", "foreign-run: adapter vendor --class senior is not in DELEGATION_KIT_TIER_CLASSES\n" + usage_tail)
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt), "--class", "judgment")
    assert (status, verdict(out), fields(out)["budget"]) == (2, "FAILED (class: acme binds no model to judgment)", "-")
    assert not foreign.run_dir().exists()


def test_an_effortless_row_under_the_effort_token_fails_before_the_budget_read(foreign) -> None:
    classed(foreign, effort_row="")
    status, out, _ = foreign.call("run", "vendor", str(foreign.prompt), "--class", "mechanical")
    assert (status, verdict(out), fields(out)["budget"]) == (2, "FAILED (class: acme/mechanical binds no effort for @EFFORT@)", "-")
    assert not foreign.run_dir().exists()


def test_class_on_a_plain_adapter_applies_nothing(foreign) -> None:
    foreign.adapter("plain", "true")
    assert fields(foreign.call("run", "plain", str(foreign.prompt), "--class", "whatever")[1])["class"] == "-"


def test_a_resumed_turn_carries_the_opened_pair_after_the_binding_changed(foreign) -> None:
    classed(foreign)
    foreign.call("run", "vendor", str(foreign.prompt), "--class", "mechanical")
    foreign.lines = [line.replace("acme-mini,high", "acme-max,low") for line in foreign.lines]
    foreign.knob()
    assert foreign.call("resume", "audit-7", str(foreign.prompt))[0] == 0
    assert (foreign.run_dir() / "report.txt").read_text() == "again=acme-mini/high\n"
    foreign.call("close", "audit-7")
    foreign.call("run", "vendor", str(foreign.prompt), "--class", "mechanical")
    assert (foreign.run_dir() / "report.txt").read_text() == "--model=acme-max\n-c\nreasoning=low\n"


def test_a_resume_form_asking_for_a_pair_its_session_lacks_fails_before_the_spawn(foreign) -> None:
    classed(foreign)
    foreign.call("run", "vendor", str(foreign.prompt), "--class", "mechanical")
    record = foreign.run_dir() / "session.txt"
    # a record an earlier build wrote, without the class fields: they read back as -
    record.write_text(f"adapter=vendor mode=audit base={foreign.head} turn=1 id=-\n")
    before = (foreign.run_dir() / "report.txt").read_bytes()
    status, out, _ = foreign.call("resume", "audit-7", str(foreign.prompt))
    assert (status, verdict(out), fields(out)["budget"], fields(out)["exit"]) == (
        2, "FAILED (class: the session recorded no model for @MODEL@)", "-", "-")
    assert (foreign.run_dir() / "report.txt").read_bytes() == before and not (foreign.run_dir() / "report.1.txt").exists()
