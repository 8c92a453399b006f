"""Options every catalog-reading verb shares. Parsing glue only."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

import click

from st2.catalog.location import CatalogLocation, resolve_catalog_root, resolve_host


def catalog_options(function: Callable) -> Callable:
    """Add ``--catalog`` / ``--host`` to a verb and pass a resolved :class:`CatalogLocation`
    as the ``location`` keyword. A value given on the verb wins over one given on ``st2``."""

    @click.option("--catalog", "catalog_option", default=None, help="Catalog root (default $CATALOG, then the XDG state default).")
    @click.option("--host", "host_option", default=None, help="Host name (default: the short hostname).")
    @functools.wraps(function)
    def wrapper(*args, catalog_option: str | None, host_option: str | None, **kwargs):
        context = click.get_current_context()
        root_obj = context.find_root().obj or {}
        catalog = catalog_option or root_obj.get("catalog")
        host = host_option or root_obj.get("host")
        kwargs["location"] = CatalogLocation(
            root=resolve_catalog_root(catalog), host=resolve_host(host)
        )
        return function(*args, **kwargs)

    return wrapper


def exit_with(status: int) -> None:
    """End the verb with ``status`` without printing anything more."""
    click.get_current_context().exit(status)


__all__ = ["catalog_options", "exit_with", "CatalogLocation", "Path"]
