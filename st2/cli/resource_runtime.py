"""`st2 resource-runtime SCHEME` — parsing glue over :func:`st2.resources.runtime.main`: a
built-in resource provider runtime (``file``, ``git`` or ``cmd``), launched by the supervisor as a
seat's host task with ``ST2_RESOURCE_SOCKET`` set; nobody needs to run it by hand."""

from __future__ import annotations

import click


@click.command("resource-runtime")
@click.argument("scheme")
def resource_runtime(scheme: str) -> int:
    """Serve one built-in resource provider on the socket the supervisor names."""
    from st2.resources.runtime import main

    raise SystemExit(main(scheme))
