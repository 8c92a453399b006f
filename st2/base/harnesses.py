"""The harnesses st2 drives: the one table every list of harnesses derives from.

Each row names a harness and its driver package. The package declares the driver's contract as
constants (:data:`CONTRACT`), light to import; :mod:`st2.drivers` reads them and imports the
driver's heavy modules only when a lookup asks for one. The declaration model's typed blocks, the
record readers' accepted harness words, the wrapper verbs and their options, the DING screen
grammars and the delivery owners all come from here, so a new harness is one row in this table
and one new package.

The row order is the declaration model's (``claude, codex, pi, omp, opencode``): error texts list
the harnesses in it. :data:`SCREEN_DISPATCH_ORDER` is DING's positional dispatch order over the
drivers that maintain a screen grammar (on a row tie the later grammar wins,
:mod:`st2.drivers.screen`).

Imports only ``collections``: the declaration model and the record readers, which sit below the drivers, read
their harness words here.
"""

from __future__ import annotations

from collections import namedtuple


# A namedtuple from collections, not typing.NamedTuple: every hot path that reads a declaration or
# a record reaches this table, and importing typing costs ~4 ms of its start (docs/memory.md
# §Both install kinds).
class Driver(namedtuple("Driver", ("harness", "package"))):
    """One row: the ``harness`` word and its driver ``package`` (the dotted module name)."""

    __slots__ = ()


DRIVERS: tuple[Driver, ...] = (
    Driver("claude", "st2.drivers.claude"),
    Driver("codex", "st2.drivers.codex"),
    Driver("pi", "st2.drivers.pi"),
    Driver("omp", "st2.drivers.omp"),
    Driver("opencode", "st2.drivers.opencode"),
)

SCREEN_DISPATCH_ORDER: tuple[str, ...] = ("codex", "pi", "omp", "claude")

CONTRACT: tuple[str, ...] = (
    "HARNESS",            # the harness word, equal to the row's
    "OWNS_DELIVERY",      # True: the driver delivers mail natively and no DING may type into the seat
    "VERSION_GATE",       # "exact" / "minor": the launch gate admits SUPPORTED_VERSIONS so; None: no gate
    "SUPPORTED_VERSIONS",  # the exact builds or MAJOR.MINOR series the gate admits (() without a gate)
    "MEASURED_VERSIONS",  # the builds whose numbers the fixtures pin; a gate admits every one
    "SESSION_OPTIONS",    # the ``<harness>-session`` verb's options beyond the common four
    "SCREEN_GRAMMAR",     # the class name of the DING screen grammar in ``<package>.screen``, or None
    "SESSION_HELP",       # the summary of ``st2 driver <harness>-session --help``
    "CONFIG_ENV",         # the variable an account's ``config-dir`` sets (its config location), or None
)
"""The constants every driver package declares."""


def names() -> tuple[str, ...]:
    """The harness words, in the table's order."""
    return tuple(row.harness for row in DRIVERS)


def row(harness: str | None) -> Driver | None:
    """``harness``'s row, or None when st2 has no driver for it."""
    return next((entry for entry in DRIVERS if entry.harness == harness), None)
