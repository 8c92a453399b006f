"""The eval spec's grammar: the example reads into its model, the env cascades, and every malformed
spec is refused at the spec file's own line and column (an agent node's problems too)."""

from __future__ import annotations

from pathlib import Path

import ckdl

from st2.eval.run import Entry, Verdict
from st2.eval.spec import find_spec, load_spec, parse_spec
from st2.eval.world import copy_fixture, _resolved_workspace
from st2.eval import judges as judging
from st2.eval.spec import Check, Judge

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "benign"


def refusals(text: str) -> list[str]:
    spec, diagnostics = parse_spec(text, path=Path("e/eval.kdl"), source="e/eval.kdl")
    assert spec is None
    return [diagnostic.human() for diagnostic in diagnostics]


def test_the_example_reads_into_its_model_with_the_env_cascaded() -> None:
    spec, diagnostics = load_spec(find_spec(EXAMPLE))
    assert diagnostics == [] and spec is not None
    assert (spec.host, spec.env) == ("example", {"EXAMPLE_LICENSE": "MIT"})
    [worker] = spec.agents
    assert (worker.identity, worker.eval_only) == ("worker", False)
    # The agent's own node plus the top-level env, as the agent.kdl the world writes.
    assert ckdl.Document(worker.node).dump() == (
        'agent worker {\n    description "Licenses the sample repository."\n    command "sh \\"$CATALOG/worker.sh\\""\n'
        '    ding\n    env {\n        EXAMPLE_LICENSE MIT\n    }\n}\n')
    block = spec.eval
    assert (block.copy, block.timeout, block.supervise) == ("./fixture", 60.0, False)
    assert (block.message.sender, block.message.recipient, block.message.content) == ("requester", "worker",
                                                                                       "./task.md")
    assert [(step.label, step.workspace, step.allow_nonzero) for step in block.runs] == [("log", "repo", False)]
    assert [judge.name for judge in block.judges] == ["LICENSE is MIT", "package.json says MIT",
                                                      "both are committed", "two commits"]
    assert block.judges[1].checks == (Check(kind="json", path="repo/package.json", field="license", value="MIT"),)


def test_an_agents_own_env_wins_and_eval_only_agents_and_every_judge_flavor_parse() -> None:
    spec, diagnostics = parse_spec(
        'env { A "top"; B "top" }\nagent "w" { command "true"; env { B "mine" } }\n'
        'eval {\n  max-timeout "5s"\n  supervise\n  agent "judge" { command "true" }\n'
        '  run "x" { command "false"; allow-nonzero; env { C "1" } }\n'
        '  judges {\n    judge "a" { timeout "9s"; ask "judge" "PASS or FAIL?" }\n'
        '    judge "b" { json "f.json" field "n.m" is 3; json "f.json" field "ok" is #true }\n'
        '    judge "c" { exec "true" }\n  }\n}\n', path=Path("s.kdl"), source="s.kdl")
    assert diagnostics == []
    env = {node.name: node.args[0] for node in next(n for n in spec.agents[0].node.children if n.name == "env").children}
    assert env == {"A": "top", "B": "mine"}
    assert [(agent.identity, agent.eval_only) for agent in spec.agents] == [("w", False), ("judge", True)]
    assert spec.host == "eval" and spec.eval.supervise and spec.eval.message is None
    assert spec.eval.runs[0].allow_nonzero and spec.eval.runs[0].env == {"C": "1"}
    assert spec.eval.judges[0] == Judge(name="a", timeout=9.0, ask=("judge", "PASS or FAIL?"))
    assert [check.value for check in spec.eval.judges[1].checks] == [3, True]


def test_malformed_specs_are_refused_at_the_spec_files_line_and_column() -> None:
    assert refusals('eval {\n  max-timeout "5s"\n  judges {\n    judge "a" { file "x" contains "y" }\n  }\n}\n') == [
        'e/eval.kdl:4:17: error[invalid-value]: expected file "<path>" has|lacks "<text>"\n'
        '  help: file "<path>" has|lacks "<text>"']
    # An agent node is judged by the agent.kdl validator, at the spec's own positions.
    assert refusals('host "h"\n\nagent "w" {\n    command "a"\n    argv "b"\n}\neval { max-timeout "5s"; '
                    'judges { judge "a" { exec "true" } } }\n') == [
        'e/eval.kdl:5:5: error[argv-and-command]: agent "w" declares both `argv` and `command`; choose one launch '
        'form\n  help: `argv` runs the program directly; `command` runs one line under `sh -c`']
    assert refusals('eval {\n  max-timeout "soon"\n  judges { judge "a" { exec "true" } }\n}\n') == [
        'e/eval.kdl:2:15: error[invalid-value]: "soon" is not a duration']
    assert refusals('agent "w" { command "true" }\neval {\n  message { from "r"; to "nobody"; content "x" }\n'
                    '  max-timeout "5s"\n  judges { judge "a" { exec "true"; ask "w" "p" } }\n}\n') == [
        'e/eval.kdl:3:3: error[invalid-value]: the kickoff goes to `nobody`, which no agent declares',
        'e/eval.kdl:5:18: error[invalid-value]: judge `a` must be exactly one of: declarative checks '
        '(file/json/committed), one `exec`, or one `ask`']
    assert refusals('eval {\n  max-timeout "5s"\n  judges { judge "a" { exec "true" } }\n  wait "1s"\n}\n') == [
        'e/eval.kdl:4:3: error[unknown-node]: unknown node `wait`; expected one of copy, message, max-timeout, '
        'supervise, agent, run, judges']
    assert refusals('eval {\n  judges {\n    judge "a" {\n      exec "true"\n    }\n  }\n') == [
        'e/eval.kdl:1:6: error[kdl-syntax]: unclosed children block: this `{` has no matching `}`']


def test_a_missing_timeout_or_judges_block_is_refused() -> None:
    assert refusals('eval {\n  copy "f"\n}\n') == [
        'e/eval.kdl:1:1: error[invalid-value]: `eval` needs `max-timeout`, the whole eval\'s bound\n'
        '  help: max-timeout "300s"',
        'e/eval.kdl:1:1: error[invalid-value]: `eval` needs a `judges` block: a verdict is all of its judges passing']


def test_the_fixture_copy_renames_git_directories_and_workspaces_resolve_inside_the_catalog(tmp_path: Path) -> None:
    source, destination = tmp_path / "fixture", tmp_path / "catalog"
    (source / "repo" / "_git" / "refs").mkdir(parents=True)
    (source / "repo" / "_git" / "HEAD").write_text("ref: refs/heads/main\n")
    (source / "repo" / "a.txt").write_text("a")
    (source / "_gitnot").mkdir()
    destination.mkdir()
    copy_fixture(source, destination)
    assert sorted(str(path.relative_to(destination)) for path in destination.rglob("*")) == [
        "_gitnot", "repo", "repo/.git", "repo/.git/HEAD", "repo/.git/refs", "repo/a.txt"]
    node = ckdl.parse('agent "w" { workspace "repo/sub"; command "true" }', version=2).nodes[0]
    resolved = _resolved_workspace(node, destination)
    assert resolved.children[0].args == [str(destination / "repo" / "sub")] and (destination / "repo" / "sub").is_dir()


def test_declarative_checks_and_the_ask_reply_word(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_text('{"license": "MIT", "n": {"m": 3}, "ok": true, "one": 1}')
    (tmp_path / "t.txt").write_text("hello world")
    judge = Judge(name="j", timeout=None, checks=(
        Check("has", "t.txt", text="hello"), Check("lacks", "t.txt", text="bye"),
        Check("json", "f.json", field="n.m", value=3), Check("json", "f.json", field="ok", value=True)))
    assert judging.declarative(tmp_path, judge)[0] is True
    assert judging.check(tmp_path, Check("json", "f.json", field="one", value=True)) == (
        False, "f.json field 'one' is 1, not true")  # a JSON 1 is not true
    assert judging.check(tmp_path, Check("lacks", "t.txt", text="world")) == (False, "t.txt has 'world'")
    assert judging.check(tmp_path, Check("has", "../escape", text="x")) == (False, "../escape leaves the catalog")
    assert [judging.ask_verdict(body) for body in ("PASS, it is real", "fail: no", "Pass.", "maybe PASS", "")] == [
        True, False, True, None, None]


def test_the_verdict_wire_shape_is_pinned() -> None:
    verdict = Verdict(spec="examples/benign/eval.kdl", done=True, entries=[
        Entry("log", "run", True, "exited 0"), Entry("LICENSE is MIT", "checks", True, "repo/LICENSE has 'x'")])
    import json

    assert json.dumps(verdict.wire(), separators=(",", ":")) == (
        '{"schema":"st2.eval-verdict.v1","spec":"examples/benign/eval.kdl","verdict":"pass","done":true,'
        '"failure":null,"judges":[{"name":"log","kind":"run","passed":true,"detail":"exited 0"},'
        '{"name":"LICENSE is MIT","kind":"checks","passed":true,"detail":"repo/LICENSE has \'x\'"}],'
        '"leftover":0,"kept":null}')
    assert verdict.passed
    # A failed run step fails the verdict; run steps alone are not judges, so they never pass it.
    assert not Verdict(spec="s", entries=[Entry("log", "run", False, "exited 1"),
                                          Entry("a", "exec", True, "exited 0")]).passed
    assert not Verdict(spec="s", entries=[Entry("log", "run", True, "exited 0")]).passed
    assert Verdict(spec="s", interrupted=True, entries=[Entry("a", "exec", True, "")]).word == "interrupted"
