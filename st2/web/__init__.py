"""`st2 web`: the fleet's web face, over the same live fleet as `st2 top` (:mod:`st2.top.live`).

- :mod:`.access` — the per-host secret, pairing links, session cookies, CSRF tokens, the throttle.
- :mod:`.pages` — the server-rendered, escaped HTML.
- :mod:`.app` — the Starlette application: routes, the live stream, the actions.
- :mod:`.asks` — what a blocked seat waits for: its wrapper's asks, or its pane and `st2 attach`.
- :mod:`.metrics` — the Prometheus collector over the live fleet, and the textfile writer.
- :mod:`.serve` — the listen rules, the one uvicorn server, the pairing link's text.
- :mod:`.push` — Web Push: the host's VAPID key, the browsers' subscriptions, the pusher.
"""
