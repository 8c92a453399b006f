"""The primitives every layer may import: standard library only, importing nothing of st2.

- :mod:`.clock` — the time seam: wall milliseconds stamp records, monotonic seconds measure durations.
- :mod:`.digest` — SHA-256 without loading OpenSSL.
- :mod:`.harnesses` — the harnesses st2 drives: the one table every list of harnesses derives from,
  and the contract each driver package declares.
- :mod:`.knob_rows` — the ``DELEGATION_KIT_*`` knob table's rows: every knob the kit declares, its
  default and validator (resolved by :mod:`st2.kit.knobs`; an account scopes the usage ones).
- :mod:`.terminal_text` — text safe to print to a terminal: the one escaping rule for names,
  diagnostics, records and log lines that st2 prints.
"""
