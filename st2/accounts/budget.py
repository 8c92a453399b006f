"""Publishing each declared account's budget record, which the delivery hold judges
(:mod:`st2.delivery.budget` reads it): the supervisor resolves every account's usage knobs once a
pass (:func:`st2.accounts.scope.account_environ`) and writes what changed.
"""

from __future__ import annotations

import json
import os

from st2.delivery.budget import RECORD_LIMIT, record_bytes
from st2.runtime import layout


def resolved_record(account, catalog_root, environ=None, problems: list | None = None) -> dict | None:
    """The record of ``account`` as its knobs resolve now (:func:`st2.accounts.scope.account_environ`),
    or None (a line appended to ``problems``) when they do not resolve."""
    from st2.accounts.scope import account_environ
    from st2.kit.usage import knobs as knob_table

    environment = account_environ(account, catalog_root, environ)
    try:
        config = knob_table.resolve(environment)
    except knob_table.KnobError as error:
        if problems is not None:
            problems.append(f"account {account.name}: malformed knob configuration: {'; '.join(error.findings)}")
        return None
    return json.loads(record_bytes(account.name, account.hold_on_pause,
                                   knob_table.usage_paths(config, environment).usage_file,
                                   config.scalar("DELEGATION_KIT_PAUSE_PCT"),
                                   config.scalar("DELEGATION_KIT_PAUSE_PCT_7D"),
                                   config.integer("DELEGATION_KIT_STALE_AGE")))


def publish(scope, accounts: dict, catalog_root, environ=None) -> list[str]:
    """Write every declared account's record (only when its bytes change) and remove the records
    of accounts no longer declared. Return one line per account whose knobs do not resolve (its
    record is removed: an account whose thresholds are unknown holds nothing)."""
    from pathlib import Path

    from st2.fs.atomic import publish as publish_file
    from st2.fs.read import read_bounded

    directory = os.path.dirname(layout.account_budget(str(scope), "x"))
    problems: list[str] = []
    wanted = set()
    for name, account in sorted(accounts.items()):
        path = layout.account_budget(str(scope), name)
        body = resolved_record(account, catalog_root, environ, problems)
        if body is None:
            continue
        wanted.add(path)
        data = record_bytes(name, body["holdOnPause"], body["usageFile"], body["pausePct"], body["pausePct7d"],
                            body["staleAge"])
        try:   # bounded, never following a symlink, never waiting on a FIFO: anything else is replaced
            if read_bounded(path, RECORD_LIMIT, follow_symlinks=False) == data:
                continue
        except OSError:
            pass
        os.makedirs(directory, mode=0o700, exist_ok=True)
        staging = str(layout.staging(Path(str(scope))))
        os.makedirs(staging, mode=0o700, exist_ok=True)
        publish_file(path, data, staging)
    if not accounts and not os.path.isdir(directory):
        return problems
    try:
        names = os.listdir(directory)
    except OSError:
        names = []
    for entry in names:
        path = os.path.join(directory, entry)
        if entry.endswith(".json") and path not in wanted:
            try:
                os.unlink(path)
            except OSError:
                pass
    return problems


