"""One module per record kind a seat's directory holds: its schema, constants, pure
reader projection and writer, and the strict decoding they share.

- :mod:`.decoding` — strict JSON decoding shared by the JSON record readers.
- :mod:`.driver_diagnostic` — native-driver diagnostics: the ``driver-diagnostic`` record.
- :mod:`.harness_context` — harness context: the numeric ``harness-context`` record.
- :mod:`.harness_state` — observed harness state: the ``harness-state`` record.
- :mod:`.placement` — where a seat's records are published from (docs/records.md §Placement and replicated paths).
- :mod:`.status` — declared presence: the ``status`` record.
- :mod:`.usage_snapshot` — the usage.txt contract (the snapshot any producer writes) and the
  verdict's rule over one, which `st2 usage verdict` and an account's delivery hold both apply.
"""
