from __future__ import annotations

from pathlib import Path

from st2.declarations import load_agent
from st2.supervisor.lowering import TaskRole, lower


def declare(tmp_path: Path, identity: str, body: str):
    directory = tmp_path / "c" / "agents" / "h" / identity
    directory.mkdir(parents=True)
    path = directory / "agent.kdl"
    path.write_text(f'agent "{identity}" {{\n{body}\n}}\n')
    declaration, diagnostics = load_agent(path)
    assert declaration is not None, diagnostics
    return declaration


def test_a_compact_seat_lowers_to_its_agent_pty_ding_stream_and_authored_tasks(tmp_path):
    declaration = declare(tmp_path, "rev", '''    argv "claude" "--x"
    ding
    exec "watch" { argv "make" "watch"; keep #true; }
    stream "ci" { argv "ci-adapter"; }
    stream "ingress" ''')
    plan = lower(declaration, "h", tmp_path / "c", base_environment={"PATH": "/bin"})
    assert plan.errors == ()
    rows = [(t.runtime_id, t.kind, t.role, t.keep) for t in plan.tasks]
    assert rows == [
        ("h.rev", "pty", TaskRole.AGENT, False),
        ("h.rev.ci", "exec", TaskRole.STREAM, False),
        ("h.rev.ding", "exec", TaskRole.DING, False),
        ("h.rev.watch", "exec", TaskRole.AUTHORED, True),
    ]
    ding = next(t for t in plan.tasks if t.role is TaskRole.DING)
    assert ding.argv[-2:] == ("ding", "h.rev")           # told its target PTY task
    agent = plan.agent_task
    assert agent.argv == ("claude", "--x")


def test_every_task_environment_carries_the_runner_owned_identity(tmp_path):
    declaration = declare(tmp_path, "rev", '''    argv "sh"
    env { FOO "bar"; ST_AGENT "h.rev"; }
    exec "watch" { command "make watch"; }''')
    plan = lower(declaration, "h", tmp_path / "c", base_environment={"PATH": "/bin", "ST_AGENT": "stale", "NOTIFY_SOCKET": "/x"})
    assert plan.errors == ()
    for task in plan.tasks:
        assert task.environment["ST_AGENT"] == "h.rev"
        assert task.environment["CATALOG"] == task.environment["ST_ROOT"] == str(tmp_path / "c")
        assert task.environment["ST_HOOKS"]
        assert task.environment["FOO"] == "bar"
        assert "NOTIFY_SOCKET" not in task.environment    # the supervisor's plumbing stays its own
    watch = next(t for t in plan.tasks if t.name == "watch")
    assert watch.argv == ("/bin/sh", "-c", "make watch")


def test_a_conflicting_authored_st_agent_refuses_the_seat_before_anything_runs(tmp_path):
    # The declaration layer already refuses this when it can resolve the host; lowering checks
    # again against the host the supervisor resolved, so no path reaches a runner with it.
    declaration = declare(tmp_path, "rev", '    argv "sh"')._replace(env={"ST_AGENT": "h.someone-else"})
    plan = lower(declaration, "h", tmp_path / "c")
    assert plan.tasks == ()
    assert len(plan.errors) == 1 and "ST_AGENT='h.someone-else'" in plan.errors[0]
    # The same declaration resolved for another host conflicts too: the value is host-qualified.
    assert lower(declaration, "other", tmp_path / "c").errors


def test_a_launched_stream_alone_is_rejected_before_reconciliation(tmp_path):
    declaration = declare(tmp_path, "feed", '    argv "sh"\n    stream "ci" { argv "ci-adapter"; }')
    declaration = declaration._replace(argv=None)
    plan = lower(declaration, "h", tmp_path / "c")
    assert plan.tasks == ()
    assert "a stream alone makes nothing runnable" in plan.errors[0]


def test_a_seat_without_streams_or_ding_lowers_to_just_its_agent(tmp_path):
    declaration = declare(tmp_path, "solo", '    command "echo hi; sleep 1"')
    plan = lower(declaration, "h", tmp_path / "c")
    assert [t.runtime_id for t in plan.tasks] == ["h.solo"]
    assert plan.agent_task.argv == ("/bin/sh", "-c", "echo hi; sleep 1")


def test_a_seat_s_worktree_is_its_tasks_working_directory(tmp_path: Path) -> None:
    from st2.declarations import parse_agent

    text = ('agent "coder" {\n    argv "true"\n    worktree {\n        repo "/srv/app"\n        branch "seat"\n    }\n'
            '    exec "helper" { argv "true"; }\n}\n')
    declaration, _ = parse_agent(text, path=tmp_path / "agents" / "h" / "coder" / "agent.kdl", source=None,
                                 host="h", identity="coder")
    plan = lower(declaration, "h", tmp_path)
    assert str(plan.workspace) == "/srv/app.st2-worktrees/h.coder"
    assert {task.name: task.directory for task in plan.tasks} == {
        "agent": "/srv/app.st2-worktrees/h.coder", "helper": "/srv/app.st2-worktrees/h.coder"}
    declared = declaration._replace(worktree=declaration.worktree._replace(path="~/wt/coder"))
    assert str(lower(declared, "h", tmp_path).workspace) == str(Path("~/wt/coder").expanduser())


def test_a_stream_never_claims_a_delivery_transport(tmp_path):
    # A Codex seat is delivered by its wrapper's pump alone (`ding` on it is refused); a launched
    # stream beside it lowers as a plain stream companion, so it is no delivery transport.
    streamed = lower(declare(tmp_path, "cx", '    codex\n    stream "feed" { argv "sleep" "600"; }'), "h", tmp_path / "c")
    assert streamed.errors == ()
    assert [(task.runtime_id, task.role) for task in streamed.tasks] == [("h.cx", TaskRole.AGENT),
                                                                          ("h.cx.feed", TaskRole.STREAM)]
    refused = lower(declare(tmp_path, "cy", '    codex\n    ding'), "h", tmp_path / "c")
    assert refused.tasks == () and "delivered by its wrapper's native pump only" in refused.errors[0]
    # With `ding`, the notifier's target is the agent PTY, never the stream.
    both = lower(declare(tmp_path, "dz", '    argv "sleep" "600"\n    ding\n    stream "feed" { argv "x"; }'),
                 "h", tmp_path / "c")
    [ding] = [task for task in both.tasks if task.role is TaskRole.DING]
    assert ding.argv[-2:] == ("ding", "h.dz")


def test_resource_bindings_lower_to_one_provider_runtime_per_scheme_with_a_provider(tmp_path):
    from st2.declarations.resource_providers import ResourceProvider, built_ins

    providers = {**built_ins(), "jira": ResourceProvider("jira", ("jira-provider", "-q"), (), 300.0)}
    declaration = declare(tmp_path, "rev", '''    argv "claude"
    resource "now" uri="file:///srv/now.md"
    resource "notes" uri="file:///srv/notes.md"
    resource "repo" uri="git:///srv/repo"
    resource "ticket" uri="jira:ST-1"
    resource "board" uri="https://example.invalid/board"''')
    plan = lower(declaration, "h", tmp_path / "c", base_environment={"PATH": "/bin"}, command=["st2"],
                 providers=providers, resource_sockets=Path("/run/r"))
    assert plan.errors == ()
    resources = [(t.runtime_id, t.kind, t.argv, t.environment["ST2_RESOURCE_SOCKET"], t.companion)
                 for t in plan.tasks if t.role is TaskRole.RESOURCE]
    assert resources == [
        ("h.rev.resource-file", "exec", ("st2", "resource-runtime", "file"), "/run/r/h.rev.resource-file", True),
        ("h.rev.resource-git", "exec", ("st2", "resource-runtime", "git"), "/run/r/h.rev.resource-git", True),
        ("h.rev.resource-jira", "exec", ("jira-provider", "-q"), "/run/r/h.rev.resource-jira", True),
    ]
    # The built-in runtimes (this st2's own verb) are forked by the seat host; a declared argv is spawned.
    from st2.supervisor.backends.exec_backend import forkable_words

    assert [forkable_words(t.argv, ["st2"]) for t in plan.tasks if t.role is TaskRole.RESOURCE] == [
        ["resource-runtime", "file"], ["resource-runtime", "git"], None]
    assert [task.runtime_id for task in lower(declaration, "h", tmp_path / "c", base_environment={}).tasks] == [
        "h.rev"]  # no providers given
    lonely = declare(tmp_path, "lonely", '    exec "job" { argv "y"; }\n    resource "now" uri="file:///srv/now.md"')
    assert [task.runtime_id for task in lower(lonely, "h", tmp_path / "c", base_environment={}, providers=providers,
                                              resource_sockets=Path("/run/r")).tasks] == [
        "h.lonely.job"]   # no agent task: nothing for a provider runtime to accompany
    clash = declare(tmp_path, "clash", '    argv "x"\n    exec "resource-file" { argv "y"; }\n'
                                       '    resource "now" uri="file:///srv/now.md"')
    refused = lower(clash, "h", tmp_path / "c", base_environment={}, providers=providers,
                    resource_sockets=Path("/run/r"))
    assert refused.errors and "taken by the file: resource provider" in refused.errors[0]
