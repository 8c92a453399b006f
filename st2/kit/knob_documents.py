"""``st2 emit knob-roster`` and ``st2 emit knob-values NAME``: the knob table as a document.

* knob-roster prints one line per knob of the table, in the table's order:
  ``<NAME> scalar <default>`` or ``<NAME> indexed (<element> …)``, a derived default rendered
  as its literal (``${DELEGATION_KIT_PAUSE_PCT}``), an empty scalar as ``""``. It reads no
  configuration, so it answers on a machine whose knob file is broken.
* knob-values prints NAME's resolved value — a scalar on one line, an indexed knob one element
  per line (nothing for an empty one) — after the whole table validator has passed.

Exit 0 with the document, 2 on a refusal (an unknown NAME, a malformed configuration with every
finding on stderr, a bad argv); never 1.
"""

from __future__ import annotations

import os
import sys

from st2.kit import knobs as knob_table
import st2.front as argv_grammar
from st2.kit.arm_knobs import resolve_knobs


def roster_lines() -> list[str]:
    lines = []
    for name, knob in knob_table.TABLE.items():
        if knob.indexed:
            lines.append(f"{name} indexed ({' '.join(knob.default)})")
        else:
            lines.append(f"{name} scalar {knob.default or chr(34) * 2}")
    return lines


def roster(argv: list[str], out=None, err=None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        _, _, positionals = argv_grammar.parse_kit(argv)
        if positionals:
            raise argv_grammar.ShapeRefusal(f"unexpected argument: {positionals[0]}")
    except argv_grammar.ShapeRefusal as refusal:
        err.write(f"knob-roster: {refusal}\nusage: st2 emit knob-roster\n")
        return 2
    out.write("".join(line + "\n" for line in roster_lines()))
    return 0


def values(argv: list[str], environ=None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    usage = "usage: st2 emit knob-values [--] <NAME>"
    try:
        _, _, positionals = argv_grammar.parse_kit(argv)
        if len(positionals) != 1:
            raise argv_grammar.ShapeRefusal("takes exactly one knob name")
    except argv_grammar.ShapeRefusal as refusal:
        err.write(f"knob-values: {refusal}\n{usage}\n")
        return 2
    name = positionals[0]
    knob = knob_table.TABLE.get(name)
    if knob is None:
        err.write(f"knob-values: {name} is not a knob of the table (st2 emit knob-roster lists them)\n")
        return 2
    config = resolve_knobs(environ, err, "knob-values")
    if config is None:
        return 2
    if knob.indexed:
        out.write("".join(element + "\n" for element in config.indexed(name)))
    else:
        out.write(config.scalar(name) + "\n")
    return 0
