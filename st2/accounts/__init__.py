"""Model accounts: declared per catalog, judged per account, moved between, admitted per account
(docs/accounts.md).

- :mod:`.scope` — what running on an account means for an environment: the usage side's knobs,
  a seat's config locations and ``ST2_ACCOUNT``.
- :mod:`.usage` — `st2 usage verdict|poll|trend --account A`, and the poller over every account.
- :mod:`.budget` — the supervisor's publication of each account's budget record.
- :mod:`.placement` — which account a seat runs on (failover), and when a running seat moves.
- :mod:`.carry` — carrying a seat's conversation to another config location, where the lab proved it.
- :mod:`.admission` — admitting the starts of an account's seats, spaced, with a visible queue.
"""
