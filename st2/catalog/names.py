"""The name grammar of hosts, identities and principals: the directory names under
``agents/<host>/<identity>`` and ``principals/<host>/<name>``.

A name is 1 to 128 characters: ASCII letters, digits, ``-`` and ``_``, and (not for hosts) ``.``
inside the name, starting with a letter, digit or ``_``. Everything else is refused by discovery
with its reason, so no command ever lists, launches or prints it: control characters and
newlines (they reach a terminal raw and split every output line), whitespace, non-ASCII
(look-alikes of another seat), a leading ``-`` (read as an option) or ``.`` (hidden, ``.st2``,
``..``), a ``.`` in a host (runtime ids are ``<host>.<identity>[.<task>]``, split at the
first dot), and a replication engine's own name (a ``*.sync-conflict-*`` copy: the sync rules
exclude it, so such a seat is never replicated and mail to it from another host is lost).
Authoring asks the same question before it writes anything (:func:`refusal`), so it never makes
a directory discovery refuses. Standard library only.
"""

from __future__ import annotations

from st2.catalog.engine_files import is_engine_file
from st2.base.terminal_text import escaped

MAX_NAME = 128
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


shown = escaped
"""``name`` safe to print (:func:`st2.base.terminal_text.escaped`)."""


def name_problem(name: str, kind: str) -> str | None:
    """Why ``name`` is not a usable ``kind`` (host, identity, principal) name, or None."""
    if name == "":
        return f"an empty {kind} name"
    if any(not c.isprintable() for c in name):  # C0/C1 controls, DEL, bidi overrides, separators
        return f"the {kind} name holds a control character (a newline or escape reaches the terminal raw)"
    if any(c.isspace() for c in name):
        return f"the {kind} name holds whitespace"
    if not name.isascii():
        return f"the {kind} name holds non-ASCII characters (letters, digits, '-', '_' and '.' only)"
    if len(name) > MAX_NAME:
        return f"the {kind} name is longer than {MAX_NAME} characters"
    if name[0] in "-.":
        return f"the {kind} name starts with {name[0]!r}"
    allowed = _WORD if kind == "host" else _WORD | {"."}
    bad = sorted({c for c in name if c not in allowed})
    if bad:
        dot = "" if kind == "host" else ", '.'"
        reason = " (runtime ids are <host>.<identity>)" if kind == "host" and bad == ["."] else ""
        return f"the {kind} name holds {''.join(bad)!r}; letters, digits, '-', '_'{dot} only{reason}"
    if is_engine_file(name) or is_engine_file(name, directory=True):
        return (f"the {kind} name matches a replication engine's own file pattern (such as *.sync-conflict-*), "
                "which the sync rules never carry to another host")
    return None


def refusal(name: str, kind: str) -> str | None:
    """One line saying why ``name`` is not a usable ``kind`` name (the name escaped), or None:
    what an authoring verb prints before it writes anything."""
    problem = name_problem(name, kind)
    return None if problem is None else f"`{shown(name)}` is not a usable {kind} name: {problem}"


def seat_refusal(host: str, identity: str) -> str | None:
    """:func:`refusal` of the host, else of the identity, of a seat ``agents/<host>/<identity>``."""
    return refusal(host, "host") or refusal(identity, "identity")
