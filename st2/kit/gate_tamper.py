"""``st2 check gate-tamper [--fixture <dir>]``: the commit-shape gate over gate tampering
(docs/kit.md §Gate tamper).

Two assertions over the staged commit:

* **A — gate-edit isolation.** A commit that touches a gate file may touch only meta-layer
  paths: a ``DELEGATION_KIT_META_PATHS`` prefix, a root-level ``*.md``, or st2's install
  manifest ``st2-kit.lock`` at the top level. A gate file is a path a
  ``DELEGATION_KIT_GATE_FILES`` glob matches, or a registered member's resolved declaration,
  or the gate library (:mod:`st2.kit.gate_registry`); the last two are unioned in as literals,
  so no knob value leaves a registered gate uncovered — this gate's own declaration included.
* **B — no self-serving exemption.** A newly added path or glob entry in any gate file's
  ``# exception-list:`` array must not match a file staged in the same commit. Report lines are
  byte-sorted.

Live mode reads ``git diff --cached`` (renames as a deletion plus an addition) and each staged
gate file's exemption set out of the object store, diffed against HEAD's; a staged deletion
reads as an empty set. ``--fixture <dir>`` takes both lists from ``<dir>/staged-files`` and
``<dir>/added-exemptions`` (one entry per line) with ``<dir>`` as the top level; a trailing
``--fixture`` with no directory is refused.

Exits 0 clean, 1 findings (each followed by ``help:`` lines), 2 when no reading can be taken.
Standard library only: it runs at every commit.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys

from st2.kit import knobs as knob_table
from st2.kit import gate_output, gate_registry
from st2.kit.arm_knobs import resolve_knobs

GATE = "check-gate-tamper"
MANIFEST = "st2-kit.lock"
USAGE = "usage: st2 check gate-tamper [--fixture <dir>]"
EXCEPTION_LIST = "exception-list:"
_GLOB_CHARACTERS = frozenset("*?[")


def exception_entries(text: str) -> set[str]:
    """The entries of every ``# exception-list:`` line: whitespace-separated words, an optional
    surrounding ``( … )`` and quotes dropped."""
    entries: set[str] = set()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        body = stripped[1:].strip()
        if not body.startswith(EXCEPTION_LIST):
            continue
        for word in body[len(EXCEPTION_LIST):].replace("(", " ").replace(")", " ").split():
            word = word.strip("'\"")
            if word:
                entries.add(word)
    return entries


def is_path_entry(entry: str) -> bool:
    """A path or glob entry names a file; a bare token (a rule name, an id) does not."""
    return "/" in entry or "." in entry or bool(_GLOB_CHARACTERS & set(entry))


def _expanded(elements: tuple[str, ...], environ) -> list[str]:
    scalars = {"GATE_SDK_GATES_DIR": gate_registry.gates_dir(environ)}
    return [knob_table.expand(element, scalars, environ) for element in elements]


def is_meta(path: str, meta_prefixes: list[str]) -> bool:
    if "/" not in path and (path.endswith(".md") or path == MANIFEST):
        return True
    return any(prefix and path.startswith(prefix) for prefix in meta_prefixes)


def judge(staged: list[str], added: list[str], gate_globs: list[str], registered: list[str],
          meta_prefixes: list[str]) -> list[str]:
    """Both assertions over the two lists; return the finding lines (A's, then B's sorted)."""
    literal = set(registered)
    gate_files = sorted(
        path for path in set(staged)
        if path in literal or any(fnmatch.fnmatchcase(path, pattern) for pattern in gate_globs)
    )
    findings: list[str] = []
    if gate_files:
        for path in sorted(set(staged)):
            if path not in gate_files and not is_meta(path, meta_prefixes):
                findings.append(f"A: {path} is product code staged with gate file(s) {', '.join(gate_files)}")
    matches = set()
    for entry in added:
        if not is_path_entry(entry):
            continue
        for path in staged:
            if fnmatch.fnmatchcase(path, entry):
                matches.add(f"B: added exemption {entry} matches {path}, staged in the same commit")
    findings.extend(sorted(matches, key=lambda line: line.encode()))
    return findings


HELP_A = (
    "split the gate change into its own commit: a commit touching a gate file "
    "(DELEGATION_KIT_GATE_FILES plus every registered gate and the gate library) may touch only "
    "meta-layer paths (DELEGATION_KIT_META_PATHS, root *.md, st2-kit.lock)"
)
HELP_B = (
    "an exemption never excuses the change it lands with: fix the staged file to fit the gate, "
    "or land the exemption alone and have it reviewed"
)


def _git(toplevel: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", toplevel, *args], capture_output=True, check=False)


def _blob(toplevel: str, spec: str) -> str:
    result = _git(toplevel, "cat-file", "blob", spec)
    return result.stdout.decode("utf-8", errors="replace") if result.returncode == 0 else ""


def live_lists(cwd: str, gate_globs: list[str], registered_for) -> tuple[str, list[str], list[str], list[str]]:
    """(toplevel, staged paths, added exemption entries, registered gate files) from the index."""
    top = subprocess.run(["git", "-C", cwd, "rev-parse", "--show-toplevel"], capture_output=True, check=False)
    if top.returncode != 0:
        raise gate_output.GateRefusal(f"{cwd} is not inside a git work tree (live mode reads git diff --cached)")
    toplevel = top.stdout.decode().strip()
    diff = _git(toplevel, "diff", "--cached", "--name-only", "--no-renames", "-z")
    if diff.returncode != 0:
        raise gate_output.GateRefusal(f"git diff --cached failed: {diff.stderr.decode(errors='replace').strip()}")
    staged = [path for path in diff.stdout.decode("utf-8", errors="replace").split("\0") if path]
    registered = registered_for(toplevel)
    has_head = _git(toplevel, "rev-parse", "--verify", "-q", "HEAD").returncode == 0
    added: list[str] = []
    for path in staged:
        if path not in registered and not any(fnmatch.fnmatchcase(path, pattern) for pattern in gate_globs):
            continue
        now = exception_entries(_blob(toplevel, f":{path}"))
        before = exception_entries(_blob(toplevel, f"HEAD:{path}")) if has_head else set()
        added.extend(sorted(now - before))
    return toplevel, staged, added, registered


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return [line.strip() for line in handle.read().splitlines() if line.strip()]
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise gate_output.GateRefusal(f"{path}: cannot be read ({error.__class__.__name__})") from error


def parse_arguments(argv: list[str]) -> str | None:
    """Return the fixture directory or None (live mode); raise ValueError on a bad shape."""
    words = list(argv)
    fixture = None
    while words:
        word = words.pop(0)
        if word == "--fixture":
            if not words:
                raise ValueError("--fixture needs a directory")
            fixture = words.pop(0)
        else:
            raise ValueError(f"unexpected argument: {word}")
    return fixture


def run(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    cwd = os.getcwd() if cwd is None else cwd
    err = sys.stderr if err is None else err
    try:
        fixture = parse_arguments(argv)
    except ValueError as error:
        err.write(f"{GATE}: {error}\n{USAGE}\n")
        return gate_output.UNREADABLE
    config = resolve_knobs(environ, err, GATE)
    if config is None:
        return gate_output.UNREADABLE
    gate_globs = _expanded(config.indexed("DELEGATION_KIT_GATE_FILES"), environ)
    meta_prefixes = _expanded(config.indexed("DELEGATION_KIT_META_PATHS"), environ)
    try:
        if fixture is not None:
            if not os.path.isdir(fixture):
                raise gate_output.GateRefusal(f"--fixture {fixture}: no such directory")
            registered = gate_registry.registered_gate_files(fixture, environ)
            staged = _lines(os.path.join(fixture, "staged-files"))
            added = _lines(os.path.join(fixture, "added-exemptions"))
        else:
            _, staged, added, registered = live_lists(
                cwd, gate_globs, lambda toplevel: gate_registry.registered_gate_files(toplevel, environ)
            )
    except (gate_output.GateRefusal, gate_registry.RegistryError) as error:
        return gate_output.refuse(GATE, str(error), err)
    findings = judge(staged, added, gate_globs, registered, meta_prefixes)
    help_lines = []
    if any(line.startswith("A:") for line in findings):
        help_lines.append(HELP_A)
    if any(line.startswith("B:") for line in findings):
        help_lines.append(HELP_B)
    detail = f"{len(set(staged))} staged path(s), {len(registered)} registered gate file(s) covered"
    return gate_output.report(GATE, findings, help_lines, detail, out)


def main(argv: list[str]) -> int:
    return run(argv)
