"""The channel both pi and omp are observed through: st2's extension inside the harness
(``hooks/pi-channel.ts``, ``hooks/omp-channel.ts``) writes frames on an inherited pipe.

- :mod:`.frames` — the frame decoder and the consumer into harness-context and harness-state.
- :mod:`.session` — :class:`~.session.ChannelSession`, the wrapper that injects the extension and
  reads the pipe (a driver subclasses it with its harness's names and resume mechanism).
- :mod:`.expansion` — the driver block both harnesses declare (``executable``, ``provider``,
  ``model``, ``args``).
- :mod:`.replay` — ``st2 driver pi|omp replay``: captured frames through the same consumer.

Harness-neutral: it names no harness; the driver packages name it.
"""
