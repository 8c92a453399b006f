"""The opencode wrapper's delivery with durable read-back (:class:`ReadBackDelivery`): a prompt goes
through ``POST /session/{id}/prompt_async`` only while the bound session is idle, and each one is
read back from the session's history before the next may go; a call without a definite answer is
never re-sent, only read back (the opencode profile of :mod:`st2.delivery.ledger` never releases).

A mixin of :class:`st2.drivers.opencode.session.OpencodeSession`: it reads the session's client,
pump, observed state, diagnostics and binding.
"""

from __future__ import annotations

from st2.drivers.opencode.api import ApiError

READ_BACK_SECONDS = 1.0
QUIET_SECONDS = 30.0
"""A prompt call this server took (or may have taken: no answer) is settled against its history
only once the session has run its turn and gone idle, or has stayed idle this long after the
call; before that a missing correlation keeps holding. A predecessor's server is gone, so its
history is complete at once."""
REBIND_SECONDS = 30.0
"""A resume the server could not answer is asked again this often, delivery holding meanwhile."""


class ReadBackDelivery:
    def deliver(self) -> None:
        self.audit()
        now = self.clock.monotonic()
        if self.pump.ambiguous():
            if now >= self._next_read_back:
                self.read_back()
            return
        if not self.bound and now >= self._next_bind:
            self._next_bind = now + REBIND_SECONDS
            self.bind()   # the pane keeps the transcript view: the TUI attaches only at serve
        if not (self.inbox_dirty and self.connected and self.bound and self.observed.idle()):
            return
        if self.delivery_held():
            return
        self.inbox_dirty = False
        batch = self.pump.next_batch(self.session_id)
        if batch is None:
            return
        # The bus guide rides each prompt as the session's system prompt (opencode's own slot for
        # instructions; it keeps none between prompts).
        from st2.bus.guide import guide_text

        body: dict = {"parts": [{"type": "text", "text": batch.text}], "system": guide_text()}
        if self.model is not None:
            body["model"] = {"providerID": self.model[0], "modelID": self.model[1]}
        try:
            self.client.post(f"/session/{self.session_id}/prompt_async", body)
        except ApiError as error:
            if error.status is not None and 400 <= error.status < 500:
                self.pump.transport_answer(batch, accepted=False)
                self.diagnostics.publish("delivery", "deliveryRejected", "promptTransport")
                self.note(f"the prompt was refused ({error}); one new attempt is allowed")
            else:  # no definite answer: the server may still take it; read back, never re-send
                self.diagnostics.publish("delivery", "deliveryUnavailable", "promptTransport")
                self.note(f"the prompt call got no answer ({error}); it holds until read back")
                self.awaiting_read_back = True
                self._turn_seen = False
                self._sent_at = now
            self._next_read_back = now + READ_BACK_SECONDS
            return
        self.pump.transport_answer(batch, accepted=True)
        self.diagnostics.clear("delivery")
        self.awaiting_read_back = True
        self._turn_seen = False
        self._sent_at = now
        self._next_read_back = now + 0.2
        self.note(f"delivered {len(batch.filenames)} message(s)")

    def read_back(self) -> None:
        """Read the bound sessions' histories back; a predecessor's binding (or ours once the turn
        our prompt started has ended) is complete, so a missing correlation there is ``absent``."""
        self._next_read_back = self.clock.monotonic() + READ_BACK_SECONDS
        for binding in sorted(self.pump.bindings()):
            try:
                messages = self.client.get(f"/session/{binding}/message")
            except ApiError as error:
                self.diagnostics.publish("readBack", "readBackUnavailable", "messageReadBack")
                self.note(f"read-back of session {binding} failed ({error}); the deliveries hold")
                continue
            ours = binding == self.session_id and self.awaiting_read_back
            quiet = self.clock.monotonic() - self._sent_at >= QUIET_SECONDS and self.observed.idle()
            complete = not ours or (self._turn_seen and self.observed.idle()) or quiet
            persisted, absent = self.pump.read_back(binding, messages, complete)
            if persisted:
                self.diagnostics.clear("readBack")
                self.note(f"read back {len(persisted)} delivered message(s): persisted")
            if absent:
                self.diagnostics.publish("readBack", "notDurable", "messageReadBack")
                self.note(f"{len(absent)} delivery(ies) not in the session's history; one new attempt is allowed")
        if not self.pump.ambiguous():
            self.awaiting_read_back = False
            self.inbox_dirty = True

    # --- the loop --------------------------------------------------------------------------
