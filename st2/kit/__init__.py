"""The delegation kit, in one package: the one ``DELEGATION_KIT_*`` knob table and
its reader, the cores of the delegation hooks (:mod:`.delegation`; the hooks themselves are
Claude Code's, :mod:`st2.drivers.claude.hooks`), the usage budget (:mod:`.usage`), the
commit-shape gate over gate tampering, the tier-explicit gate and its generator, the model
verdict, the foreign-vendor run with its keyed verdict (:mod:`.foreign`), the wait probe, and the
templates and their installer.

Each arm is an ``st2`` verb; the README's "Delegation kit" section maps arm to verb. The knob
table, the hooks' cores and the usage budget are standard library only (hot paths import them).

- :mod:`.agent_tiers` — the tier binding projected into agent definitions.
- :mod:`.arm_knobs` — the resolved knobs for a kit arm, or its findings printed one per line.
- :mod:`.foreign_tables` — the foreign adapter tables, read from resolved knobs, and their table
  validator (the DELEGATION_KIT_FOREIGN_* rows).
- :mod:`.gate_output` — st2's gate library: the gate output contract every st2 gate speaks.
- :mod:`.gate_registry` — st2's gate registry: the equivalent of gate-sdk's gates.list and gates dir.
- :mod:`.gate_tamper` — ``st2 check gate-tamper [--fixture <dir>]``: the commit-shape gate over gate
  tampering (docs/kit.md §Gate tamper).
- :mod:`.install` — ``st2 kit init [--] [<project-dir>]``: install the delegation kit into a
  project.
- :mod:`.knob_documents` — ``st2 emit knob-roster`` and ``st2 emit knob-values NAME``: the knob
  table as a document.
- :mod:`.knobs` — the one ``DELEGATION_KIT_*`` knob resolution and the one knob-file reader.
- :mod:`.model_verdict` — ``st2 model-verdict [--expect <class>] [--] [<transcript.jsonl |
  session8>]``.
- :mod:`.transcript` — Claude Code session transcripts: where they live, how a key names one, and
  the model an assistant record ran on (what the model verdict reads).
- :mod:`.wait_probe` — ``st2 check wait-probe <subcommand> [args]``: the wait-primitive instrument.
- :mod:`.delegation` — delegation pieces st2 ships.
- :mod:`.foreign` — the foreign-vendor run.
- :mod:`.usage` — the usage budget: the usage.txt snapshot contract, its poll producer, the verdict
  that gates delegation on it, the sample history and its trend reporter.
"""
