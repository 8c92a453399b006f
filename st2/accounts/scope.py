"""What running on a declared account means for a process's environment (docs/accounts.md).

- :func:`account_environ`: the environment the usage side (`st2 usage verdict|poll|trend
  --account A`, the poller, `st2 top`'s header, the supervisor's budget record) resolves knobs
  in for account A: the caller's environment, then the account's config locations (so the
  derived usage file of a ``claude`` config location is that location's ``usage.txt``), then its
  scoped knobs (:class:`st2.kit.knobs.AccountEnviron`).
- :func:`seat_environment`: what a seat's tasks get on that account: ``ST2_ACCOUNT``, each
  harness's config variable (the driver's ``CONFIG_ENV``) set to the account's location, and the
  account's scalar usage knobs, so the seat's own hooks write and judge the account's snapshot.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

from st2.delivery.budget import ACCOUNT_VARIABLE  # noqa: F401 - the variable's one spelling, below the drivers


def _config_variables(account, catalog_root) -> dict[str, str]:
    from st2.drivers import config_env

    variables = {}
    for harness in account.config_dirs:
        variable = config_env(harness)
        if variable is not None:
            variables[variable] = account.config_dir(harness, catalog_root)
    return variables


def _own_snapshot(account, catalog_root) -> dict[str, str]:
    """The snapshot and credentials paths of an account that has its own (a scoped
    ``DELEGATION_KIT_USAGE_FILE`` or a ``claude`` config location) and does not scope them: the
    paths the empty-means-derive fill gives from *its* location, so a host-wide
    ``DELEGATION_KIT_USAGE_FILE``/``DELEGATION_KIT_CRED_FILE`` in the caller's environment never
    makes the account read (or poll with) the host's."""
    import os

    usage_file = account.knobs.get("DELEGATION_KIT_USAGE_FILE")
    claude = account.config_dir("claude", catalog_root)
    if not usage_file and claude is None:
        return {}
    derived = {}
    if not usage_file:
        usage_file = derived["DELEGATION_KIT_USAGE_FILE"] = os.path.join(claude, "usage.txt")
    if not account.knobs.get("DELEGATION_KIT_CRED_FILE"):
        derived["DELEGATION_KIT_CRED_FILE"] = os.path.join(os.path.dirname(os.path.expanduser(usage_file)),
                                                           ".credentials.json")
    return derived


def account_environ(account, catalog_root, environ: Mapping[str, str] | None = None):
    """The environment knobs resolve in for ``account`` (a :class:`st2.declarations.accounts.Account`)."""
    import os

    from st2.kit.knobs import TABLE, AccountEnviron

    base = dict(os.environ if environ is None else environ)
    base.update(_config_variables(account, catalog_root))
    base.update(_own_snapshot(account, catalog_root))
    indexed = {}
    for name, value in account.knobs.items():
        if TABLE[name].indexed:
            indexed[name] = tuple(value)
        else:
            base[name] = value
    return AccountEnviron(base, account.name, indexed)


def seat_environment(account, catalog_root) -> dict[str, str]:
    """The variables every task of a seat on ``account`` carries (they win over the seat's own
    ``env``: the account decides where the harness's credentials live)."""
    from st2.kit.knobs import TABLE

    variables = {ACCOUNT_VARIABLE: account.name}
    variables.update(_config_variables(account, catalog_root))
    variables.update(_own_snapshot(account, catalog_root))
    for name, value in account.knobs.items():
        if not TABLE[name].indexed:
            variables[name] = value
    return variables


def declared_accounts(catalog_root) -> dict:
    """The accounts ``catalog.kdl`` declares (name -> Account); empty when none are or the file
    does not load (its own diagnostics say why)."""
    from st2.declarations.catalog import load_catalog_declaration

    declaration, _ = load_catalog_declaration(catalog_root)
    return dict(declaration.accounts or {})
