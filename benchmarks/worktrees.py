"""What issue 37's worktrees cost: 100 seats on one repository.

Launch: the supervisor's worktree step for each seat's first launch (st2.supervisor.worktrees:
the checks, ``git worktree add --lock`` of a new branch, the first worktree-state reading with
``git status`` and ``git log``), against the named anchor, a plain ``git worktree add -b`` of the
same repository into a sibling directory, one seat at a time interleaved with the step. Also
timed: the same step on every later pass, a relaunch's reuse included (file reads, no git).

Roster: ``build_roster`` (the body of ``st2 agents --json``, declaration cache warm) over a
catalog whose seats declare the worktree, each with its record, against the same catalog whose
seats declare none; the difference per seat is what the field adds. Beside it, what reading
each worktree with git (``git status`` and ``git log -1``, the record's own reading) costs per seat:
what a roster that ran git per read would pay.

Usage: python benchmarks/worktrees.py [--seats 100] [--files 300] [--rounds 7] [--smoke]
(``--smoke``: the same path over 3 seats, 20 files, 2 rounds).
Last line: RESULT worktree_add_ms=<step median> anchor_ms=<git worktree add median>
ratio=<step/anchor> reuse_us=<reuse median> roster_added_us_per_seat=<…> git_read_us_per_seat=<…>
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def git(directory: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(directory), *arguments], check=True, capture_output=True)


def make_repository(path: Path, files: int) -> None:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for index in range(files):
        directory = path / f"module{index % 10}"
        directory.mkdir(exist_ok=True)
        (directory / f"file{index}.py").write_text(f"# file {index}\n" + "value = 1\n" * 40)
    git(path, "add", "-A")
    git(path, "-c", "user.name=bench", "-c", "user.email=bench@st2.invalid", "commit", "-q", "-m", "files")


def declare(catalog: Path, seats: int, repository: Path | None) -> None:
    for index in range(seats):
        directory = catalog / "agents" / "h" / f"seat{index:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        block = (f'\n    worktree {{\n        repo "{repository}"\n        branch "seat{index:03d}"\n    }}'
                 if repository is not None else "")
        (directory / "agent.kdl").write_text(f'agent "seat{index:03d}" {{\n    argv "sleep" "600"{block}\n}}\n')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=100)
    parser.add_argument("--files", type=int, default=300, help="files in the repository (default 300)")
    parser.add_argument("--rounds", type=int, default=7, help="roster rounds per catalog (default 7)")
    parser.add_argument("--smoke", action="store_true", help="the same path over 3 seats, 20 files, 2 rounds")
    options = parser.parse_args()
    if options.smoke:
        options.seats, options.files, options.rounds = 3, 20, 2
    base = Path(tempfile.mkdtemp(prefix="st2-bench-worktrees-"))
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    try:
        return run(base, options)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(base: Path, options) -> int:
    from st2.base.clock import SYSTEM_CLOCK
    from st2.catalog.location import CatalogLocation
    from st2.roster.build import build_roster
    from st2.runtime.declaration_cache import DeclarationCache
    from st2.runtime.scope import RuntimeScope
    from st2.supervisor.catalog_view import read_catalog
    from st2.supervisor.worktrees import WorktreeKeeper

    repository = base / "repo"
    make_repository(repository, options.files)
    with_worktrees, without = base / "with", base / "without"
    declare(with_worktrees, options.seats, repository)
    declare(without, options.seats, None)
    location = CatalogLocation(with_worktrees, "h")
    scope = RuntimeScope(with_worktrees, "h")
    scope.ensure()
    keeper = WorktreeKeeper(scope, SYSTEM_CLOCK, lambda line: None)
    plans = read_catalog(location).plans
    step = keeper.begin(plans)
    steps, anchors, reuses = [], [], []
    for index, plan in enumerate(plans):
        start = time.perf_counter()
        refusal = step.ensure(plan)
        steps.append((time.perf_counter() - start) * 1000)
        if refusal is not None:
            print(refusal, file=sys.stderr)
            return 1
        start = time.perf_counter()
        git(repository, "worktree", "add", "-q", "-b", f"anchor{index:03d}", str(base / "anchor" / f"a{index:03d}"))
        anchors.append((time.perf_counter() - start) * 1000)
    again = keeper.begin(plans)   # the next pass: every worktree reused, its git files unchanged
    for plan in plans:
        start = time.perf_counter()
        again.ensure(plan)
        reuses.append((time.perf_counter() - start) * 1_000_000)

    from st2.worktree import state

    observes = []   # what a roster running git per seat would pay instead of reading the record
    for plan in plans:
        start = time.perf_counter()
        state.observe(plan.agent, step.paths[plan.agent], plan.declaration.worktree.branch, 0)
        observes.append((time.perf_counter() - start) * 1_000_000)
    rounds: dict[str, list[float]] = {"with": [], "without": []}
    for root in (with_worktrees, without):   # warm each declaration cache once
        build_roster(root, SYSTEM_CLOCK.wall_ms(), host="h", cache=DeclarationCache.open(root))
    for _ in range(options.rounds):
        for name, root in (("with", with_worktrees), ("without", without)):
            start = time.perf_counter()
            rows, _ = build_roster(root, SYSTEM_CLOCK.wall_ms(), host="h", cache=DeclarationCache.open(root))
            rounds[name].append((time.perf_counter() - start) * 1_000_000)
            if name == "with" and any(row.worktree is None for row in rows):
                print("a seat's worktree field is missing", file=sys.stderr)
                return 1
    step_ms, anchor_ms = statistics.median(steps), statistics.median(anchors)
    reuse_us = statistics.median(reuses)
    added = (statistics.median(rounds["with"]) - statistics.median(rounds["without"])) / options.seats
    print(f"{options.seats} seats on one repository of {options.files} files; load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cpus")
    print(f"worktree step at first launch median {step_ms:.1f} ms (p90 {sorted(steps)[int(len(steps) * 0.9)]:.1f}); "
          f"anchor git worktree add median {anchor_ms:.1f} ms; ratio {step_ms / anchor_ms:.2f}")
    print(f"every later pass (a relaunch's reuse included) median {reuse_us:.0f} us per seat, no git run")
    print(f"roster over {options.seats} seats: {statistics.median(rounds['with']) / 1000:.1f} ms with worktrees, "
          f"{statistics.median(rounds['without']) / 1000:.1f} ms without; {added:.1f} us per seat")
    print(f"git status and git log per seat (a roster that ran git): median {statistics.median(observes):.0f} us")
    print(f"RESULT worktree_add_ms={step_ms:.1f} anchor_ms={anchor_ms:.1f} ratio={step_ms / anchor_ms:.2f} "
          f"reuse_us={reuse_us:.0f} roster_added_us_per_seat={added:.1f} git_read_us_per_seat={statistics.median(observes):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
