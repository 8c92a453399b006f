"""``st2 validate``'s worktree rules, judged only for the selected host's seats (a worktree is
host-local: another host's repository paths mean nothing here). Read-only and process-free: the
repository is judged from its files (:func:`st2.worktree.checkout.repository`).

Each problem is one located error at the seat's ``worktree`` node: a repository that is missing,
a symlink, a linked worktree or not a repository; a repository or worktree inside the catalog
(which a replication engine may carry); a repository inside another seat's worktree; two seats
claiming one branch of one repository, or one worktree path.
"""

from __future__ import annotations

import os

from st2.declarations.diagnostics import ERROR, Diagnostic
from st2.worktree import checkout


def worktree_problems(root, host: str, declarations, located) -> list[Diagnostic]:
    """``declarations`` are ``(seat, declaration)`` pairs; ``located(seat, field, code, severity,
    message, help)`` makes a diagnostic at the seat's ``field`` node."""
    seats = [(seat, declaration.worktree, checkout.worktree_path(declaration.worktree, seat.runtime_id))
             for seat, declaration in declarations if seat.host == host and declaration.worktree is not None]
    problems = []

    def refuse(seat, code: str, message: str, help_text: str | None = None) -> None:
        problems.append(located(seat, "worktree", code, ERROR, message, help_text))

    branches: dict[tuple[str, str], list[str]] = {}
    paths: dict[str, list[str]] = {}
    for seat, worktree, path in seats:
        repository, refusal = checkout.repository(worktree.repo)
        if repository is None:
            refuse(seat, "worktree-repo-invalid", refusal)
            continue
        for what, where in (("repository", repository.path), ("worktree", path)):
            if checkout.inside(where, str(root)):
                refuse(seat, "worktree-in-catalog",
                       f"the {what} {where} lies inside the catalog, which a replication engine may carry",
                       "keep worktrees outside the catalog")
        owner = next((other.runtime_id for other, _, other_path in seats
                      if other is not seat and checkout.inside(repository.path, other_path)), None)
        if owner is not None:
            refuse(seat, "worktree-repo-in-worktree", f"the repository {repository.path} lies inside {owner}'s "
                                                      "worktree", "name the main checkout, not a seat's worktree")
        branches.setdefault((os.path.realpath(repository.path), worktree.branch), []).append(seat.runtime_id)
        paths.setdefault(os.path.realpath(path), []).append(seat.runtime_id)
    for seat, worktree, path in seats:
        claims = paths.get(os.path.realpath(path), [])
        if len(claims) > 1:
            refuse(seat, "worktree-path-claimed", f"worktree path {path} is claimed by {', '.join(claims)}")
        repository, _ = checkout.repository(worktree.repo)
        if repository is None:
            continue
        claims = branches.get((os.path.realpath(repository.path), worktree.branch), [])
        if len(claims) > 1:
            refuse(seat, "worktree-branch-claimed", f"branch {worktree.branch!r} of {repository.path} is claimed by "
                                                    f"{', '.join(claims)}", "give each seat its own branch")
    return problems
