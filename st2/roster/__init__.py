"""The roster behind `st2 agents`: one row per discovered seat, joining declared presence,
desired lifecycle, observed harness state, native-driver diagnostics and harness context as
independent axes.

- :mod:`.build` — discover the catalog and build every roster row.
- :mod:`.human` — the human `st2 agents` line.
- :mod:`.row` — build roster rows from a discovered catalog.
- :mod:`.verb` — the body of ``st2 agents``, shared by the click command (:mod:`st2.cli.agents`) and
  its click-free route (:mod:`st2.front.verbs`).
- :mod:`.wire` — the stable JSON of `st2 agents --json [--enrich]`.
"""
