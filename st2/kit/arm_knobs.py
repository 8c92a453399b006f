"""The kit arms' knob resolution: the resolved knobs, or every finding said on one line each.
Standard library and the knob table only."""

from __future__ import annotations


def resolve_knobs(environ, err, name: str):
    """The resolved knobs, or None after writing every finding as ``<name>: <finding>`` to
    ``err`` (the caller exits 2: a broken machine gates nothing)."""
    from st2.kit import knobs as knob_table

    try:
        return knob_table.resolve(environ)
    except knob_table.KnobError as error:
        for finding in error.findings:
            err.write(f"{name}: {finding}\n")
        return None
