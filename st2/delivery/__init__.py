"""Native delivery shared by the pumps that drive a harness's own API (Codex app-server, opencode
server).

- :mod:`.ledger` — the durable delivery ledger, with one profile per harness.
- :mod:`.legacy_state` — the one-time carry of a pre-ledger ``delivery-state.json`` into the
  ledger as an asserted entry.
- :mod:`.batch` — the bounded, escaped mail batch every native pump delivers (Codex turn input,
  opencode prompt).
- :mod:`.pump` — what every native delivery pump shares over its ledger
  (:mod:`st2.delivery.ledger`).
- :mod:`.hold` — the one delivery-hold predicate of a seat (a fresh dnd; an exhausted account
  that says hold-on-pause), which DING and both native pumps consult.
- :mod:`.budget` — an account's budget record as the deliverers read it, and the hold it makes.
"""
