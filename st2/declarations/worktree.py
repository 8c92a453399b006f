"""``worktree { repo "<path>"; branch "<name>"; base "<ref>"; path "<dir>" }``: the shape of a
seat's own git worktree, judged without touching the disk.

``repo`` and ``branch`` are required; ``base`` (the ref a new branch starts from) and ``path``
(where the worktree lives) are optional. ``repo`` and ``path`` are absolute or ``~``-relative
(a relative path would mean something else on every host and from every working directory).
``branch`` is a branch name git would accept as ``refs/heads/<branch>``
(:func:`branch_refusal`, git's ``check-ref-format`` rules, checked here so ``st2 validate``
never starts a process). What only the seat's host can tell — the repository exists, two seats
claim one branch — is :mod:`st2.authoring.validation`'s. Standard library only.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from st2.declarations import fields
from st2.declarations.context import NAME, WHOLE, Context, argument
from st2.declarations.model import Worktree

WORKTREE_FIELDS = ("repo", "branch", "base", "path")
REQUIRED = ("repo", "branch")
# git check-ref-format: no control character, space, ~ ^ : ? * [ or backslash anywhere.
_FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | frozenset(chr(code) for code in range(32))


def read_worktree(context: Context, node: Any, path: tuple[int, ...], field_path: tuple[str, ...]) -> Worktree | None:
    """The block's :class:`~st2.declarations.model.Worktree`, or None (each problem reported at
    its token) when any field is missing or malformed."""
    fields.no_arguments(context, node, path, field_path)
    fields.no_properties(context, node, path, field_path)
    values: dict[str, str | None] = {}
    for index, child in enumerate(node.children):
        child_path = path + (index,)
        child_field = field_path + (child.name,)
        if child.name not in WORKTREE_FIELDS:
            context.report_shape("unknown-node", child_path, NAME, child_field,
                                 f"unknown node `{child.name}` in `worktree`",
                                 help=partial(fields.suggestion, child.name, WORKTREE_FIELDS))
            continue
        if child.name in values:
            context.report_shape("duplicate-field", child_path, NAME, child_field,
                                 f"`{child.name}` is declared more than once in `worktree`")
            continue
        value = fields.one_value(context, child, child_path, child_field, "string")
        values[child.name] = _checked(context, child.name, value, child_path, child_field)
    missing = [name for name in REQUIRED if name not in values]
    for name in missing:
        context.report("worktree-incomplete", path, WHOLE, field_path + (name,),
                       f"`worktree` needs `{name}`",
                       help='write: worktree { repo "/path/to/repository"; branch "seat-branch" }')
    if missing or any(values.get(name) is None for name in values):
        return None
    return Worktree(repo=values["repo"], branch=values["branch"], base=values.get("base"), path=values.get("path"))


def _checked(context: Context, name: str, value: str | None, path: tuple[int, ...],
             field_path: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    if value == "" or not fields.printable_line(value):
        context.report("worktree-invalid", path, argument(0), field_path,
                       f"worktree `{name}` must be one non-empty printable line")
        return None
    if name in ("repo", "path") and not value.startswith(("/", "~")):
        context.report("worktree-invalid", path, argument(0), field_path,
                       f"worktree `{name}` \"{value}\" must be an absolute path (or start with ~)",
                       help="a relative path would name a different directory from every working directory")
        return None
    if name == "base" and value.startswith("-"):
        context.report("worktree-invalid", path, argument(0), field_path,
                       f"worktree `base` \"{value}\" must name a ref or commit, not start with -")
        return None
    if name == "branch":
        refusal = branch_refusal(value)
        if refusal is not None:
            context.report("worktree-branch-invalid", path, argument(0), field_path,
                           f"worktree branch \"{value}\" is not a valid branch name: {refusal}")
            return None
    return value


def branch_refusal(branch: str) -> str | None:
    """Why git would refuse ``refs/heads/<branch>`` (``git check-ref-format --branch``), or None."""
    if branch in ("@", "HEAD") or branch.startswith("-"):
        return "it is a reserved name or starts with -"
    if any(character in _FORBIDDEN for character in branch):
        return "it holds a space, a control character or one of ~ ^ : ? * [ \\"
    if ".." in branch or "@{" in branch:
        return "it holds .. or @{"
    if branch.startswith("/") or branch.endswith(("/", ".")) or "//" in branch:
        return "it starts or ends with / (or ends with .), or holds //"
    if any(part.startswith(".") or part.endswith(".lock") for part in branch.split("/")):
        return "a component starts with . or ends with .lock"
    return None
