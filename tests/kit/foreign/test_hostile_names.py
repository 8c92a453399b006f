"""The foreign verbs under a hostile run directory, through the real CLI: a key that is not one
path component is refused before any file is touched (`st2 foreign close ..` removed files
outside `.tmp/foreign/`), and a FIFO where a run file goes is refused in one line, never
waited on."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.process  # the real st2 CLI and git


def outside_session(foreign):
    """What `close ..` would have taken: a session record, refs and a clone in `.tmp/` itself."""
    scratch = foreign.repo / ".tmp"
    (scratch / "foreign").mkdir(parents=True)
    (scratch / "session.txt").write_text(f"adapter=talker mode=audit base={foreign.head} turn=1\n")
    (scratch / "refs.txt").write_text("keep\n")
    (scratch / "tree").mkdir()
    (scratch / "tree" / "precious").write_text("keep\n")
    return scratch


@pytest.mark.parametrize("key", ["..", ".", "", "a/b", "../foreign", "x\ny", "esc\x1b[2J"])
def test_a_key_that_is_not_one_path_component_is_refused_before_any_file_is_touched(foreign, key) -> None:
    scratch = outside_session(foreign)
    before = sorted(str(path.relative_to(scratch)) for path in scratch.rglob("*"))
    for verb, words in (("close", [key]), ("resume", [key, str(foreign.prompt)])):
        status, out, err = foreign.cli(verb, "--", *words)
        assert (status, out) == (2, ""), (verb, out, err)
        assert err == f"foreign-resume: key {key!r} is not one path component\nusage: st2 foreign {verb} [--] <key>" + (
            " <prompt-file>\n" if verb == "resume" else "\n")
    if key:  # (run reads an empty --key as none given: the prompt file's name)
        status, out, err = foreign.cli("run", "talker", str(foreign.prompt), "--key", key)
        assert status == 2 and err.startswith(f"foreign-run: --key {key!r} is not one path component\n")
    assert sorted(str(path.relative_to(scratch)) for path in scratch.rglob("*")) == before


@pytest.mark.parametrize("name", ["session.txt", "refs.txt", "report.txt"])
def test_a_fifo_in_the_run_directory_is_refused_in_one_line_and_never_waited_on(foreign, name) -> None:
    foreign.adapter("talker", foreign.script("talker", 'echo "session id: s-42.x"'))
    foreign.knob("DELEGATION_KIT_FOREIGN_SESSION_MARKER[] = talker=session id:",
                 f"DELEGATION_KIT_FOREIGN_RESUME[] = talker={foreign.script('talker-resume', 'echo resumed')}")
    status, out, _ = foreign.cli("run", "talker", str(foreign.prompt))
    assert status == 0, out
    run_dir = foreign.run_dir()
    if name == "report.txt":
        os.unlink(run_dir / "report.txt")
        os.mkfifo(run_dir / "report.txt")
        # resume rotates the old report aside first; a new run finds it where its report goes
        (run_dir / "session.txt").unlink()
        import shutil

        shutil.rmtree(run_dir / "tree")
        status, out, err = foreign.cli("run", "talker", str(foreign.prompt))
        assert status == 2 and out.endswith(f"-> FAILED ({run_dir / 'report.txt'} is not a regular file)\n"), out + err
        assert not (run_dir / "tree").exists()
        return
    os.unlink(run_dir / name)
    os.mkfifo(run_dir / name)
    why = f"{run_dir / name} is a FIFO, not a regular file"
    status, out, err = foreign.cli("resume", "audit-7", str(foreign.prompt))
    assert (status, err) == (2, "") and out.endswith(f"-> FAILED ({why})\n"), out + err
    status, out, err = foreign.cli("close", "audit-7")
    if name == "session.txt":
        assert (status, out, err) == (2, f"foreign-resume: key=audit-7 -> FAILED ({why})\n", "")
        assert (run_dir / "tree").is_dir()  # nothing removed
    else:
        assert (status, out, err) == (0, "foreign-resume: key=audit-7 -> CLOSED\n", "")
