"""The generation the host gives each provider runtime registration (docs/resources.md
§Generations).

Host-local, one small record per provider runtime task
(:func:`st2.runtime.layout.resource_runtime`): ``{schema, registration, generation}``. The same
registration (a runtime adopted again by a restarted supervisor) keeps its generation; a new one
(a restarted or replaced runtime) gets the next. State records carry the generation, and a
result from a lower one is fenced (:mod:`st2.resources.acceptance`).
"""

from __future__ import annotations

import json

from st2.fs.atomic import ensure_directory, publish
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.records import decoding
from st2.runtime import layout

SCHEMA = "st2.resource-runtime.v1"


def read(scope_directory, runtime_id: str) -> tuple[str | None, int]:
    """``(registration, generation)`` on record, ``(None, 0)`` when there is none or it is malformed."""
    try:
        record = decoding.load_object(read_bounded(layout.resource_runtime(scope_directory, runtime_id),
                                                   RUNTIME_LIMIT, follow_symlinks=False))
        if record.get("schema") != SCHEMA:
            raise decoding.Malformed("schema")
        return decoding.string(record, "registration"), decoding.unsigned(record, "generation")
    except (OSError, decoding.Malformed):
        return None, 0


def adopt(scope_directory, runtime_id: str, registration: str) -> int:
    """The generation of ``registration``: the recorded one when it is the same registration,
    else one more than the recorded generation (published before it is returned)."""
    recorded, generation = read(scope_directory, runtime_id)
    if recorded == registration and generation > 0:
        return generation
    return _write(scope_directory, runtime_id, registration, generation + 1)


def advance(scope_directory, runtime_id: str, at_least: int = 0) -> int:
    """Give the recorded registration the next generation, at least ``at_least`` (an explicit
    re-adoption: every result of the generations before is fenced from now on); return it."""
    recorded, generation = read(scope_directory, runtime_id)
    return _write(scope_directory, runtime_id, recorded or "", max(generation + 1, at_least))


def _write(scope_directory, runtime_id: str, registration: str, generation: int) -> int:
    path = layout.resource_runtime(scope_directory, runtime_id)
    ensure_directory(path.parent, mode=0o700)
    staging = ensure_directory(layout.staging(scope_directory), mode=0o700)
    body = {"schema": SCHEMA, "registration": registration, "generation": generation}
    publish(path, json.dumps(body).encode() + b"\n", staging, mode=0o600)
    return generation
