"""``st2 kit init [--] [<project-dir>]``: install the delegation kit into a project.

Into the project's top level (the git top level of ``<project-dir>``, default the current
directory) it writes:

* ``.claude/delegation/agent-execution.md`` and ``dispatch-checklists.md`` — the templates;
* ``<gates dir>/delegation-config.knobs`` — the comment-only knob file (set only what you
  override; private values go in ``delegation-config.local.knobs`` beside it, gitignored);
* ``<gates dir>/check-gate-tamper.gate`` and ``check-agent-tier-explicit.gate`` — the gate
  declarations, registered (``tier: precommit``) in ``<gates dir>/gates.list``;
* ``.claude/delegation/settings-snippet.json`` and ``.claude/delegation/pre-commit`` — the
  registration snippets: wiring them is the project owner's own act (a permission surface);
* ``.gitignore`` lines for the local overlay and the scratch and workflow dirs;
* ``st2-kit.lock`` — the install manifest, ``<sha256>  <path>`` per installed file.

A file already holding the kit's bytes reads ``current``. One holding other bytes is a
conflict: nothing at all is written, and every conflict is named at exit 2. ``gates.list`` and
``.gitignore`` are merged (missing lines appended), never overwritten.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from st2.base.digest import sha256
from st2.kit import gate_registry
from st2.kit.knobs import DEFAULT_KNOB_FILE_NAME
import st2.front as argv_grammar

TEMPLATES = Path(__file__).resolve().parent / "templates"
DECLARATIONS = Path(__file__).resolve().parent / "checks"
GATES = ("check-gate-tamper", "check-agent-tier-explicit")
IGNORED = ("delegation-config.local.knobs", ".tmp/", ".workflow/")
USAGE = "usage: st2 kit init [--] [<project-dir>]"


def settings_snippet() -> str:
    """The hook registrations. No knob-file variable: every reader finds the installed knob file
    at its default location (:func:`st2.kit.knobs.knob_file_path`) from inside the project."""
    hooks = {
        "hooks": {
            "SubagentStop": [{"hooks": [{"type": "command", "command": "st2 hook subagent-stop-liveness"}]}],
            "PreToolUse": [{"matcher": "Agent", "hooks": [
                {"type": "command", "command": "st2 hook budget-guard"},
                {"type": "command", "command": "st2 hook dispatch-guard"},
            ]}],
        },
    }
    return json.dumps(hooks, indent=2) + "\n"


PRE_COMMIT = """#!/bin/sh
# st2 delegation kit: check-gate-tamper at every commit. Install as .git/hooks/pre-commit (or
# append the exec line to an existing hook). Exit 1 refuses the commit with its findings.
exec st2 check gate-tamper
"""


def _toplevel(directory: str) -> str:
    import subprocess

    result = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else os.path.abspath(directory)


def plan(top: Path, environ) -> tuple[dict[str, bytes], dict[str, list[str]]]:
    """(files to hold exactly these bytes, lines to merge into a file), top-level-relative."""
    gates = gate_registry.gates_dir(environ)
    files = {
        ".claude/delegation/agent-execution.md": (TEMPLATES / "agent-execution.md").read_bytes(),
        ".claude/delegation/dispatch-checklists.md": (TEMPLATES / "dispatch-checklists.md").read_bytes(),
        f"{gates}/{DEFAULT_KNOB_FILE_NAME}": (TEMPLATES / "delegation-config.knobs").read_bytes(),
        ".claude/delegation/settings-snippet.json": settings_snippet().encode(),
        ".claude/delegation/pre-commit": PRE_COMMIT.encode(),
    }
    for gate in GATES:
        files[f"{gates}/{gate}.gate"] = (DECLARATIONS / f"{gate}.gate").read_bytes()
    merges = {
        f"{gates}/gates.list": [f"{gate} tier: precommit" for gate in GATES],
        ".gitignore": [f"{gates}/{IGNORED[0]}", *IGNORED[1:]],
    }
    return files, merges


def _read(path: Path) -> bytes | None:
    """A target's bytes, None when absent; raise OSError when what is there cannot be read as a
    regular file (:class:`st2.fs.read.NotRegular` for a FIFO, a symlink, a device: opened without
    blocking, never followed)."""
    from st2.fs.read import RENDER_LIMIT, read_optional

    return read_optional(path, RENDER_LIMIT, follow_symlinks=False)


def _publish(path: Path, data: bytes, mode: int = 0o644) -> None:
    from st2.fs.atomic import publish

    path.parent.mkdir(parents=True, exist_ok=True)
    publish(path, data, path.parent, mode=mode)


def init(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        _, _, operands = argv_grammar.parse_kit(argv)
        if len(operands) > 1:
            raise argv_grammar.ShapeRefusal(f"unexpected argument: {operands[1]}")
    except argv_grammar.ShapeRefusal as refusal:
        err.write(f"kit-init: {refusal}\n{USAGE}\n")
        return 2
    directory = operands[0] if operands else (cwd or os.getcwd())
    if not os.path.isdir(directory):
        err.write(f"kit-init: {directory}: no such directory\n")
        return 2
    top = Path(_toplevel(directory))
    files, merges = plan(top, environ)
    current: dict[str, bytes | None] = {}
    refused = []
    for name in [*sorted(files), *merges]:
        try:
            current[name] = _read(top / name)
        except OSError as error:
            refused.append(f"kit-init: {top / name}: {error.strerror or error}; move it aside\n")
    conflicts = [name for name, data in sorted(files.items()) if name in current and current[name] not in (None, data)]
    if conflicts or refused:
        for line in refused:
            err.write(line)
        for name in conflicts:
            err.write(f"kit-init: {top / name}: exists and differs from the kit's copy; move it aside or merge it by hand\n")
        err.write(f"kit-init: nothing written ({len(conflicts) + len(refused)} conflict(s))\n")
        return 2
    try:
        _install(top, files, merges, current, out)
    except OSError as error:
        err.write(f"kit-init: {error.filename or top}: {error.strerror or error}\n")
        return 2
    gates = gate_registry.gates_dir(environ)
    out.write(
        "kit-init: next: merge .claude/delegation/settings-snippet.json into .claude/settings.json (your own act: "
        "hooks are a permission surface), install .claude/delegation/pre-commit as .git/hooks/pre-commit, and fill the "
        f"two slots in .claude/delegation/agent-execution.md; knobs go in {gates}/{DEFAULT_KNOB_FILE_NAME}\n")
    return 0


def _install(top: Path, files: dict[str, bytes], merges: dict[str, list[str]], current: dict[str, bytes | None],
             out) -> None:
    manifest: dict[str, bytes] = {}
    for name, data in sorted(files.items()):
        path = top / name
        if current[name] == data:
            out.write(f"kit-init: current {name}\n")
        else:
            _publish(path, data, 0o755 if name.endswith((".gate", "pre-commit")) else 0o644)
            out.write(f"kit-init: installed {name}\n")
        manifest[name] = data
    for name, lines in merges.items():
        path = top / name
        text = (current[name] or b"").decode("utf-8", errors="replace")
        present = {line.strip() for line in text.splitlines()}
        missing = [line for line in lines if line not in present and line.split(" ")[0] not in {p.split(" ")[0] for p in present}]
        if missing:
            prefix = "" if not text or text.endswith("\n") else "\n"
            _publish(path, (text + prefix + "".join(line + "\n" for line in missing)).encode())
            out.write(f"kit-init: merged {len(missing)} line(s) into {name}\n")
        else:
            out.write(f"kit-init: current {name}\n")
    lock = "".join(f"{sha256(data).hexdigest()}  {name}\n" for name, data in sorted(manifest.items()))
    _publish(top / "st2-kit.lock", lock.encode())
