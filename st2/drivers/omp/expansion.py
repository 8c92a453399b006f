"""The ``omp { … }`` driver block: :mod:`st2.drivers.channel.expansion`'s block (pi's too) with omp's names —
``executable`` defaults to ``omp`` and the argv runs ``st2 driver omp-session``, whose launch gate
refuses a build outside the admitted minor series."""

from __future__ import annotations

from st2.drivers.channel.expansion import expand_block


def expand(declaration, host: str, st2_command: list[str]):
    return expand_block(declaration, host, st2_command, "omp", "omp-session")
