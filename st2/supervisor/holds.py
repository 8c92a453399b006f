"""Holds written by ``st2 down <identity>``: a running supervisor does not relaunch a held task.
A freshly started ``st2 up`` clears every hold of its scope (starting the supervisor is the
operator asking for the declared tasks again)."""

from __future__ import annotations

from st2.runtime import layout
from st2.runtime.scope import RuntimeScope


def directory(scope: RuntimeScope):
    return layout.holds(scope.directory)


def hold(scope: RuntimeScope, runtime_id: str) -> None:
    scope.ensure()
    directory(scope).mkdir(exist_ok=True, mode=0o700)
    scope.publish(directory(scope) / runtime_id, b"held by st2 down\n")


def held(scope: RuntimeScope) -> set[str]:
    try:
        return {entry.name for entry in directory(scope).iterdir() if not entry.name.startswith(".")}
    except FileNotFoundError:
        return set()


def clear_all(scope: RuntimeScope) -> None:
    for runtime_id in held(scope):
        (directory(scope) / runtime_id).unlink(missing_ok=True)
