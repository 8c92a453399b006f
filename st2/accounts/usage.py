"""The usage verbs on a declared account: `st2 usage verdict|poll|trend --account A`.

The front door (:data:`st2.front.table.ACCOUNT_CORES`) runs :func:`verdict` and :func:`trend`
instead of the kit's own cores when ``--account`` is among the words, and :func:`poll` for every
``st2 usage poll`` (the kit sits below the accounts and cannot enumerate them); each strips the
account words and runs the kit's core in the account's environment.

- :func:`account_words`: split ``--account A`` (and, only beside it, ``--catalog C``) off a usage
  verb's argv, before any ``--``. An argv without ``--account`` comes back untouched, so the
  verb's own grammar (and its refusal of ``--catalog``) is exactly today's.
- :func:`scoped_environ`: the environment the verb resolves its knobs in for that account
  (:func:`st2.accounts.scope.account_environ`), or :class:`AccountRefusal` with the one line
  that names the declared accounts.
- :func:`polled_accounts`: the declared accounts ``st2 usage poll`` without ``--account`` polls
  too: those naming their own ``DELEGATION_KIT_USAGE_FILE`` or a ``claude`` config location (an
  account that names neither shares the host's snapshot, which the host's own cycle writes).

The verdict is a hot path: nothing here imports the catalog parser until an account is named or
the accounts are enumerated. Standard library only (the catalog parser aside).
"""

from __future__ import annotations

import os

ACCOUNT_OPTION = "--account"
CATALOG_OPTION = "--catalog"
ACCOUNT_REFUSED = 2


class AccountRefusal(Exception):
    """The verb cannot run on the named account: its message is one line for stderr (exit 2)."""


def account_words(argv: list[str]) -> tuple[str | None, str | None, list[str]]:
    """``(account, catalog, rest)``: the ``--account`` value, the ``--catalog`` value given with
    it (None when absent) and the remaining words. Without ``--account`` before any ``--``,
    ``(None, None, argv)``. Raise :class:`AccountRefusal` when an option lacks its value."""
    words = list(argv)
    head = words[:words.index("--")] if "--" in words else words
    if not any(word == ACCOUNT_OPTION or word.startswith(ACCOUNT_OPTION + "=") for word in head):
        return None, None, words
    values: dict[str, str] = {}
    rest: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            rest.extend(words[index:])
            break
        option = next((name for name in (ACCOUNT_OPTION, CATALOG_OPTION)
                       if word == name or word.startswith(name + "=")), None)
        if option is None:
            rest.append(word)
            index += 1
            continue
        if word == option:
            if index + 1 >= len(words) or not words[index + 1] or words[index + 1] == "--":
                raise AccountRefusal(f"{option} takes a value")
            value, index = words[index + 1], index + 2
        else:
            value, index = word.partition("=")[2], index + 1
        if not value:
            raise AccountRefusal(f"{option} takes a value")
        if option in values:
            raise AccountRefusal(f"{option} given twice")
        values[option] = value
    return values.get(ACCOUNT_OPTION), values.get(CATALOG_OPTION), rest


def _accounts(catalog_root: str) -> dict:
    if not os.path.isfile(os.path.join(catalog_root, "catalog.kdl")):
        return {}
    from st2.accounts.scope import declared_accounts

    return declared_accounts(catalog_root)


def scoped_environ(account: str, catalog_option: str | None, environ=None):
    """The :class:`st2.kit.knobs.AccountEnviron` of the declared ``account`` of the catalog
    (``catalog_option``, else ``$CATALOG``, else the default). Raise :class:`AccountRefusal`
    naming the declared accounts when it is not one of them."""
    from st2.accounts.scope import account_environ
    from st2.catalog.location import catalog_root_text

    environ = os.environ if environ is None else environ
    root = catalog_root_text(catalog_option)
    accounts = _accounts(root)
    if account not in accounts:
        declared = ", ".join(sorted(accounts)) if accounts else "none"
        raise AccountRefusal(f"account {account!r} is not declared in {os.path.join(root, 'catalog.kdl')}"
                             f" (declared: {declared})")
    return account_environ(accounts[account], root, environ)


def polled_accounts(environ=None) -> list:
    """``[(name, environ)]`` of the declared accounts (``$CATALOG``'s catalog) that name their own
    snapshot or ``claude`` config location, in name order; empty when none are declared."""
    from st2.catalog.location import catalog_root_text

    environ = os.environ if environ is None else environ
    root = catalog_root_text(None)
    accounts = _accounts(root)
    if not accounts:
        return []
    from st2.accounts.scope import account_environ

    return [(name, account_environ(account, root, environ)) for name, account in sorted(accounts.items())
            if "DELEGATION_KIT_USAGE_FILE" in account.knobs or "claude" in account.config_dirs]


def _scoped(verb: str, argv: list[str]):
    """``(environ, rest)`` for a verb's argv, or ``(None, None)`` after writing the one-line refusal."""
    import sys

    try:
        account, catalog, rest = account_words(argv)
        return (scoped_environ(account, catalog) if account is not None else None), rest
    except AccountRefusal as refusal:
        sys.stderr.write(f"{verb}: {refusal}\n")
        return None, None


def verdict(argv: list[str]) -> int:
    """`st2 usage verdict --account A [--catalog C] …`: the kit's verdict on the account's
    snapshot with its thresholds and refresh command; an undeclared account exits 2."""
    from st2.kit.usage import verdict as kit_verdict

    environ, rest = _scoped("usage-verdict", argv)
    if rest is None:
        return ACCOUNT_REFUSED
    return kit_verdict.main(rest, environ)


def trend(argv: list[str]) -> int:
    """`st2 usage trend --account A [--catalog C] …`: the account's sample history."""
    from st2.kit.usage import trend as kit_trend

    environ, rest = _scoped("usage-trend", argv)
    if rest is None:
        return ACCOUNT_REFUSED
    return kit_trend.main(rest, environ)


def _usage_file(environ) -> str | None:
    from st2.kit.usage import knobs as knob_table

    try:
        config = knob_table.resolve(environ)
    except knob_table.KnobError:
        return None
    return knob_table.usage_paths(config, environ).usage_file


def poll(argv: list[str]) -> int:
    """`st2 usage poll [--account A [--catalog C]] [--timeout SECONDS]`. With ``--account``, that
    account's cycle alone. Without it, the host's cycle (byte-identical to the kit's), then one
    per account of :func:`polled_accounts` whose snapshot is not one already written this run,
    its lines led by ``usage-poll: account <name>: ``; the exit status is the worst of them. A
    process already running on an account (``ST2_ACCOUNT`` set: its environment names that
    account's snapshot, and its refresh command must not poll the whole fleet's) runs its own
    cycle only."""
    import sys

    from st2.kit.usage import poll as kit_poll

    environ, rest = _scoped("usage-poll", argv)
    if rest is None:
        return ACCOUNT_REFUSED
    if environ is not None:
        return kit_poll.main(rest, environ)
    try:
        timeout = kit_poll.parse_arguments(rest)
    except ValueError:
        return kit_poll.main(rest)  # the kit's own refusal: nothing is polled
    status = kit_poll.main(rest)
    try:
        accounts = polled_accounts()
    except Exception as error:  # catalog.kdl's own diagnostics are `st2 validate`'s; never a traceback
        sys.stderr.write(f"usage-poll: the declared accounts were not read ({error.__class__.__name__})\n")
        return max(status, 1)
    if not accounts:
        return status
    from st2.delivery.budget import ACCOUNT_VARIABLE

    if os.environ.get(ACCOUNT_VARIABLE):
        return status   # a seat's own refresh: its account's snapshot only
    written = {_usage_file(os.environ)}
    for name, scoped in accounts:
        usage_file = _usage_file(scoped)
        if usage_file is not None and usage_file in written:
            continue  # one snapshot, one cycle
        written.add(usage_file)
        status = max(status, kit_poll.cycle(scoped, timeout, f"usage-poll: account {name}: "))
    return status
