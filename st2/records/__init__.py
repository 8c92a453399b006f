"""One module per record kind a seat's directory holds (seed 004): its schema, constants, pure
reader projection and writer, and the strict decoding they share.

- :mod:`.decoding` — strict JSON decoding shared by the JSON record readers.
- :mod:`.driver_diagnostic` — native-driver diagnostics: the ``driver-diagnostic`` record (seed 003
  "Native-driver diagnostics are bounded and recoverable").
- :mod:`.harness_context` — harness context: the numeric ``harness-context`` record (seed 000; seed
  003 "Harness context discipline").
- :mod:`.harness_state` — observed harness state: the ``harness-state`` record (seed 004 §A, §D, §E;
  seed 003 "Observed harness state discipline").
- :mod:`.placement` — where a seat's records are published from (seed 000 §Placement and transport).
- :mod:`.status` — declared presence: the ``status`` record (DESIGN.md §4, seed 003 "Agent-declared
  presence").
"""
