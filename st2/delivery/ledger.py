"""The durable native delivery ledger (docs/delivery.md §Native delivery ledger).

One host-local file per native seat, ``delivery-ledger.json``, schema ``st2.delivery-ledger.v1``::

    {"schema":"st2.delivery-ledger.v1","harness":"codex","agent":"<host>.<identity>",
     "runtimeId":"<host>.<identity>","entries":[{"filename":"<unix-ms>-<rand6>.md",
     "binding":"<thread or session id>","correlation":"st2:<unix-ms>-<rand6>:<12 hex>",
     "phase":"attempted","attestation":"observed","negative":null}]}

Each inbox filename has at most one entry: one monotone evidence chain whose :class:`Phase`
only advances (attempted < transportAccepted < persisted < consumed) by :func:`transition`, the
one transition function::

    (none)   ──BEGIN──────────────────────────► attempted        persisted before the transport call
    attempted ──TRANSPORT_ACCEPTED / PERSISTED / CONSUMED──► that phase   (only a phase the
    any phase ──evidence of an earlier phase──► unchanged                  profile can observe;
                                                                           never a downgrade)
    attempted, transportAccepted ──ABSENT / REJECTED──► same phase, negative set
    negative ──BEGIN──► attempted (a new correlation)                the only retry authority

Per-harness :class:`Profile`: Codex observes {attempted, transportAccepted, consumed} and
releases at consumed; opencode observes {attempted, transportAccepted, persisted} and never
releases. A released entry stays (so the message is never sent again) until the recipient
settles the message — the pump never archives — and every entry is pruned once its filename
leaves the unread set (:meth:`Ledger.prune`).

A record that is foreign (another schema, harness, agent or runtime id), malformed, or
self-inconsistent (a duplicate filename, a correlation that does not name its own filename, a
phase its profile cannot observe, a negative beside positive durable evidence) raises
:class:`Quarantined` on load: delivery holds and the file is never rewritten. The file is
published atomically through :func:`st2.fs.atomic.publish`, owner-only (0600) in an owner-only
directory, with its temp file in the session store's staging directory and never left behind.
It lives beside the resumable-session record, not in the runtime scope, so a reboot keeps it
(:func:`ledger_location`). A ledger an earlier build left in the runtime scope is carried
there by :func:`carry_from_scope`, an explicit step each native session takes once at its start.

A seat that an earlier release drove before the ledger existed may have its one pre-ledger
``delivery-state.json`` record; when no ledger file exists, the session translates it once, right
after :func:`carry_from_scope`, into an ``asserted`` entry (:mod:`st2.delivery.legacy_state`,
through :meth:`Ledger.seed`). An asserted entry holds and authorizes no transport until this
build observes evidence of its own (which makes it ``observed``) or the message leaves the
unread set.

Standard library only.
"""

from __future__ import annotations

import enum
import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

from st2.bus.filename import is_message_filename
from st2.fs.atomic import ensure_directory, publish
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.runtime import layout

SCHEMA = "st2.delivery-ledger.v1"
RECORD_NAME = layout.DELIVERY_LEDGER
MAX_ENTRIES = 4096
"""More entries than this is not a ledger any pump wrote (the unread set bounds it)."""


class Phase(enum.IntEnum):
    ATTEMPTED = 1
    TRANSPORT_ACCEPTED = 2
    PERSISTED = 3
    CONSUMED = 4

    @property
    def wire(self) -> str:
        return _PHASE_WIRE[self]


_PHASE_WIRE = {Phase.ATTEMPTED: "attempted", Phase.TRANSPORT_ACCEPTED: "transportAccepted",
               Phase.PERSISTED: "persisted", Phase.CONSUMED: "consumed"}
_PHASE_BY_WIRE = {wire: phase for phase, wire in _PHASE_WIRE.items()}


class Attestation(enum.Enum):
    OBSERVED = "observed"    # this build saw the evidence itself
    ASSERTED = "asserted"    # carried forward from another record: holds, authorizes no transport


class Negative(enum.Enum):
    ABSENT = "absent"        # a complete history of the binding without the correlated input
    REJECTED = "rejected"    # the transport answered with a definite refusal


class Event(enum.Enum):
    BEGIN = "begin"
    TRANSPORT_ACCEPTED = "transportAccepted"
    PERSISTED = "persisted"
    CONSUMED = "consumed"
    ABSENT = "absent"
    REJECTED = "rejected"


_EVIDENCE = {Event.TRANSPORT_ACCEPTED: Phase.TRANSPORT_ACCEPTED, Event.PERSISTED: Phase.PERSISTED,
             Event.CONSUMED: Phase.CONSUMED}
_NEGATIVE = {Event.ABSENT: Negative.ABSENT, Event.REJECTED: Negative.REJECTED}
# A negative receipt is authoritative only while no durable positive evidence exists.
_NEGATIVE_ADMISSIBLE = frozenset({Phase.ATTEMPTED, Phase.TRANSPORT_ACCEPTED})


@dataclass(frozen=True)
class Profile:
    """What one harness's transport can prove, and the phase (if any) that releases an entry."""

    harness: str
    observable: frozenset[Phase]
    release: Phase | None


CODEX = Profile("codex", frozenset({Phase.ATTEMPTED, Phase.TRANSPORT_ACCEPTED, Phase.CONSUMED}), Phase.CONSUMED)
OPENCODE = Profile("opencode", frozenset({Phase.ATTEMPTED, Phase.TRANSPORT_ACCEPTED, Phase.PERSISTED}), None)
PROFILES: dict[str, Profile] = {profile.harness: profile for profile in (CODEX, OPENCODE)}


class Refused(ValueError):
    """An edge the ledger does not have (evidence without ownership, an unobservable phase, a
    second attempt without a negative receipt …). Nothing changes."""


class Quarantined(ValueError):
    """The persisted ledger is foreign, malformed or self-inconsistent: delivery holds and the
    file is left exactly as it is."""


class Verdict(enum.Enum):
    HOLD = "hold"            # ambiguous or in flight (or asserted): blocks delivery, never re-sent
    RELEASED = "released"    # the profile's release phase: never re-sent, blocks nothing
    HELD_UNTIL_SETTLED = "heldUntilSettled"  # a profile that never releases: holds until pruned
    RETRY = "retry"          # an authoritative negative receipt: exactly one new attempt allowed


@dataclass(frozen=True)
class Entry:
    filename: str
    binding: str
    correlation: str
    phase: Phase
    attestation: Attestation = Attestation.OBSERVED
    negative: Negative | None = None


_CORRELATION = re.compile(r"st2:([0-9]{13}-[0-9a-z]{6}):[0-9a-f]{12}")


def new_correlation(filename: str) -> str:
    """A fresh correlation naming ``filename``: ``st2:<stem>:<12 hex>``. It travels in the
    delivered input, so the harness's own history can later prove (or disprove) consumption."""
    if not is_message_filename(filename):
        raise ValueError(f"{filename!r} is not a message filename")
    return f"st2:{filename[:-3]}:{os.urandom(6).hex()}"


def correlation_names(correlation: str, filename: str) -> bool:
    """Whether ``correlation`` is well formed and names ``filename``."""
    match = _CORRELATION.fullmatch(correlation)
    return match is not None and f"{match.group(1)}.md" == filename


def transition(profile: Profile, entry: Entry | None, event: Event, *, filename: str | None = None,
               binding: str | None = None, correlation: str | None = None) -> Entry:
    """The one transition function (edges in the module docstring). Returns the next entry —
    the same object when the event changes nothing — or raises :class:`Refused`."""
    if event is Event.BEGIN:
        if entry is not None and entry.negative is None:                     # holds: no retry
            raise Refused(f"{entry.filename}: already {entry.phase.wire}; only a negative receipt re-authorizes")
        name = filename if filename is not None else (entry.filename if entry else None)
        if name is None or binding is None or correlation is None or not correlation_names(correlation, name):
            raise Refused("BEGIN needs a filename, a binding and a correlation naming the filename")
        if entry is not None and correlation == entry.correlation:
            raise Refused(f"{name}: a retry needs a fresh correlation")
        return Entry(name, binding, correlation, Phase.ATTEMPTED)                # -> attempted
    if entry is None:
        raise Refused(f"{event.value}: evidence without an owned attempt")
    if event in _EVIDENCE:
        phase = _EVIDENCE[event]
        if phase not in profile.observable:
            raise Refused(f"{profile.harness} cannot observe {phase.wire}")
        if entry.negative is not None:
            raise Refused(f"{entry.filename}: positive evidence after a {entry.negative.value} receipt")
        if phase < entry.phase:                                                  # never downgrade
            return entry
        if phase == entry.phase:
            if entry.attestation is Attestation.ASSERTED:                         # confirmed by us
                return replace(entry, attestation=Attestation.OBSERVED)
            return entry
        return replace(entry, phase=phase, attestation=Attestation.OBSERVED)     # -> advance
    negative = _NEGATIVE[event]
    if entry.phase not in _NEGATIVE_ADMISSIBLE:
        raise Refused(f"{entry.filename}: {entry.phase.wire} stands against a {negative.value} receipt")
    if entry.negative is not None:
        return entry
    return replace(entry, negative=negative)                                      # -> negative


def verdict(profile: Profile, entry: Entry) -> Verdict:
    """What ``entry`` means for the next delivery decision."""
    if entry.negative is not None and entry.attestation is Attestation.OBSERVED:
        return Verdict.RETRY
    if entry.attestation is Attestation.ASSERTED:
        return Verdict.HOLD
    if profile.release is not None and entry.phase >= profile.release:
        return Verdict.RELEASED
    if profile.release is None and entry.phase is max(profile.observable):
        return Verdict.HELD_UNTIL_SETTLED
    return Verdict.HOLD


# --- the record --------------------------------------------------------------------------------


def _entry_wire(entry: Entry) -> dict:
    return {"filename": entry.filename, "binding": entry.binding, "correlation": entry.correlation,
            "phase": entry.phase.wire, "attestation": entry.attestation.value,
            "negative": entry.negative.value if entry.negative is not None else None}


def encode(profile: Profile, agent: str, runtime_id: str, entries: Iterable[Entry]) -> bytes:
    body = {"schema": SCHEMA, "harness": profile.harness, "agent": agent, "runtimeId": runtime_id,
            "entries": [_entry_wire(entry) for entry in entries]}
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _decode_entry(profile: Profile, raw) -> Entry:
    if not isinstance(raw, dict) or set(raw) != {"filename", "binding", "correlation", "phase", "attestation", "negative"}:
        raise Quarantined("an entry is not the entry shape")
    filename, binding, correlation = raw["filename"], raw["binding"], raw["correlation"]
    if not (isinstance(filename, str) and is_message_filename(filename)):
        raise Quarantined(f"entry filename {filename!r} is not a message filename")
    if not (isinstance(binding, str) and binding and binding.isprintable()):
        raise Quarantined(f"{filename}: binding must be a non-empty printable string")
    if not (isinstance(correlation, str) and correlation_names(correlation, filename)):
        raise Quarantined(f"{filename}: correlation does not name its own filename")
    phase = _PHASE_BY_WIRE.get(raw["phase"]) if isinstance(raw["phase"], str) else None
    if phase is None:
        raise Quarantined(f"{filename}: unknown phase {raw['phase']!r}")
    if phase not in profile.observable:
        raise Quarantined(f"{filename}: {profile.harness} cannot observe {phase.wire}")
    try:
        attestation = Attestation(raw["attestation"])
        negative = Negative(raw["negative"]) if raw["negative"] is not None else None
    except ValueError:
        raise Quarantined(f"{filename}: unknown attestation or negative word") from None
    if negative is not None and phase not in _NEGATIVE_ADMISSIBLE:
        raise Quarantined(f"{filename}: a {negative.value} receipt beside {phase.wire}")
    return Entry(filename, binding, correlation, phase, attestation, negative)


def decode(data: bytes, profile: Profile, agent: str, runtime_id: str) -> list[Entry]:
    """The entries of a persisted ledger; raise :class:`Quarantined` (table in the docstring)."""
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # deep nesting is not a ledger
        raise Quarantined(f"not JSON: {error}") from None
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise Quarantined(f"schema is not {SCHEMA}")
    for key, expected in (("harness", profile.harness), ("agent", agent), ("runtimeId", runtime_id)):
        if body.get(key) != expected:
            raise Quarantined(f"foreign ledger: {key} is {body.get(key)!r}, not {expected!r}")
    raw_entries = body.get("entries")
    if not isinstance(raw_entries, list) or len(raw_entries) > MAX_ENTRIES:
        raise Quarantined("entries must be a bounded list")
    entries = [_decode_entry(profile, raw) for raw in raw_entries]
    if len({entry.filename for entry in entries}) != len(entries):
        raise Quarantined("two entries for one filename")
    return entries


# --- the store ---------------------------------------------------------------------------------


class Ledger:
    """One seat's ledger, loaded from and persisted to its file. Every mutating method writes
    the whole ledger atomically *before* it returns, so a caller that transports after
    :meth:`begin` returns has ownership on disk first. After a :class:`Quarantined` load the
    instance is never created: the caller holds delivery."""

    def __init__(self, path: Path, staging: Path, profile: Profile, agent: str, runtime_id: str,
                 entries: Iterable[Entry] = ()) -> None:
        self.path = Path(path)
        self.staging = Path(staging)
        self.profile = profile
        self.agent = agent
        self.runtime_id = runtime_id
        self.entries: dict[str, Entry] = {entry.filename: entry for entry in entries}
        self.saves = 0

    @classmethod
    def load(cls, path: Path, staging: Path, profile: Profile, agent: str, runtime_id: str) -> "Ledger":
        """The persisted ledger (empty when no file exists); raise :class:`Quarantined`."""
        try:
            data = read_bounded(path, RUNTIME_LIMIT, follow_symlinks=False)
        except FileNotFoundError:
            return cls(path, staging, profile, agent, runtime_id)
        except OSError as error:
            raise Quarantined(f"unreadable: {error}") from None
        return cls(path, staging, profile, agent, runtime_id, decode(data, profile, agent, runtime_id))

    def get(self, filename: str) -> Entry | None:
        return self.entries.get(filename)

    def verdict(self, filename: str) -> Verdict | None:
        entry = self.entries.get(filename)
        return None if entry is None else verdict(self.profile, entry)

    def holding(self) -> list[Entry]:
        """Entries that block further delivery (ambiguous, in flight, asserted, or held until
        the recipient settles them under a profile that never releases)."""
        return [entry for entry in self.entries.values()
                if verdict(self.profile, entry) in (Verdict.HOLD, Verdict.HELD_UNTIL_SETTLED)]

    def deliverable(self, unread: Iterable[str]) -> list[str]:
        """The unread filenames (in the given FIFO order) a pump may attempt now: nothing while
        any entry holds; otherwise those with no entry or an authoritative negative receipt."""
        if self.holding():
            return []
        return [name for name in unread
                if name not in self.entries or verdict(self.profile, self.entries[name]) is Verdict.RETRY]

    def begin(self, filenames: Iterable[str], binding: str) -> list[Entry]:
        """Own an attempt for each filename (one atomic write for the batch) and return the
        entries; the transport call must come after this returns. Raise :class:`Refused`
        (writing nothing) if any of them may not be attempted."""
        staged = dict(self.entries)
        began = []
        for name in filenames:
            entry = transition(self.profile, staged.get(name), Event.BEGIN, filename=name, binding=binding,
                               correlation=new_correlation(name))
            staged[name] = entry
            began.append(entry)
        if began:
            self._commit(staged)
        return began

    def apply(self, filename: str, event: Event) -> Entry:
        """Apply evidence or a negative receipt to one entry; persist only a real change."""
        current = self.entries.get(filename)
        entry = transition(self.profile, current, event)
        if entry is not current:
            self._commit({**self.entries, filename: entry})
        return entry

    def prune(self, unread: Iterable[str]) -> list[str]:
        """Drop every entry whose message left the unread set; return the pruned filenames."""
        keep = set(unread)
        gone = [name for name in self.entries if name not in keep]
        if gone:
            self._commit({name: entry for name, entry in self.entries.items() if name in keep})
        return gone

    def seed(self, entries: Iterable[Entry]) -> None:
        """Publish entries this process did not create (the pre-ledger carry,
        :mod:`st2.delivery.legacy_state`) as the whole ledger: they must read back through
        :func:`decode` exactly as a saved ledger would, else :class:`Quarantined` and nothing is
        written."""
        staged = {entry.filename: entry for entry in entries}
        decode(encode(self.profile, self.agent, self.runtime_id, staged.values()), self.profile, self.agent,
               self.runtime_id)
        self._commit(staged)

    def _commit(self, entries: dict[str, Entry]) -> None:
        ensure_directory(self.path.parent, mode=0o700)
        ensure_directory(self.staging, mode=0o700)
        publish(self.path, encode(self.profile, self.agent, self.runtime_id, entries.values()),
                self.staging, mode=0o600)
        self.entries = entries
        self.saves += 1


def ledger_location(scope_directory: Path, runtime_id: str) -> tuple[Path, Path]:
    """The seat's ledger and its staging directory:
    ``<state>/st2/sessions/<digest>/<host>/delivery/<runtime-id>/delivery-ledger.json`` in the
    session store beside the runtime scope (:class:`st2.runtime.resumable_session.SessionStore`),
    host-local and never replicated. Not in the runtime scope, which a reboot makes meaningless
    (a simulated one removes it): the ledger is what tells a rebooted seat that a consumed but
    unarchived message was delivered already, and what settles an attempt the crash caught
    against the resumed conversation — so it survives exactly as the record naming that
    conversation does. Pure: nothing is read, moved or created."""
    store = layout.session_store(Path(scope_directory))
    return layout.delivery_ledger(store, runtime_id), layout.staging(store)


QUARANTINED = "quarantined"


def phase_counts(scope_directory: Path, runtime_id: str, harness: str, agent: str) -> dict[str, int] | None:
    """A reader's count of the seat's ledger entries by phase (wire words; ``quarantined``: 1 for
    a ledger the pump would refuse), or None for a seat whose harness keeps no ledger. Reads
    only; an absent ledger counts nothing."""
    profile = PROFILES.get(harness)
    if profile is None:
        return None
    path, staging = ledger_location(scope_directory, runtime_id)
    try:
        ledger = Ledger.load(path, staging, profile, agent, runtime_id)
    except Quarantined:
        return {QUARANTINED: 1}
    counts: dict[str, int] = {}
    for entry in ledger.entries.values():
        counts[entry.phase.wire] = counts.get(entry.phase.wire, 0) + 1
    return counts


def carry_from_scope(scope_directory: Path, runtime_id: str) -> None:
    """The one-time migration a native session runs at its start, before it loads its ledger:
    carry a ledger an earlier build left at the scope's
    ``delivery/<runtime-id>/delivery-ledger.json`` to :func:`ledger_location` (:func:`carry_forward`).
    Never raises; nothing to carry is a no-op."""
    path, staging = ledger_location(scope_directory, runtime_id)
    carry_forward(layout.delivery_ledger(Path(scope_directory), runtime_id), path, staging)


def carry_forward(old: Path, path: Path, staging: Path) -> None:
    """Move a ledger from ``old`` (the runtime scope, where earlier builds kept it) to ``path``
    when ``path`` has none: its bytes as they are (a malformed one is quarantined at ``path`` as
    it would have been there), published atomically, then ``old`` removed. A ``path`` already
    there wins and ``old`` is removed as stale; anything at ``old`` but a regular file is left
    alone. Never raises: a ledger that cannot be carried (unreadable, a full disk) stays at
    ``old``, and this launch starts without it as a seat with no ledger does."""
    try:
        status = os.lstat(old)
    except OSError:
        return
    import stat

    if not stat.S_ISREG(status.st_mode):
        return
    try:
        if not os.path.lexists(path):
            data = read_bounded(old, RUNTIME_LIMIT, follow_symlinks=False)
            ensure_directory(path.parent, mode=0o700)
            ensure_directory(staging, mode=0o700)
            publish(path, data, staging, mode=0o600)
        os.unlink(old)
    except OSError:
        pass


def load_for(catalog: Path, host: str, runtime_id: str, profile: Profile, agent: str,
             state_dir: Path | None = None) -> Ledger:
    """The seat's ledger on this host (:func:`ledger_location`); raise :class:`Quarantined`."""
    from st2.runtime.scope import RuntimeScope

    scope = RuntimeScope(Path(os.path.abspath(catalog)), host, state_dir)
    path, staging = ledger_location(scope.directory, runtime_id)
    return Ledger.load(path, staging, profile, agent, runtime_id)
