"""A wrapper's side of the resume core (:mod:`st2.runtime.resume`, docs/records.md §Resumable session), one object for
every wrapper: :class:`ResumeHold`. The policy is the seat's declared ``resume`` knob
(:func:`resume_policy`).
"""

from __future__ import annotations


def resume_policy(seat_directory) -> str:
    """The seat's declared ``resume`` knob (``last`` unless declared; ``last`` too when the
    declaration cannot be read — the supervisor launched it, so it validated)."""
    from st2.declarations.agent import load_agent
    from st2.declarations.model import DEFAULT_RESUME

    try:
        declaration, _ = load_agent(seat_directory / "agent.kdl")
    except Exception:
        return DEFAULT_RESUME
    return declaration.resume if declaration is not None else DEFAULT_RESUME


def say_discarded(say, harness: str, binding) -> None:
    """Say (the id escaped) that the recorded session id was not resumed for its shape."""
    if binding.discarded is not None:
        from st2.catalog.names import shown

        say(f"the recorded session id {shown(binding.discarded)} is not a {harness} session id; "
            "starting a fresh session")


class ResumeHold:
    """A wrapper's side of the resume core for one incarnation, for every wrapper (the PTY
    wrappers' :class:`st2.drivers.child_session.ChildSession`, the native
    :class:`st2.drivers.native_session.NativeServerSession`): :meth:`begin` right after the
    relaunch claim returns the harness session to resume (or None: fresh), :meth:`observed`
    records the session the harness reports, :meth:`refused` is the one fallback. The store is
    the one beside the seat's runtime scope (:meth:`st2.runtime.resumable_session.SessionStore.of`).
    A store that cannot be read or written is said on the PTY and the session starts fresh (never
    a silent resume of a guessed session); ``start`` is then None."""

    def __init__(self, seat, runtime_id: str, harness: str, clock, say, state_dir=None, accepts=None) -> None:
        import os
        from pathlib import Path

        from st2.runtime.resumable_session import SessionStore

        catalog = Path(os.path.abspath(seat.directory)).parents[2]
        self.store = SessionStore.of(catalog, seat.agent.split(".", 1)[0], state_dir)
        self.seat = seat
        self.runtime_id = runtime_id
        self.harness = harness
        self.clock = clock
        self.say = say
        self.accepts = accepts  # the harness's id shape (st2.drivers.session_ids)
        self.binding = None

    @property
    def start(self) -> str | None:
        """``fresh`` / ``resuming`` / ``resumed`` / ``fallback``, or None without a record."""
        return self.binding.start.value if self.binding is not None else None

    def begin(self, incarnation: str) -> str | None:
        from st2.runtime import resume

        try:
            self.binding = resume.begin(self.store, self.runtime_id, self.seat.agent, self.harness, incarnation,
                                        resume_policy(self.seat.directory), self.clock, self.seat.directory,
                                        self.accepts)
        except (OSError, ValueError) as error:
            self.say(f"the resumable-session record cannot be read or written ({error}); starting a fresh session")
            return None
        say_discarded(self.say, self.harness, self.binding)
        return self.binding.resume_id

    def adopt(self, incarnation: str, start: str, resume_id: str | None) -> None:
        """Take over the binding a predecessor image of this process began (the slim anchor's way
        back, :mod:`st2.drivers.session_anchor`) as it stood."""
        from st2.runtime import resume
        from st2.runtime.resumable_session import SessionRecord

        record = SessionRecord(self.runtime_id, self.seat.agent, self.harness, incarnation, start,
                               resumed_from=resume_id)
        self.binding = resume.Binding(self.store, record, self.seat.directory, self.clock, self.accepts)

    def observed(self, session_id: str) -> None:
        if self.binding is None:
            return
        try:
            self.binding.observed(session_id)
        except (OSError, ValueError) as error:  # the record is best effort; the session goes on
            self.say(f"recording session {session_id} failed ({error}); a relaunch may start fresh")

    def still_resuming(self) -> bool:
        """Whether the resume this incarnation attempted has not been observed yet (re-read: a
        hook may have observed it): at a reap, the harness ended refusing or not finding it."""
        from st2.runtime.resume import Start

        return self.binding is not None and self.binding.refresh() is Start.RESUMING

    def refused(self, session_id: str, diagnostics=None) -> None:
        """The harness refused to resume ``session_id`` (or cannot: its store no longer holds it):
        record the loss once (the ``resume`` diagnostic, through ``diagnostics`` when the wrapper
        keeps a :class:`st2.records.driver_diagnostic.Publisher`) and say so; the caller starts a
        fresh session. A session that vanishes under an incarnation that did not resume it is
        only said."""
        from st2.runtime.resume import Start

        self.say(f"the harness refused to resume session {session_id}; it is kept as lost and a fresh "
                 "session starts (once)")
        if self.binding is None or self.binding.start is not Start.RESUMING:
            return
        try:
            self.binding.refused(diagnostics)
        except OSError as error:
            self.say(f"recording the lost session failed ({error})")
