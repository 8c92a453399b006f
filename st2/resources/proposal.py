"""Atomic proposals to a ``file:`` binding: ``st2 agent resource propose`` (docs/resources.md
§Proposals).

One compare-and-swap on the seat's host, fenced by the binding's generation, the state record's
revision and the prior carrier digest (the ``contentSha256`` the record holds), under the
binding's persistent cross-process lock, so one proposal from a prior wins. The steps, each
durable before the next (:data:`STEPS`; ``on_step`` is called after each, the crash tests' seam):

1. ``intent``: ``intent.json`` holds the proposal's envelope (:data:`ENVELOPE`: seat, binding,
   carrier URI, generation, expected revision, new content digest), the prior digest and the
   proposal id the envelope derives (:func:`proposal_id`);
2. ``carrier``: the file is replaced atomically with exactly the proposed bytes;
3. ``state``: the state record catches up to the carrier (one revision, the host's digest) — or,
   when the host's own observation got there first, already holds it;
4. ``receipt``: the receipt is published under the proposal id, then the intent removed.

Recovery runs first on every proposal: an intent whose carrier still holds the
prior digest is dropped (the crash came before the carrier: the old state stands); one whose
carrier holds the new digest is caught up and receipted; any other carrier is out-of-band
divergence after a committed intent, and every proposal fails closed until
:func:`recover` advances the binding's generation and re-adopts the file as it is. A retry of
a proposal whose receipt exists returns that receipt and changes nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from st2.base.digest import sha256
from st2.fs.atomic import ensure_directory, publish
from st2.fs.lock import record_lock
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.records import decoding
from st2.resources import registry
from st2.resources import state as records
from st2.resources.observers import CONTENT_LIMIT, ObservationFailed, observe_file
from st2.runtime import layout

INTENT_SCHEMA = "st2.resource-intent.v1"
RECEIPT_SCHEMA = "st2.resource-proposal-receipt.v1"
STEPS = ("intent", "carrier", "state", "receipt")
ENVELOPE = ("agent", "binding", "uri", "generation", "expectedRevision", "newDigest")
"""What a proposal means, and all its id binds. The prior digest is not in it: within one
generation a revision names exactly one prior content, and a retry after the commit must find
its receipt although the record has moved past that prior."""


class ProposalRefused(Exception):
    """The proposal changed nothing. ``code`` is its typed reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def proposal_id(envelope: dict) -> str:
    """32 hex of the SHA-256 of the canonical :data:`ENVELOPE` (keys sorted, no whitespace):
    the same envelope is the same proposal (a retry finds its receipt); any other field value,
    the carrier URI included, is another proposal. Raise KeyError when a field is missing."""
    return sha256(records.canonical_facts({key: envelope[key] for key in ENVELOPE})).hexdigest()[:32]


def _envelope_holds(intent: dict) -> bool:
    """Whether ``intent`` is a well-formed intent whose id is the one its envelope derives."""
    try:
        return (intent.get("schema") == INTENT_SCHEMA and "priorDigest" in intent
                and intent.get("proposal") == proposal_id(intent))
    except (KeyError, TypeError):
        return False


def _read_json(path) -> dict | None:
    try:
        return decoding.load_object(read_bounded(path, RUNTIME_LIMIT, follow_symlinks=False))
    except FileNotFoundError:
        return None
    except (OSError, decoding.Malformed):
        return {}


def _carrier_digest(target: str) -> str | None:
    try:
        return observe_file({"path": target})["contentSha256"]
    except ObservationFailed:
        return "unreadable"


def _publish(directory, name: str, body: dict, scope) -> None:
    staging = ensure_directory(layout.staging(scope), mode=0o700)
    publish(directory / name, json.dumps(body, separators=(",", ":")).encode() + b"\n", staging, mode=0o600)


def _catch_up(seat_dir: str, agent: str, binding: str, uri: str, target: str, generation: int,
              digest: str, now_ms: int) -> records.State:
    """Fold the carrier into the state record: one revision for the new content (none when the
    record already holds it)."""
    facts = observe_file({"path": target})

    def change(current):
        if current is not None and current.facts.get("contentSha256") == digest:
            return None
        base = current or records.State(agent, binding, uri, generation, 0, None, None, {}, None, 0)
        return base._replace(uri=uri, generation=max(generation, base.generation), revision=base.revision + 1,
                             host_digest=records.digest_facts(facts), host_observed_at_ms=now_ms, facts=facts,
                             last_failure=None)

    return records.update(seat_dir, agent, binding, change, now_ms)


def _receipt(proposals, scope, intent: dict, state: records.State, now_ms: int) -> dict:
    body = {"schema": RECEIPT_SCHEMA, "proposal": intent["proposal"], "agent": intent["agent"],
            "binding": intent["binding"], "state": "committed", "generation": state.generation,
            "revision": state.revision, "contentSha256": intent["newDigest"], "committedAtMs": now_ms}
    receipts = ensure_directory(layout.resource_receipts(proposals), mode=0o700)
    _publish(receipts, f"{intent['proposal']}.json", body, scope)
    os.unlink(layout.resource_intent(proposals))
    return body


def _settle_intent(proposals, scope, seat_dir, uri, target, now_ms) -> None:
    """Recovery of an intent a crash left (under the lock)."""
    intent = _read_json(layout.resource_intent(proposals))
    if intent is None:
        return
    if not _envelope_holds(intent):
        raise ProposalRefused("diverged", f"the proposal intent {layout.resource_intent(proposals)} is malformed "
                                          "or its id is not its envelope's; "
                                          "run `st2 agent resource recover` to re-adopt the file")
    carrier = _carrier_digest(target)
    if carrier == intent["priorDigest"] and carrier != intent["newDigest"]:
        os.unlink(layout.resource_intent(proposals))        # crashed before the carrier: the old state stands
        return
    if carrier == intent["newDigest"]:
        state = _catch_up(seat_dir, intent["agent"], intent["binding"], uri, target, intent["generation"],
                          carrier, now_ms)
        _receipt(proposals, scope, intent, state, now_ms)
        return
    raise ProposalRefused("diverged", f"{target} changed out of band after proposal {intent['proposal']} was "
                                      "committed; every proposal fails closed until `st2 agent resource recover`")


def propose(scope, seat_dir: str, agent: str, binding: str, uri: str, data: bytes, expect_revision: int,
            wall_ms, on_step=lambda step: None) -> dict:
    """Propose ``data`` as the binding's file content from revision ``expect_revision``; return
    the durable receipt. Raise :class:`ProposalRefused` (typed) when nothing changed."""
    from st2.declarations.resource_providers import target_path

    if uri.partition(":")[0] != "file":
        raise ProposalRefused("proposals-unsupported", f"{uri.partition(':')[0]}: bindings take no proposals")
    if len(data) > CONTENT_LIMIT:
        raise ProposalRefused("too-large", f"the proposal is {len(data)} bytes; the bound is {CONTENT_LIMIT}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProposalRefused("not-text", "the proposal is not UTF-8 text") from None
    target, scope = target_path(uri), Path(scope)
    proposals = ensure_directory(layout.resource_proposals(scope, agent, binding), mode=0o700)
    new_digest = sha256(data).hexdigest()
    try:
        with record_lock(proposals / "lock", timeout=30):
            return _transact(proposals, scope, seat_dir, agent, binding, uri, target, data, new_digest,
                             expect_revision, wall_ms, on_step)
    except ObservationFailed as failure:
        raise ProposalRefused("carrier-unreadable", str(failure)) from None


def _transact(proposals, scope, seat_dir, agent, binding, uri, target, data, new_digest, expect_revision, wall_ms,
              on_step) -> dict:
    """The compare-and-swap, under the binding's lock."""
    _settle_intent(proposals, scope, seat_dir, uri, target, wall_ms())
    current = records.read_file(seat_dir, agent, binding)
    if current is None or current.revision == 0:
        raise ProposalRefused("no-state", f"{agent} resource {binding!r} has no observed state to propose from")
    prior = current.facts.get("contentSha256")
    envelope = {"agent": agent, "binding": binding, "uri": uri, "generation": current.generation,
                "expectedRevision": expect_revision, "newDigest": new_digest}
    identity = proposal_id(envelope)
    done = _read_json(layout.resource_receipts(proposals) / f"{identity}.json")
    if done:
        return done                                     # a retry after a lost acknowledgement
    if current.revision != expect_revision:
        raise ProposalRefused("revision-moved", f"{agent} resource {binding!r} is at revision {current.revision}, "
                                                f"not {expect_revision}")
    if _carrier_digest(target) != prior:
        raise ProposalRefused("carrier-moved", f"{target} no longer holds revision {current.revision}'s content; "
                                               "refresh and propose from the new revision")
    intent = {"schema": INTENT_SCHEMA, "proposal": identity, **envelope, "priorDigest": prior}
    _publish(proposals, layout.RESOURCE_INTENT, intent, scope)
    on_step("intent")
    publish(target, data, os.path.dirname(target))
    on_step("carrier")
    state = _catch_up(seat_dir, agent, binding, uri, target, current.generation, new_digest, wall_ms())
    on_step("state")
    receipt = _receipt(proposals, scope, intent, state, wall_ms())
    on_step("receipt")
    return receipt


def recover(scope, seat_dir: str, agent: str, binding: str, uri: str, runtime_id: str, wall_ms) -> records.State:
    """The explicit re-adoption after divergence: drop the intent, advance the runtime's
    generation, and publish the file as it is now under the new generation."""
    from st2.declarations.resource_providers import target_path

    target, scope = target_path(uri), Path(scope)
    proposals = ensure_directory(layout.resource_proposals(scope, agent, binding), mode=0o700)
    with record_lock(proposals / "lock", timeout=30):
        try:
            os.unlink(layout.resource_intent(proposals))
        except FileNotFoundError:
            pass
        current = records.read_file(seat_dir, agent, binding)
        generation = registry.advance(scope, runtime_id, (current.generation if current is not None else 0) + 1)
        facts = observe_file({"path": target})

        def change(current):
            base = current or records.State(agent, binding, uri, generation, 0, None, None, {}, None, 0)
            digest = records.digest_facts(facts)
            return base._replace(uri=uri, generation=generation,
                                 revision=base.revision + (digest != base.host_digest), host_digest=digest,
                                 host_observed_at_ms=wall_ms(), facts=facts, last_failure=None)

        return records.update(seat_dir, agent, binding, change, wall_ms())
