"""DING ownership: the persisted delivery state machine of one notifier.

The record is host-local runtime state (never inside the replicated seat directory):
``<runtime scope>/ding/<target>.json``, owner-only, published atomically, so a SIGKILL at any
instant leaves either the state before a save or the state after it. The notifier saves the
states a restart must tell apart, not every edge (:mod:`st2.ding.notifier`): a fresh head is
saved once, already LOADED, after its buffer is loaded and before the paste; PASTED is saved only
when the head is then held (LOADED with its buffer gone reads the same).

The head of the FIFO moves through :class:`Phase` by :func:`transition` only::

    IDLE ──OWN──► OWNED ──BUFFER_LOADED──► LOADED ──PASTE_LANDED──► PASTED
                                                                     │ RETURN_SENT
    IDLE ◄──ACCEPTED / RELEASED── PASTED, SUBMITTED ◄────────────────┘ (and SUBMITTED ─► SUBMITTED,
    IDLE ◄──RELEASED── OWNED, LOADED (archived before any paste)        at most one retry Return)
    OWNED, LOADED, PASTED, SUBMITTED ──TERMINAL_REPLACED──► OWNED (the old terminal died)

Why these phases make the paste exactly-once: the notice is loaded into a tmux buffer named
after the head's token, and pasted with ``paste-buffer -d``, which pastes and deletes the
buffer in one server command. The paste is never started before LOADED is persisted. A
notifier restarted in OWNED (a head a replaced terminal sent back, or a record of an earlier
build) finds no buffer only if the load never happened, so it loads again; in LOADED a present
buffer means the paste has not happened and an absent one means it has. A buffer loaded for a
head no record names (a notifier killed between the load and the save) is never pasted: the
next attempt takes a new token. Every later phase only inspects the screen; no phase ever
pastes a second time.

A record that cannot be read as this schema is reported and holds delivery
(:class:`MalformedOwnership`); it is never guessed at or overwritten.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from st2.records.decoding import Malformed, load_object
from st2.fs.atomic import ensure_directory, publish
from st2.fs.read import RUNTIME_LIMIT, read_bounded

SCHEMA = "st2.ding-ownership.v1"
MAX_RETURNS = 2  # the combined Return plus at most one bare retry Return


class Phase(enum.Enum):
    IDLE = "idle"
    OWNED = "owned"            # ownership recorded; the buffer may not be loaded yet
    LOADED = "loaded"          # the named buffer was loaded; the paste may or may not have run
    PASTED = "pasted"          # the paste ran: from here on, inspection only
    SUBMITTED = "submitted"    # a Return was (or is about to be) sent


class Event(enum.Enum):
    OWN = "own"
    BUFFER_LOADED = "buffer-loaded"
    PASTE_LANDED = "paste-landed"
    RETURN_SENT = "return-sent"
    ACCEPTED = "accepted"
    RELEASED = "released"
    TERMINAL_REPLACED = "terminal-replaced"


class IllegalTransition(ValueError):
    pass


class MalformedOwnership(ValueError):
    """The record exists but is not a readable ownership record; delivery holds."""


@dataclass(frozen=True)
class Head:
    """The FIFO head this notifier owns: the notice text, the message filenames it stands for
    (several for the startup backlog notice), its paste token and the terminal it went to."""

    kind: str                       # "message" | "backlog"
    notice: str
    filenames: tuple[str, ...]
    token: str
    terminal: int | None = None     # tmux server pid the buffer/paste went to
    returns: int = 0

    @property
    def buffer_name(self) -> str:
        return f"st2-ding-{self.token}"


@dataclass(frozen=True)
class Ownership:
    target: str
    phase: Phase = Phase.IDLE
    head: Head | None = None
    settled: tuple[str, ...] = ()   # notified (or covered) and still unread: never noticed again
    backlog: tuple[str, ...] = ()   # startup backlog still waiting for its one notice
    started: bool = False           # the startup backlog has been taken (a restart is not a start)
    extra: dict = field(default_factory=dict, compare=False)


def new_token() -> str:
    return os.urandom(6).hex()  # not secrets: it loads OpenSSL (st2/base/digest.py)


def transition(state: Ownership, event: Event, *, head: Head | None = None,
               terminal: int | None = None) -> Ownership:
    """The one transition function. Raise :class:`IllegalTransition` for an unnamed edge."""
    phase = state.phase
    if event is Event.OWN and phase is Phase.IDLE:                      # IDLE -> OWNED
        if head is None:
            raise IllegalTransition("OWN needs the head being owned")
        return replace(state, phase=Phase.OWNED, head=head)
    if event is Event.BUFFER_LOADED and phase is Phase.OWNED:           # OWNED -> LOADED
        return replace(state, phase=Phase.LOADED)
    if event is Event.PASTE_LANDED and phase is Phase.LOADED:           # LOADED -> PASTED
        return replace(state, phase=Phase.PASTED)
    if event is Event.RETURN_SENT and phase in (Phase.PASTED, Phase.SUBMITTED):  # -> SUBMITTED
        if state.head.returns >= MAX_RETURNS:
            raise IllegalTransition("no Return beyond the combined one and one retry")
        return replace(state, phase=Phase.SUBMITTED,
                       head=replace(state.head, returns=state.head.returns + 1))
    if event is Event.ACCEPTED and phase in (Phase.PASTED, Phase.SUBMITTED):     # -> IDLE
        return _settle(state)
    if event is Event.RELEASED and phase is not Phase.IDLE:             # -> IDLE
        return _settle(state)
    if event is Event.TERMINAL_REPLACED and phase is not Phase.IDLE:    # -> OWNED (new terminal)
        return replace(state, phase=Phase.OWNED,
                       head=replace(state.head, token=new_token(), terminal=terminal, returns=0))
    raise IllegalTransition(f"{event.value} is not an edge from {phase.value}")


def _settle(state: Ownership) -> Ownership:
    settled = tuple(sorted(set(state.settled) | set(state.head.filenames)))
    backlog = () if state.head.kind == "backlog" else state.backlog
    return replace(state, phase=Phase.IDLE, head=None, settled=settled, backlog=backlog)


# --- the record --------------------------------------------------------------------------------


def encode(state: Ownership) -> bytes:
    head = None
    if state.head is not None:
        head = {"kind": state.head.kind, "notice": state.head.notice,
                "filenames": list(state.head.filenames), "token": state.head.token,
                "terminal": state.head.terminal, "returns": state.head.returns}
    body = {"schema": SCHEMA, "target": state.target, "started": state.started,
            "phase": state.phase.value, "head": head, "settled": list(state.settled),
            "backlog": list(state.backlog)}
    return (json.dumps(body, ensure_ascii=False) + "\n").encode()


def _strings(value, label: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MalformedOwnership(f"{label} must be a list of strings")
    return tuple(value)


def decode(data: bytes, target: str) -> Ownership:
    """Parse a record. Raise :class:`MalformedOwnership` for anything but this schema, for
    another target, or for a phase and head that do not belong together."""
    try:
        body = load_object(data)
    except Malformed as error:
        raise MalformedOwnership(f"not JSON: {error}") from None
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise MalformedOwnership(f"schema is not {SCHEMA}")
    if body.get("target") != target:
        raise MalformedOwnership(f"record is for {body.get('target')!r}, not {target!r}")
    try:
        phase = Phase(body.get("phase"))
    except ValueError:
        raise MalformedOwnership(f"unknown phase {body.get('phase')!r}") from None
    if not isinstance(body.get("started"), bool):
        raise MalformedOwnership("started must be a boolean")
    raw_head = body.get("head")
    head = None
    if raw_head is not None:
        if not isinstance(raw_head, dict):
            raise MalformedOwnership("head must be an object")
        kind, notice, token = raw_head.get("kind"), raw_head.get("notice"), raw_head.get("token")
        terminal, returns = raw_head.get("terminal"), raw_head.get("returns")
        if kind not in ("message", "backlog") or not isinstance(notice, str) or not isinstance(token, str):
            raise MalformedOwnership("head needs kind, notice and token")
        if not (token.isascii() and token.isalnum()):
            raise MalformedOwnership("head token must be alphanumeric")
        if terminal is not None and not (isinstance(terminal, int) and not isinstance(terminal, bool)):
            raise MalformedOwnership("head terminal must be a pid or null")
        if not (isinstance(returns, int) and not isinstance(returns, bool) and 0 <= returns <= MAX_RETURNS):
            raise MalformedOwnership("head returns out of range")
        head = Head(kind, notice, _strings(raw_head.get("filenames"), "head filenames"), token,
                    terminal, returns)
    if (phase is Phase.IDLE) != (head is None):
        raise MalformedOwnership(f"phase {phase.value} with {'a' if head else 'no'} head")
    return Ownership(target, phase, head, _strings(body.get("settled"), "settled"),
                     _strings(body.get("backlog"), "backlog"), body["started"])


class OwnershipStore:
    """Where one target's record lives, and its atomic load/save."""

    def __init__(self, directory: Path, staging: Path, target: str) -> None:
        self.directory = Path(directory)
        self.staging = Path(staging)
        self.target = target
        self.path = self.directory / f"{target}.json"
        self.saves = 0
        self.durable_saves = 0

    def load(self) -> Ownership | None:
        """The record, None when there is none yet; raise :class:`MalformedOwnership`."""
        try:
            data = read_bounded(self.path, RUNTIME_LIMIT, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise MalformedOwnership(f"unreadable: {error}") from None
        return decode(data, self.target)

    def save(self, state: Ownership, durable: bool = True) -> None:
        """Publish ``state`` atomically; also durably (fsynced) unless ``durable`` is False."""
        ensure_directory(self.directory, mode=0o700)
        ensure_directory(self.staging, mode=0o700)
        publish(self.path, encode(state), self.staging, mode=0o600, durable=durable)
        self.saves += 1
        self.durable_saves += durable


def store_for(catalog: Path, host: str, target: str, state_dir: Path | None = None) -> OwnershipStore:
    """The store in the catalog's runtime scope on this host (``<scope>/ding/<target>.json``)."""
    from st2.runtime import layout
    from st2.runtime.scope import RuntimeScope

    scope = RuntimeScope(Path(os.path.abspath(catalog)), host, state_dir)
    return OwnershipStore(layout.ding_ownership(scope.directory), scope.staging, target)
