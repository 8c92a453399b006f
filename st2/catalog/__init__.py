"""The catalog on disk: where everything lives in it, strict discovery of its seats and principals,
the name grammar, which catalog and host a command acts on, and what a replication engine carries
between hosts (and leaves behind in it).

- :mod:`.conflicts` — find the conflict copies a replication engine left in a catalog.
- :mod:`.discovery` — strict discovery of the seats and principals a catalog declares.
- :mod:`.engine_files` — the files a replication engine makes inside a catalog it carries: never
  st2's records.
- :mod:`.layout` — where everything lives in a catalog.
- :mod:`.location` — which catalog and which host a command acts on.
- :mod:`.mailboxes` — whether a seat's or principal's mailbox directories are real.
- :mod:`.names` — the name grammar of hosts, identities and principals: the directory names under
  ``agents/<host>/<identity>`` and ``principals/<host>/<name>``.
- :mod:`.seat_watch` — mutation-only wake-ups on one seat's ``resources/inbox`` and ``status`` only,
  for the DING notifier and a native driver's delivery pump.
- :mod:`.sync_rules` — the rules a replication engine (Syncthing, rsync, unison) needs to carry a
  catalog between hosts.
"""
