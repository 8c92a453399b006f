"""Native delivery shared by the pumps that drive a harness's own API (Codex app-server, opencode
server): the durable delivery ledger (:mod:`st2.delivery.ledger`) with one profile per harness."""
