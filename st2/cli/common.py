"""Options every catalog-reading verb shares. Parsing glue only."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import click

from st2.catalog.location import CatalogLocation, resolve_catalog_root, resolve_host


NO_CATALOG_EXIT = 1


def catalog_options(function: Callable | None = None, *, must_exist: bool = True) -> Callable:
    """Add ``--catalog`` / ``--host`` to a verb and pass a resolved :class:`CatalogLocation`
    as the ``location`` keyword. A value given on the verb wins over one given on ``st2``.

    With ``must_exist`` (the default) a catalog root that is not a directory ends the verb with
    one line on stderr and exit :data:`NO_CATALOG_EXIT` before it runs anything; verbs whose own
    report names a missing catalog (validate, tasks, doctor, up) or that may precede it (service)
    pass ``must_exist=False``."""
    if function is None:
        return functools.partial(_catalog_options, must_exist=must_exist)
    return _catalog_options(function, must_exist=must_exist)


def _catalog_options(function: Callable, *, must_exist: bool) -> Callable:
    @click.option("--catalog", "catalog_option", default=None, help="Catalog root (default $CATALOG, then the XDG state default).")
    @click.option("--host", "host_option", default=None, help="Host name (default: the short hostname).")
    @functools.wraps(function)
    def wrapper(*args, catalog_option: str | None, host_option: str | None, **kwargs):
        context = click.get_current_context()
        root_obj = context.find_root().obj or {}
        catalog = catalog_option or root_obj.get("catalog")
        host = host_option or root_obj.get("host")
        location = CatalogLocation(root=resolve_catalog_root(catalog), host=resolve_host(host))
        if must_exist and not location.root.is_dir():
            click.echo(f"{context.command_path}: no catalog at {location.root} "
                       "(pass --catalog or set $CATALOG; `st2 demo` builds one)", err=True)
            context.exit(NO_CATALOG_EXIT)
        kwargs["location"] = location
        return function(*args, **kwargs)

    return wrapper


def verb_host() -> str | None:
    """The host named by ``--host`` on the running verb itself, None otherwise. A verb that lists
    every host's seats narrows to it; ``st2 --host H <verb>`` only says which host this is."""
    return click.get_current_context().params.get("host_option") or None


def exit_with(status: int) -> None:
    """End the verb with ``status`` without printing anything more."""
    click.get_current_context().exit(status)


__all__ = ["catalog_options", "exit_with", "verb_host", "CatalogLocation", "Path"]
