"""Worktrees: each seat's own git worktree, made before its first launch, read for the roster,
and never removed while it holds the seat's work (docs/worktrees.md).

Below the supervisor, the roster and authoring, above the runtime layout: it runs git only
through :mod:`.git`, and what only a file read can tell (a relaunch's reuse, the roster's
reading) never starts a process.

- :mod:`.git` — the one seam through which st2 runs ``git``: bounded, no prompt, no inherited
  ``GIT_*`` variables.
- :mod:`.checkout` — what a repository and a worktree directory are, read from their files alone.
- :mod:`.ensure` — before a seat launches: create or reuse its worktree, locked, or hold the seat
  with the reason.
- :mod:`.work` — what removing a worktree would lose: uncommitted changes, untracked files,
  stashes, commits on no remote and no other branch.
- :mod:`.state` — the host-local worktree-state record the supervisor writes and the roster reads.
"""
