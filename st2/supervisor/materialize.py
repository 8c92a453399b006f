"""Materialization: apply a seat's ``render`` block to its workspace.

Every operation is simulated first, in order, against an in-memory overlay of the workspace.
Only then are the changed targets checked: if any of them is tracked by Git, the whole pass is
refused and **nothing** is written (a byte-identical tracked target is not a change). Untracked
and non-Git targets are written atomically.

Operations: ``copy <source> <target>`` (source relative to the seat directory), ``file <target>
<content> executable=#true``, ``json-upsert <target> <json> arrays="union"|"replace"`` (deep
merge into an object), ``ensure-line <target> <line>``, ``git-exclude <pattern>`` (into the
repository's ``info/exclude``).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from st2.fs.atomic import publish
from st2.fs.read import RENDER_LIMIT, read_bounded, read_with_status


class MaterializationRefused(Exception):
    """A render pass would change a Git-tracked target; nothing was written."""


@dataclass
class Planned:
    path: Path
    data: bytes
    mode: int


def materialize(plan) -> list[Path]:
    """Apply ``plan``'s render block; return the paths written (empty when all were already in
    place). Raise :class:`MaterializationRefused` before any write when a tracked target would
    change, or when an operation is invalid."""
    declaration = plan.declaration
    workspace = Path(plan.workspace) if plan.workspace else Path(declaration.path).parent
    seat_directory = Path(declaration.path).parent
    overlay: dict[Path, Planned] = {}
    for operation in declaration.render:
        _simulate(operation, workspace, seat_directory, overlay, plan.agent)
    changed = [planned for planned in overlay.values() if _differs(planned)]
    tracked = [planned.path for planned in changed if _git_tracked(planned.path)]
    if tracked:
        names = ", ".join(str(path) for path in tracked)
        raise MaterializationRefused(
            f"{plan.agent}: render would change Git-tracked {names}; refusing the whole render pass "
            "before writing anything (commit the change yourself or untrack the file)"
        )
    for planned in changed:
        planned.path.parent.mkdir(parents=True, exist_ok=True)
        publish(planned.path, planned.data, planned.path.parent, mode=planned.mode)
        os.chmod(planned.path, planned.mode)
    return [planned.path for planned in changed]


def _target(workspace: Path, relative: str, agent: str) -> Path:
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise MaterializationRefused(f"{agent}: render target {relative!r} must stay inside the workspace")
    return workspace / candidate


def _current(path: Path, overlay: dict[Path, Planned]) -> tuple[bytes | None, int]:
    if path in overlay:
        return overlay[path].data, overlay[path].mode
    try:
        data, status = read_with_status(path, RENDER_LIMIT)
        return data, status.st_mode & 0o777
    except FileNotFoundError:
        return None, 0o644


def _simulate(operation, workspace: Path, seat_directory: Path, overlay: dict[Path, Planned], agent: str) -> None:
    kind = operation.operation
    if kind == "git-exclude":
        exclude = _git_exclude_file(workspace)
        if exclude is None:
            return
        data, mode = _current(exclude, overlay)
        overlay[exclude] = Planned(exclude, _ensure_line(data, operation.target), mode)
        return
    path = _target(workspace, operation.target, agent)
    data, mode = _current(path, overlay)
    if kind == "copy":
        source = Path(operation.source)
        source = source if source.is_absolute() else seat_directory / source
        try:
            overlay[path] = Planned(path, read_bounded(source, RENDER_LIMIT), mode)
        except OSError as error:
            raise MaterializationRefused(f"{agent}: render copy source {source}: {error}") from error
    elif kind == "file":
        executable = bool(getattr(operation, "executable", False))
        overlay[path] = Planned(path, (operation.content or "").encode(), 0o755 if executable else (mode if data is not None else 0o644))
    elif kind == "json-upsert":
        try:
            patch = json.loads(operation.content or "{}")
            existing = json.loads(data) if data else {}
        except ValueError as error:
            raise MaterializationRefused(f"{agent}: render json-upsert {path}: {error}") from error
        if not isinstance(patch, dict) or not isinstance(existing, dict):
            raise MaterializationRefused(f"{agent}: render json-upsert {path}: both sides must be JSON objects")
        merged = _merge(existing, patch, operation.arrays or "union")
        if merged == existing and data is not None:
            return
        overlay[path] = Planned(path, (json.dumps(merged, indent=2) + "\n").encode(), mode)
    elif kind == "ensure-line":
        overlay[path] = Planned(path, _ensure_line(data, operation.line or ""), mode)
    else:
        raise MaterializationRefused(f"{agent}: unknown render operation {kind!r}")


def _ensure_line(data: bytes | None, line: str) -> bytes:
    text = (data or b"").decode()
    if line in text.splitlines():
        return data or b""
    if text and not text.endswith("\n"):
        text += "\n"
    return (text + line + "\n").encode()


def _merge(existing, patch, arrays: str):
    if isinstance(existing, dict) and isinstance(patch, dict):
        merged = dict(existing)
        for key, value in patch.items():
            merged[key] = _merge(existing[key], value, arrays) if key in existing else value
        return merged
    if isinstance(existing, list) and isinstance(patch, list) and arrays == "union":
        return existing + [item for item in patch if item not in existing]
    return patch


def _differs(planned: Planned) -> bool:
    try:
        data, status = read_with_status(planned.path, RENDER_LIMIT)
        return data != planned.data or (status.st_mode & 0o777) != planned.mode
    except FileNotFoundError:
        return True


def _git(workspace: Path, *arguments: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(workspace), *arguments], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _git_tracked(path: Path) -> bool:
    directory = path.parent
    while not directory.exists():
        directory = directory.parent
    result = _git(directory, "ls-files", "--error-unmatch", "--", str(path))
    return result is not None and result.returncode == 0


def _git_exclude_file(workspace: Path) -> Path | None:
    result = _git(workspace, "rev-parse", "--git-path", "info/exclude")
    if result is None or result.returncode != 0:
        return None
    path = Path(result.stdout.strip())
    return path if path.is_absolute() else workspace / path
