"""The per-binding resource state record (docs/resources.md §State record).

One JSON object, newline-terminated, at ``<seat>/resource-state/<binding>.json`` (a replicated
tree, :data:`st2.catalog.layout.RESOURCE_STATE`), fields in this order::

    schema, agent, binding, uri, generation, revision, hostDigest, hostObservedAtMs,
    facts, lastFailure, writtenAtMs

``generation`` is the provider runtime generation whose result was last accepted (a replaced or
restarted runtime gets a higher one; output of a lower one is fenced). ``revision`` counts
accepted changes of ``hostDigest``, the SHA-256 the *host* computed over the canonical facts.
``hostObservedAtMs`` is the host's clock when it accepted the last result (never a runtime's
stamp). ``facts`` is a flat object of typed scalars (string, integer, boolean, null).
``lastFailure`` is null or ``{kind, message, atMs}``; a failure keeps the last good facts.

Reading (:func:`read`, pure): no record, bytes that are not exactly this shape (any schema but
v1, a record naming another seat or binding, a facts value of another type) all read as absent
(None) — never as a definite value. Writing (:func:`update`): the one writer, a read-modify-write
under a cross-process lock kept in the catalog control plane (so no lock file replicates), through
:func:`st2.records.placement.publish_record` (staged outside the seat, renamed in, fsynced).
Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from collections import namedtuple

from st2.base.digest import sha256
from st2.catalog import layout
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from pathlib import Path
    from typing import Any, Callable

SCHEMA = "st2.resource-state.v1"
TREE_NAME = layout.RESOURCE_STATE
STAGING_NAME = layout.RESOURCE_STATE_STAGING
SUFFIX = ".json"

FACTS_MAX = 64
"""At most this many facts per binding."""
FACT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
PAYLOAD_LIMIT = 64 * 1024
"""The canonical facts of one result may not exceed this many bytes (the host's payload bound)."""
MESSAGE_LIMIT = 512
"""A failure message is cut to this many characters."""
STALE_MS = 60 * 60 * 1000
"""A binding whose host-observed time is at least this old is stale (Doctor advises)."""
BINDING_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
I64 = 2**63

FAILURE_KINDS: tuple[str, ...] = (
    "provider-failed",      # the runtime answered Failed
    "provider-exited",      # the runtime died (or was killed) with the observation open
    "timeout",              # no result closed the observation in time
    "refused-output",       # the runtime's output broke the protocol or a bound
    "unavailable",          # no runtime serves the binding's scheme on this host
)

Failure = namedtuple("Failure", ("kind", "message", "at_ms"))
State = namedtuple("State", ("agent", "binding", "uri", "generation", "revision", "host_digest",
                             "host_observed_at_ms", "facts", "last_failure", "written_at_ms"))
"""One binding's accepted state. ``facts`` is a dict of scalars; ``last_failure`` a
:class:`Failure` or None."""


class FactsRefused(ValueError):
    """A facts payload that is not a bounded flat object of typed scalars."""


def check_facts(facts: Any) -> dict[str, Any]:
    """Return ``facts`` when it is a flat object of at most :data:`FACTS_MAX` named scalars whose
    canonical form fits :data:`PAYLOAD_LIMIT`; raise :class:`FactsRefused` naming the fault."""
    if not isinstance(facts, dict):
        raise FactsRefused("facts is not an object")
    if len(facts) > FACTS_MAX:
        raise FactsRefused(f"{len(facts)} facts exceed the bound of {FACTS_MAX}")
    for name, value in facts.items():
        if not isinstance(name, str) or not FACT_NAME.fullmatch(name):
            raise FactsRefused(f"fact name {name!r} is not a letter followed by letters, digits, '_', '.', '-'")
        if value is None or isinstance(value, (str, bool)):
            continue
        if isinstance(value, int) and -I64 <= value < I64:
            continue
        raise FactsRefused(f"fact {name!r} is not a string, a 64-bit integer, a boolean or null")
    if len(canonical_facts(facts)) > PAYLOAD_LIMIT:
        raise FactsRefused(f"facts exceed the payload bound of {PAYLOAD_LIMIT} bytes")
    return facts


def canonical_facts(facts: dict[str, Any]) -> bytes:
    """The bytes the host digests: keys sorted, no whitespace, UTF-8."""
    return json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def digest_facts(facts: dict[str, Any]) -> str:
    """``sha256:<hex>`` of :func:`canonical_facts`: the only digest a state record carries."""
    return "sha256:" + sha256(canonical_facts(facts)).hexdigest()


def path(seat_dir: Path | str, binding: str) -> str:
    """``<seat>/resource-state/<binding>.json`` (as text). Raise ValueError for a name that is
    not a binding name (it could leave the tree)."""
    if not BINDING_NAME.fullmatch(binding):
        raise ValueError(f"resource name {binding!r} is not a binding name")
    return os.path.join(os.fspath(seat_dir), TREE_NAME, binding + SUFFIX)


def _failure(value: Any) -> Failure | None:
    if value is None:
        return None
    if not isinstance(value, dict) or list(value) != ["kind", "message", "atMs"]:
        raise decoding.Malformed("lastFailure is not {kind, message, atMs}")
    kind = decoding.string(value, "kind")
    if kind not in FAILURE_KINDS:
        raise decoding.Malformed(f"unknown failure kind {kind!r}")
    return Failure(kind, decoding.string(value, "message"), decoding.stamp(value, "atMs"))


def decode(data: bytes) -> State:
    """Decode the bytes of a record, or raise :class:`st2.records.decoding.Malformed`."""
    record = decoding.load_object(data)
    if record.get("schema") != SCHEMA:
        raise decoding.Malformed(f"schema is not {SCHEMA}")
    host_digest = decoding.optional_string(record, "hostDigest")
    if host_digest is not None and not re.fullmatch(r"sha256:[0-9a-f]{64}", host_digest):
        raise decoding.Malformed("hostDigest is not sha256:<64 hex>")
    try:
        facts = check_facts(record.get("facts"))
    except FactsRefused as error:
        raise decoding.Malformed(str(error)) from None
    revision = decoding.unsigned(record, "revision")
    if (host_digest is None) != (revision == 0) or (revision == 0 and facts):
        raise decoding.Malformed("hostDigest and facts are empty exactly when nothing was ever published")
    if host_digest is not None and host_digest != digest_facts(facts):
        raise decoding.Malformed("hostDigest is not the digest of facts")
    return State(decoding.string(record, "agent"), decoding.string(record, "binding"),
                 decoding.string(record, "uri"), decoding.unsigned(record, "generation"),
                 revision, host_digest,
                 decoding.optional_stamp(record, "hostObservedAtMs"), facts, _failure(record.get("lastFailure")),
                 decoding.stamp(record, "writtenAtMs"))


def read(data: bytes | None, agent: str, binding: str) -> State | None:
    """The record in ``data`` for exactly seat ``agent`` and ``binding``, or None: missing,
    malformed, or naming another seat or binding all read as absent. Never raises."""
    if data is None:
        return None
    try:
        state = decode(data)
    except decoding.Malformed:
        return None
    if state.agent != agent or state.binding != binding:
        return None
    return state


def read_file(seat_dir: Path | str, agent: str, binding: str) -> State | None:
    """:func:`read` of the record on disk; an unreadable file (a FIFO, too large) reads absent."""
    try:
        data = read_bounded(path(seat_dir, binding), RECORD_LIMIT, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return read(data, agent, binding)


def read_all(seat_dir: Path | str, agent: str) -> dict[str, State]:
    """Every well-formed record in the seat's tree, by binding name (sorted)."""
    try:
        names = sorted(os.listdir(os.path.join(os.fspath(seat_dir), TREE_NAME)))
    except OSError:
        return {}
    states = {}
    for name in names:
        binding = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else ""
        if BINDING_NAME.fullmatch(binding):
            state = read_file(seat_dir, agent, binding)
            if state is not None:
                states[binding] = state
    return states


def stale(state: State, now_ms: int) -> bool:
    """Whether the binding went unobserved for :data:`STALE_MS` (never observed counts as stale
    from the record's writing)."""
    observed = state.host_observed_at_ms if state.host_observed_at_ms is not None else state.written_at_ms
    return now_ms - observed >= STALE_MS


def to_wire(state: State) -> dict[str, Any]:
    """The record's JSON object, fields in the pinned order."""
    failure = state.last_failure
    return {
        "schema": SCHEMA,
        "agent": state.agent,
        "binding": state.binding,
        "uri": state.uri,
        "generation": state.generation,
        "revision": state.revision,
        "hostDigest": state.host_digest,
        "hostObservedAtMs": state.host_observed_at_ms,
        "facts": state.facts,
        "lastFailure": None if failure is None else {"kind": failure.kind, "message": failure.message,
                                                     "atMs": failure.at_ms},
        "writtenAtMs": state.written_at_ms,
    }


def encode(state: State) -> bytes:
    return (json.dumps(to_wire(state), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _lock_path(seat_dir: str, binding: str) -> str:
    from st2.records.placement import staging_dir

    host_dir, identity = os.path.split(seat_dir)
    host = os.path.basename(host_dir)
    return os.path.join(os.fspath(staging_dir(seat_dir, STAGING_NAME)), f"{host}.{identity}.{binding}")  # record_lock adds the dot and .lock


def update(seat_dir: Path | str, agent: str, binding: str,
           change: Callable[[State | None], State | None], now_ms: int) -> State | None:
    """The one writer. Under the binding's lock, read the current record, call ``change`` with it
    and publish what it returns (``writtenAtMs`` forced strictly above the current one); None
    from ``change`` leaves the record untouched. Return the record now on disk (or None)."""
    from st2.fs.atomic import ensure_real_directory
    from st2.fs.lock import record_lock
    from st2.records.placement import publish_record

    seat_dir = os.path.abspath(os.fspath(seat_dir))
    target = path(seat_dir, binding)
    with record_lock(_lock_path(seat_dir, binding)):
        current = read_file(seat_dir, agent, binding)
        proposed = change(current)
        if proposed is None:
            return current
        if proposed.agent != agent or proposed.binding != binding:
            raise ValueError("a state record must name the seat and binding it is written for")
        check_facts(proposed.facts)
        floor = current.written_at_ms + 1 if current is not None else 0
        proposed = proposed._replace(written_at_ms=max(now_ms, floor))
        ensure_real_directory(os.path.dirname(target))
        publish_record(seat_dir, os.path.join(TREE_NAME, binding + SUFFIX), encode(proposed), STAGING_NAME)
        return proposed


def remove(seat_dir: Path | str, binding: str) -> bool:
    """Delete a binding's record (its binding was removed). Return whether one existed."""
    try:
        os.unlink(path(seat_dir, binding))
    except FileNotFoundError:
        return False
    return True
