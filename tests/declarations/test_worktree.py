"""The ``worktree`` block's shape, judged without the disk: every problem one located diagnostic,
pinned as the full line ``st2 validate`` prints; git's branch-name rules without running git."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations import parse_agent
from st2.declarations.model import Worktree
from st2.declarations.worktree import branch_refusal


def diagnostics(block: str, extra: str = "") -> list[str]:
    text = f'agent "x" {{\n    argv "true"\n{extra}    worktree {{\n{block}    }}\n}}\n'
    declaration, found = parse_agent(text, path=Path("agents/h/x/agent.kdl"), source="agents/h/x/agent.kdl")
    return [str(diagnostic) for diagnostic in found] if found else [declaration.worktree]


def test_a_well_formed_block_is_the_declaration_s_worktree() -> None:
    assert diagnostics('        repo "~/src/app"\n        branch "seats/x"\n        base "origin/main"\n'
                       '        path "/srv/wt/x"\n') == [Worktree("~/src/app", "seats/x", "origin/main", "/srv/wt/x")]
    assert diagnostics('        repo "/srv/app"\n        branch "x"\n') == [Worktree("/srv/app", "x")]


@pytest.mark.parametrize("block, expected", [
    ('        repo "/srv/app"\n',
     'agents/h/x/agent.kdl:3:5: error[worktree-incomplete]: `worktree` needs `branch`\n'
     '  help: write: worktree { repo "/path/to/repository"; branch "seat-branch" }'),
    ('        repo "src/app"\n        branch "x"\n',
     'agents/h/x/agent.kdl:4:14: error[worktree-invalid]: worktree `repo` "src/app" must be an absolute path '
     '(or start with ~)\n  help: a relative path would name a different directory from every working directory'),
    ('        repo "/srv/app"\n        branch "a..b"\n',
     'agents/h/x/agent.kdl:5:16: error[worktree-branch-invalid]: worktree branch "a..b" is not a valid branch '
     'name: it holds .. or @{'),
    ('        repo "/srv/app"\n        branch "x"\n        branch "y"\n',
     'agents/h/x/agent.kdl:6:9: error[duplicate-field]: `branch` is declared more than once in `worktree`'),
    ('        repo "/srv/app"\n        branch "x"\n        remote "origin"\n',
     'agents/h/x/agent.kdl:6:9: error[unknown-node]: unknown node `remote` in `worktree`'),
    ('        repo "/srv/app"\n        branch "x"\n        base "--orphan"\n',
     'agents/h/x/agent.kdl:6:14: error[worktree-invalid]: worktree `base` "--orphan" must name a ref or commit, '
     'not start with -'),
    ('        repo "/srv/app"\n        branch 7\n',
     'agents/h/x/agent.kdl:5:16: error[invalid-value]: `branch` must be a string, found 7'),
])
def test_each_malformed_block_is_one_located_diagnostic(block: str, expected: str) -> None:
    assert diagnostics(block) == [expected]


def test_a_workspace_beside_a_worktree_is_refused() -> None:
    assert diagnostics('        repo "/srv/app"\n        branch "x"\n', '    workspace "/srv/app"\n') == [
        'agents/h/x/agent.kdl:4:5: error[worktree-workspace-conflict]: agent "x" declares both `workspace` and '
        '`worktree`; the worktree is the workspace\n  help: remove `workspace`']


@pytest.mark.parametrize("name", ["main", "seats/x", "feature-1.2", "a_b", "x@y"])
def test_branch_names_git_accepts(name: str) -> None:
    assert branch_refusal(name) is None


@pytest.mark.parametrize("name", ["HEAD", "@", "-x", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b",
                                  "a\x01", "a..b", "a@{1}", "/a", "a/", "a//b", "a.", ".a", "a/.b", "a.lock",
                                  "a/b.lock/c"])
def test_branch_names_git_refuses(name: str) -> None:
    assert branch_refusal(name) is not None
