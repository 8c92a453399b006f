"""The `st2` console entry point.

Hot paths (the status-line tee, harness hooks, `usage verdict`) run hundreds of times an hour
per seat, so they are recognized from ``sys.argv`` and dispatched before anything imports
click or pydantic (the table, ``HOT_PATHS``, and :func:`dispatch` live in :mod:`st2.hot_paths`).
``st2 message send`` in its common well-formed shape runs without click too
(:mod:`st2.fast_verbs`, byte-identical output). Every other verb goes through the click CLI in
:mod:`st2.cli`.
"""

from __future__ import annotations

import sys

from st2.hot_paths import HOT_PATHS, dispatch

__all__ = ["HOT_PATHS", "main"]  # st2.entry.HOT_PATHS is the table DESIGN §11 names


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) >= 2 and (words[0], words[1]) in HOT_PATHS:
        return dispatch(words[0], words[1], words[2:])
    from st2 import fast_verbs

    status = fast_verbs.run(words)
    if status is not None:
        return status
    from st2.cli import run

    return run(words)


if __name__ == "__main__":
    raise SystemExit(main())
