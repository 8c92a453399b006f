"""The DELEGATION_KIT_* knobs the usage budget reads, through st2's one knob table and reader
(:mod:`st2.kit.knobs`, shared with the delegation hooks so one knob file serves both), plus the usage
side's one empty-means-derive fill for its three paths.

Everything the table and the file grammar promise is :mod:`st2.kit.knobs`'s docstring; this module
re-exports that API under its historical names.

Standard library only: hot paths import this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from st2.kit.knobs import (  # noqa: F401 - re-exported: the usage side's historical names
    DEFAULT_ENDPOINT,
    DEFAULT_KNOB_FILE_NAME,
    KNOB_FILE,
    PREFIX,
    TABLE,
    Knob,
    KnobError,
    Knobs,
    home as _home,
    knob_file_path,
    parse_knob_file,
    resolve,
)


class UsagePaths:
    __slots__ = ("usage_file", "cred_file", "account_config")

    def __init__(self, usage_file: str, cred_file: str, account_config: str) -> None:
        self.usage_file = usage_file
        self.cred_file = cred_file
        self.account_config = account_config


def usage_paths(knobs: Knobs, environ: Mapping[str, str] | None = None) -> UsagePaths:
    """The one empty-means-derive fill for the three paths, read together.

    usage file: the knob, else ``<config-home>/usage.txt`` with config home = ``CLAUDE_CONFIG_DIR``
    when set non-empty, else ``~/.claude``. Credentials: the knob, else ``.credentials.json`` in
    the usage file's directory. Account config: the knob, else ``~/.claude.json``.
    """
    environ = os.environ if environ is None else environ
    home = _home(environ)
    usage_file = knobs.scalar("DELEGATION_KIT_USAGE_FILE")
    if not usage_file:
        claude_home = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
        usage_file = os.path.join(claude_home, "usage.txt")
    cred_file = knobs.scalar("DELEGATION_KIT_CRED_FILE") or os.path.join(
        os.path.dirname(usage_file), ".credentials.json"
    )
    account_config = knobs.scalar("DELEGATION_KIT_ACCOUNT_CONFIG") or os.path.join(home, ".claude.json")
    return UsagePaths(usage_file=usage_file, cred_file=cred_file, account_config=account_config)
