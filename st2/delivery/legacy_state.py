"""The pre-ledger ``delivery-state.json``, read once and carried into the delivery ledger
(docs/delivery.md §Carrying a pre-ledger delivery forward).

Releases before ``st2.delivery-ledger.v1`` kept one record per native seat at
``<state>/<harness>/<seat-key>/delivery-state.json`` (:func:`st2.runtime.layout.legacy_delivery_state`;
the seat key is :func:`seat_key`). It named at most one message: written ``attempted`` before the
transport call, rewritten ``accepted`` on that harness's receipt, and removed once the message
left the inbox — so a record still on disk is an attempt the old release never settled. One
schema per harness, every field required and no other allowed::

    {"schema":"st2.codex-delivery-state.v1","agent":"<host>.<identity>","runtimeId":"…",
     "runtimeIncarnation":"…","threadId":"<thread>","filename":"<unix-ms>-<rand6>.md",
     "clientId":"st2:<64 hex>","phase":"attempted"|"accepted"}
    {"schema":"st2.opencode-delivery-state.v1","agent":"<host>.<identity>","runtimeId":"…",
     "sessionId":"<session>","filename":"<unix-ms>-<rand6>.md","messageId":"msg<26 hex>",
     "phase":"attempted"|"accepted"}

``clientId`` / ``messageId`` is a SHA-256 over a version label and the length-prefixed
(u64 big-endian) agent, binding and filename; a record whose id does not re-derive from its own
fields contradicts itself.

:func:`carry_legacy_record` runs once per native session start, after
:func:`st2.delivery.ledger.carry_from_scope` and before the pump loads its ledger, and acts only
when no ledger file exists at the ledger's location — the ledger it writes is what stops a second
start translating again. The record's one entry becomes a ledger entry for that inbox filename
whose attestation is ``asserted``: its phase is what the old record claimed (Codex ``accepted`` was
the typed completed user message → consumed; opencode ``accepted`` was a read-back → persisted),
and under :func:`st2.delivery.ledger.verdict` an asserted entry holds and authorizes no transport
until this build observes evidence of its own or the message leaves the unread set. Its
correlation is derived from the old id (``st2:<stem>:<first 12 hex of SHA-256(old id)>``), so
the same record always yields the same bytes; no input this build sent carries it.

The old file is read, never written, moved or removed. Outcomes (:class:`Outcome`):

- absent (or a ledger already exists): nothing happens and nothing is created;
- not this seat's (not JSON, another schema — including the other harness's — or another
  agent): ignored, one log line, no ledger — it is not this seat's authority;
- this seat's but self-contradicting (a missing or extra field, an unknown phase, an invalid
  filename or empty binding, an id that does not re-derive): quarantined — no ledger is written,
  one log line, and the session holds delivery (:meth:`st2.delivery.pump.LedgerPump.quarantine_with`);
  the next start finds no ledger and reaches the same verdict;
- this seat's and consistent: translated — one asserted entry, published through
  :meth:`st2.delivery.ledger.Ledger.seed`.

Standard library only.
"""

from __future__ import annotations

import enum
import json
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from st2.base.digest import sha256
from st2.bus.filename import is_message_filename
from st2.delivery.ledger import Attestation, Entry, Ledger, Phase, Profile, Quarantined, ledger_location
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.runtime import layout


@dataclass(frozen=True)
class Shape:
    """One harness's pre-ledger record: its schema, field names, the label its id was hashed
    under, and the ledger phase each of its two phase words means."""

    schema: str
    binding: str
    correlation: str
    fields: frozenset[str]
    label: bytes
    prefix: str
    hex_digits: int
    accepted: Phase

    def derive(self, agent: str, binding: str, filename: str) -> str:
        """The id the old release sent for ``filename`` to ``binding``."""
        digest = sha256(self.label)
        for value in (agent, binding, filename):
            raw = value.encode()
            digest.update(struct.pack(">Q", len(raw)) + raw)
        return self.prefix + digest.hexdigest()[:self.hex_digits]


SHAPES = {
    "codex": Shape("st2.codex-delivery-state.v1", "threadId", "clientId",
                   frozenset({"schema", "agent", "runtimeId", "runtimeIncarnation", "threadId", "filename",
                              "clientId", "phase"}),
                   b"st2.codex-client-user-message.v1", "st2:", 64, Phase.CONSUMED),
    "opencode": Shape("st2.opencode-delivery-state.v1", "sessionId", "messageId",
                      frozenset({"schema", "agent", "runtimeId", "sessionId", "filename", "messageId", "phase"}),
                      b"st2.opencode-client-message.v1", "msg", 26, Phase.PERSISTED),
}


class Outcome(enum.Enum):
    ABSENT = "absent"              # no old record, or a ledger already exists
    IGNORED = "ignored"            # not this seat's record
    QUARANTINED = "quarantined"    # this seat's, self-contradicting: delivery holds
    TRANSLATED = "translated"      # one asserted entry written


def seat_key(catalog: str, agent: str) -> str:
    """The 24-hex key the old releases filed a seat under: SHA-256 of the length-prefixed catalog
    path and agent."""
    digest = sha256()
    for value in (catalog.encode(), agent.encode()):
        digest.update(struct.pack(">Q", len(value)) + value)
    return digest.hexdigest()[:24]


def legacy_location(scope_directory: Path, catalog: Path, profile: Profile, agent: str) -> Path:
    """Where the old record of this seat is: under the catalog's resolved path's key, else (an
    old release given the catalog by another path) its absolute path's."""
    candidates = dict.fromkeys((os.path.realpath(catalog), os.path.abspath(catalog)))
    paths = [layout.legacy_delivery_state(Path(scope_directory), profile.harness, seat_key(text, agent))
             for text in candidates]
    return next((path for path in paths if os.path.lexists(path)), paths[0])


def translate(data: bytes, profile: Profile, agent: str) -> tuple[Outcome, Entry | str]:
    """The old record's bytes → ``(TRANSLATED, entry)``, or ``(IGNORED | QUARANTINED, why)``."""
    shape = SHAPES[profile.harness]
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Outcome.IGNORED, "it is not JSON"
    if not isinstance(body, dict) or body.get("schema") != shape.schema:
        return Outcome.IGNORED, f"its schema is not {shape.schema}"
    if body.get("agent") != agent:
        return Outcome.IGNORED, f"it belongs to agent {body.get('agent')!r}"
    if set(body) != shape.fields:
        return Outcome.QUARANTINED, "its fields are not the " + shape.schema + " fields"
    filename, binding, old_id = body["filename"], body[shape.binding], body[shape.correlation]
    if not (isinstance(filename, str) and is_message_filename(filename)):
        return Outcome.QUARANTINED, f"filename {filename!r} is not a message filename"
    if not (isinstance(binding, str) and binding and binding.isprintable()):
        return Outcome.QUARANTINED, f"{shape.binding} must be a non-empty printable string"
    if old_id != shape.derive(agent, binding, filename):
        return Outcome.QUARANTINED, f"{shape.correlation} does not re-derive from its own agent, binding and filename"
    phase = {"attempted": Phase.ATTEMPTED, "accepted": shape.accepted}.get(body["phase"]) \
        if isinstance(body["phase"], str) else None
    if phase is None:
        return Outcome.QUARANTINED, f"unknown phase {body['phase']!r}"
    correlation = f"st2:{filename[:-3]}:{sha256(old_id.encode()).hexdigest()[:12]}"
    return Outcome.TRANSLATED, Entry(filename, binding, correlation, phase, Attestation.ASSERTED)


def carry_legacy_record(scope_directory: Path, catalog: Path, profile: Profile, agent: str, runtime_id: str,
                        log=lambda message: None) -> tuple[Outcome, str | None]:
    """The one-time translation (module docstring). Returns the outcome and, for
    :attr:`Outcome.QUARANTINED`, the reason delivery must hold. Never raises."""
    path, staging = ledger_location(Path(scope_directory), runtime_id)
    if os.path.lexists(path):
        return Outcome.ABSENT, None
    old = legacy_location(scope_directory, catalog, profile, agent)
    try:
        if not stat.S_ISREG(os.lstat(old).st_mode):
            log(f"pre-ledger delivery record {old} is not a regular file; ignored and left as is")
            return Outcome.IGNORED, None
        data = read_bounded(old, RUNTIME_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return Outcome.ABSENT, None
    except OSError as error:
        log(f"pre-ledger delivery record {old} is unreadable ({error}); ignored and left as is")
        return Outcome.IGNORED, None
    outcome, result = translate(data, profile, agent)
    if outcome is Outcome.IGNORED:
        log(f"pre-ledger delivery record {old} is not this seat's ({result}); ignored and left as is")
        return outcome, None
    if outcome is Outcome.QUARANTINED:
        reason = f"pre-ledger delivery record {old} contradicts itself ({result})"
        log(f"{reason}; no ledger is written from it, delivery holds and the file is left as is")
        return outcome, reason
    try:
        Ledger(path, staging, profile, agent, runtime_id).seed([result])
    except (Quarantined, OSError) as error:
        reason = f"pre-ledger delivery record {old} could not be carried forward ({error})"
        log(f"{reason}; delivery holds and the file is left as is")
        return Outcome.QUARANTINED, reason
    log(f"carried the pre-ledger delivery of {result.filename} forward as {result.phase.wire} (asserted): "
        "it holds until this build sees evidence of its own or the message is archived")
    return outcome, None
