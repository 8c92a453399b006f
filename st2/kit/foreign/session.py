"""session.txt, the open session's record beside its clone:

    adapter=<adapter> mode=<mode> class=<class|-> model=<model|-> effort=<effort|-> base=<commit> turn=<n> id=<id|->

One line, space-separated ``key=value``, parsed by key; a field an earlier build did not write
(the three class fields) reads as ``-``. Standard library only."""

from __future__ import annotations

import os

FIELDS = ("adapter", "mode", "class", "model", "effort", "base", "turn", "id")
NAME = "session.txt"


def render(values: dict[str, str]) -> str:
    return " ".join(f"{field}={values.get(field) or '-'}" for field in FIELDS) + "\n"


def parse(text: str) -> dict[str, str] | None:
    """The record's fields (absent ones ``-``), or None when the line holds no adapter/base/turn."""
    values = dict.fromkeys(FIELDS, "-")
    for word in text.split():
        key, separator, value = word.partition("=")
        if separator:
            values[key] = value
    if values["adapter"] == "-" or values["base"] == "-" or not values["turn"].isdigit():
        return None
    return values


def read(run_dir: str) -> dict[str, str] | None:
    """The open session's fields, or None when there is no record (or it is not one). Raise
    OSError when one is there but cannot be read: :class:`st2.fs.read.NotRegular` for a FIFO, a
    symlink or anything else but a regular file (opened without blocking, never followed)."""
    from st2.fs.read import RUNTIME_LIMIT, read_optional

    data = read_optional(os.path.join(run_dir, NAME), RUNTIME_LIMIT, follow_symlinks=False)
    if data is None:
        return None
    try:
        return parse(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def write(run_dir: str, values: dict[str, str]) -> None:
    from pathlib import Path

    from st2.fs.atomic import publish

    publish(Path(run_dir) / NAME, render(values).encode(), Path(run_dir))
