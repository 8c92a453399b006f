"""``st2 agent publish``: compare-and-swap publication of one declaration (or a create-only
bundle) through the full-catalog gate, and :func:`rewrite`, the source-preserving edit every
other authoring verb goes through.

Publication, under the authoring lock:

1. the captured source must carry the caller's ``--input-sha256`` (no caller/source swap);
2. it declares exactly one ``agent`` with an explicit ``host``; the host and identity, which name
   its destination ``agents/<host>/<identity>/agent.kdl``, must be names discovery accepts
   (:func:`st2.catalog.names.seat_refusal`, the one name rule);
3. compare-and-swap against the incumbent: ``--expect-absent`` wants no declaration (or the same
   bytes: a replay is ``unchanged``), ``--expect-sha256 H`` wants the incumbent's SHA-256 to be
   ``H``; a loser raises :class:`CasLost` carrying the current digest;
4. authority is read from the incumbent (:mod:`st2.authoring.authority`); creating and
   republishing identical bytes need no assertion;
5. the prospective catalog passes the full-catalog gate (a replay too: an invalid catalog never
   reads as a successful publication);
6. the declaration is published atomically (a bundle by renaming its staged directory into
   place), read back, and the catalog generation advanced.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from st2.authoring import authority, gate
from st2.authoring.faults import checkpoint
from st2.authoring.source import Captured
from st2.authoring.transaction import BUNDLE_STAGE_PREFIX, authoring
from st2.catalog.location import CatalogLocation
from st2.catalog.names import seat_refusal
from st2.declarations.agent import parse_agent
from st2.base.digest import sha256
from st2.fs.atomic import check_real_directories, fsync_directory, write_all

HEX64 = re.compile(r"[0-9a-f]{64}")


class PublishRefused(Exception):
    """Publication was refused before anything was written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


class CasLost(Exception):
    """The compare-and-swap precondition failed: another writer got there first."""

    def __init__(self, agent: str, path: Path, expected: str | None, current: str | None) -> None:
        wanted = "absent" if expected is None else f"sha256 {expected}"
        found = "absent" if current is None else f"sha256 {current}"
        super().__init__(f"[cas-lost] publish precondition failed: expected {agent} {wanted}, found {found}")
        self.agent, self.path, self.expected, self.current = agent, path, expected, current

    def wire(self) -> dict:
        """The ``st2.agent-publish-conflict.v1`` body, through its wire model."""
        from st2.authoring.wire import PublishConflict

        return PublishConflict(bus_id=self.agent, path=str(self.path), expected_sha256=self.expected,
                               current_sha256=self.current).wire()


@dataclass(frozen=True)
class Published:
    status: str                                 # "published" or "unchanged"
    agent: str
    path: Path
    input_sha256: str
    before_sha256: str | None
    after_sha256: str
    managed_by: str | None

    def wire(self) -> dict:
        """The ``st2.agent-publish.v2`` receipt, through its wire model."""
        from st2.authoring.wire import PublishReceipt

        return PublishReceipt(status=self.status, bus_id=self.agent, path=str(self.path),
                              input_sha256=self.input_sha256, before_sha256=self.before_sha256,
                              after_sha256=self.after_sha256, managed_by=self.managed_by).wire()

    def line(self) -> str:
        return f"{self.agent} {self.status} ({self.after_sha256}); `st2 up` converges it"


def digest_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def check_names(host: str, identity: str) -> None:
    """Raise :class:`PublishRefused` (one line, the name escaped) unless ``host`` and ``identity``
    are names discovery accepts: asked before anything is written."""
    problem = seat_refusal(host, identity)
    if problem is not None:
        raise PublishRefused("invalid-name", problem)


def placement(captured_text: str, source: str) -> tuple[str, str]:
    """``(host, identity)`` the candidate declares; refuse a candidate that does not load on its
    own, omits its host, or names a host or identity discovery refuses."""
    declaration, diagnostics = parse_agent(captured_text, path=Path("agent.kdl"), source=source)
    if declaration is None:
        errors = "; ".join(d.human().splitlines()[0] for d in diagnostics if d.severity == "error")
        raise PublishRefused("invalid-declaration", f"the candidate does not load: {errors}")
    if not declaration.host:
        raise PublishRefused("invalid-declaration", "the candidate must declare its host explicitly "
                                                    '(host "<host>"), which names where it is published')
    check_names(declaration.host, declaration.identity)
    return declaration.host, declaration.identity


def _incumbent_markers(data: bytes | None, host: str, identity: str) -> tuple[str, ...]:
    """Markers of the incumbent; bytes that do not load carry no claim (publication over them is
    the ordinary repair path: writing such bytes already took direct filesystem authority)."""
    if data is None:
        return ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ()
    declaration, _ = parse_agent(text, path=Path(f"agents/{host}/{identity}/agent.kdl"),
                                 source=f"agents/{host}/{identity}/agent.kdl", host=host, identity=identity)
    return authority.markers(declaration)


def publish(location: CatalogLocation, captured: Captured, source_name: str, input_sha256: str, *,
            expect_sha256: str | None, managed_by: str | None = None) -> Published:
    """Publish ``captured``. ``expect_sha256`` ``None`` means ``--expect-absent``. Raise
    :class:`PublishRefused`, :class:`CasLost`, ``AuthorityRefused`` or ``GateRefused`` with
    nothing written."""
    for name, value in (("--input-sha256", input_sha256), ("--expect-sha256", expect_sha256)):
        if value is not None and not HEX64.fullmatch(value):
            raise PublishRefused("invalid-digest", f"{name} must be 64 lower-case hex digits")
    if captured.sha256 != input_sha256:
        raise PublishRefused("input-precondition", f"publication input precondition failed: expected sha256 "
                                                   f"{input_sha256}, captured {captured.sha256}")
    if captured.kind == "bundle" and expect_sha256 is not None:
        raise PublishRefused("bundle-create-only", "bundle publication is create-only; use --expect-absent")
    authority.check_assertion(managed_by)
    try:
        text = captured.declaration.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PublishRefused("invalid-declaration", "the candidate is not UTF-8") from error
    host, identity = placement(text, source_name)
    agent = f"{host}.{identity}"
    seat = location.paths.seat(host, identity)
    with authoring(location) as transaction:
        try:
            if location.paths.agents.exists():
                check_real_directories(location.paths.agents, location.root)
            if seat.directory.parent.exists():
                check_real_directories(seat.directory.parent, location.root)
            before = transaction.read_declaration(host, identity)
        except OSError as error:
            raise PublishRefused("unsafe-target", str(error)) from error
        before_sha = digest_hex(before) if before is not None else None
        if expect_sha256 is None:
            if before is not None and before != captured.declaration:
                raise CasLost(agent, seat.declaration, None, before_sha)
        elif before_sha != expect_sha256:
            raise CasLost(agent, seat.declaration, expect_sha256, before_sha)
        same = before == captured.declaration
        admitted = None
        if before is not None and not same:
            # Only a rewrite replaces bytes someone may own; creating and replaying stay open.
            admitted = authority.admit_rewrite(agent, _incumbent_markers(before, host, identity), managed_by)
        staged = None
        if captured.kind == "bundle":
            if same:
                if not _bundle_matches(seat.directory, captured):
                    raise PublishRefused("bundle-mismatch", f"{seat.directory} exists but does not hold the "
                                                            "complete bundle")
            elif seat.directory.exists():
                raise PublishRefused("bundle-create-only", f"{seat.directory} already exists without agent.kdl")
            else:
                staged = _stage_bundle(transaction.staging, captured)
        try:
            gate.admit(location, host, identity, text, directory=staged)
            if not same:
                if staged is not None:
                    transaction.make_seat_parent(host)
                    os.rename(staged, seat.directory)     # the seat appears whole or not at all
                    fsync_directory(seat.directory.parent)
                    transaction.mark_committed()
                else:
                    transaction.write_declaration(host, identity, captured.declaration)
                after = transaction.read_declaration(host, identity)
                if after != captured.declaration:
                    raise PublishRefused("readback-mismatch", f"{seat.declaration} did not read back as published")
        finally:
            if staged is not None and staged.exists():
                shutil.rmtree(staged, ignore_errors=True)
    return Published("unchanged" if same else "published", agent, seat.declaration, captured.sha256, before_sha,
                     digest_hex(captured.declaration), admitted)


def _stage_bundle(staging: Path, captured: Captured) -> Path:
    stage = staging / f"{BUNDLE_STAGE_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
    stage.mkdir(mode=0o755)
    for relative, (data, mode) in sorted(captured.files.items()):
        target = stage / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            write_all(descriptor, data, target)
        finally:
            os.close(descriptor)
    fsync_directory(stage)
    checkpoint("publish-bundle-staged")
    return stage


def _bundle_matches(directory: Path, captured: Captured) -> bool:
    for relative, (data, _) in captured.files.items():
        path = directory / relative
        if path.is_symlink() or not path.is_file() or path.read_bytes() != data:
            return False
    return True


# -- source-preserving rewrites (desired-state, describe, address, stream) ----------------------

@dataclass(frozen=True)
class Rewritten:
    agent: str
    changed: bool
    declaration: object                         # the AgentDeclaration after the edit
    managed_by: str | None


def resolve_identity(location: CatalogLocation, identity: str) -> tuple[str, str]:
    """``(host, identity)`` for a bare identity or ``<host>.<identity>`` of the selected host."""
    prefix = f"{location.host}."
    bare = identity[len(prefix):] if identity.startswith(prefix) else identity
    check_names(location.host, bare)
    return location.host, bare


def rewrite(location: CatalogLocation, identity: str, edit: Callable[[str, object], str], *,
            lifecycle: bool, managed_by: str | None = None) -> Rewritten:
    """Apply ``edit(text, declaration) -> new_text`` to the seat's declaration under the lock.
    ``lifecycle`` edits admit a Nix-owned declaration to an exact ``managed_by`` assertion; every
    other edit refuses one outright. The result passes the full-catalog gate before it is
    published. Raise ``PublishRefused``, ``AuthorityRefused`` or ``GateRefused``."""
    if lifecycle:
        authority.check_assertion(managed_by)
    host, bare = resolve_identity(location, identity)
    agent = f"{host}.{bare}"
    source = f"agents/{host}/{bare}/agent.kdl"
    with authoring(location) as transaction:
        try:
            data = transaction.read_declaration(host, bare)
        except OSError as error:
            raise PublishRefused("unsafe-target", str(error)) from error
        if data is None:
            raise PublishRefused("unknown-identity", f"no declaration for {agent} at "
                                                     f"{location.paths.seat(host, bare).declaration}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise PublishRefused("invalid-declaration", f"{source} is not UTF-8; fix it first") from error
        path = location.paths.seat(host, bare).declaration
        declaration, diagnostics = parse_agent(text, path=path, source=source, host=host, identity=bare)
        if declaration is None:
            raise PublishRefused("invalid-declaration", f"{source} does not load; fix it first: "
                                 + "; ".join(d.human().splitlines()[0] for d in diagnostics if d.severity == "error"))
        markers = authority.markers(declaration)
        admitted = None
        if lifecycle:
            admitted = authority.admit_rewrite(agent, markers, managed_by)
        else:
            authority.refuse_nix_owned(agent, markers)
        edited = edit(text, declaration)
        if edited == text:
            return Rewritten(agent, False, declaration, admitted)
        gate.admit(location, host, bare, edited)
        transaction.write_declaration(host, bare, edited.encode())
        after, _ = parse_agent(edited, path=path, source=source, host=host, identity=bare)
    return Rewritten(agent, True, after, admitted)
