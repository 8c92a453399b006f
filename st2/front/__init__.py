"""The click-free front door and its one argv-shape parser.

Verbs that run many times an hour (hooks, the status-line tee, a send) or once per seat for the
seat's whole life (a session wrapper, a DING stub the seat host forks) run without click: the
table :mod:`st2.front.table` maps each such verb to the shape of words it accepts and the core
function that runs it, and routes a command line through it; anything outside a verb's shape is
left to the click CLI (:mod:`st2.cli`), whose commands for the same verbs are checked against
the table's shapes (tests/front/test_table.py). This module is the parser those shapes are read
with, and the kit arms' grammar too.

A :class:`Shape` names the words a verb accepts after its verb words: value options
(``--name value``, and ``--name=value`` where ``equals``), their short aliases, bare flags,
options whose value must be a plain decimal number, options whose value must be one of a few
choices, options that must be given, positionals (``leading`` ones first, then up to
``positionals`` anywhere), and what ``--`` means (a required, non-empty ``tail`` of words passed
on untouched; an ``escape`` after which every word is a positional (``escape="first"``: only
when ``--`` is the first word after the leading ones); or, with neither, a word
outside the shape). Unless a shape allows ``repeats`` an option or flag given twice is outside
it; unless it allows ``dash_values`` so is a value starting with ``-``; a dash-led word naming no
option is outside it (``-`` itself a positional only where ``lone_dash``).

:func:`parse` returns the words' :class:`Parsed` reading or raises :class:`ShapeRefusal` with a
one-line reason: the front door takes a refusal as "not this route, let click handle it"; the
kit arms (:func:`parse_kit`) print it. Standard library only.

- :mod:`.table` — the one table of verb, accepted shape and core, the routing through it, and the
  hot paths' dispatch and help.
- :mod:`.verbs` — the cores of ``st2 message send`` and ``st2 agents`` as the table runs them.
"""

from __future__ import annotations


class ShapeRefusal(ValueError):
    """The argv is not of the shape; the message is one line."""


class Shape:
    """The accepted shape of one verb's words (see the module docstring). ``choices`` maps an
    option to its allowed values, or to a function returning them (called only when the option
    is given, so a verb's vocabulary module is imported only then)."""

    __slots__ = ("options", "flags", "aliases", "numbers", "choices", "required", "positionals", "leading",
                 "equals", "tail", "escape", "repeats", "dash_values", "lone_dash")

    def __init__(self, options=(), flags=(), *, aliases=None, numbers=(), choices=None, required=(),
                 positionals=0, leading=0, equals=True, tail=False, escape=False, repeats=False,
                 dash_values=False, lone_dash=False) -> None:
        self.options, self.flags, self.aliases = tuple(options), tuple(flags), dict(aliases or {})
        self.numbers, self.choices, self.required = tuple(numbers), dict(choices or {}), tuple(required)
        self.positionals, self.leading = positionals, leading   # positionals None: any number
        self.equals, self.tail, self.escape = equals, tail, escape
        self.repeats, self.dash_values, self.lone_dash = repeats, dash_values, lone_dash


class Parsed:
    """One reading of a verb's words: ``values`` (option → value, under the long name),
    ``flags`` seen, ``positionals``, and the ``tail`` after ``--`` (None without one)."""

    __slots__ = ("values", "flags", "positionals", "tail")

    def __init__(self, values: dict[str, str], flags: set[str], positionals: list[str], tail: list[str] | None) -> None:
        self.values, self.flags, self.positionals, self.tail = values, flags, positionals, tail


def plain_decimal(text: str) -> bool:
    """``text`` is ASCII digits with at most one ``.`` between digits (``1``, ``0.5``)."""
    head, dot, tail = text.partition(".")
    return head.isdigit() and head.isascii() and (not dot or (tail.isdigit() and tail.isascii()))


def parse(words: list[str], shape: Shape) -> Parsed:
    """Return the reading of ``words`` in ``shape``. Raise :class:`ShapeRefusal` (one line)."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    positionals: list[str] = []
    index = 0
    for _ in range(shape.leading):
        if index >= len(words) or words[index].startswith("-"):
            raise ShapeRefusal(f"needs {shape.leading} leading argument(s)")
        positionals.append(words[index])
        index += 1
    tail = None
    escaped = False
    while index < len(words):
        word = words[index]
        index += 1
        if escaped:
            positionals.append(word)
        elif word == "--" and shape.tail:
            tail = words[index:]
            if not tail:
                raise ShapeRefusal("nothing after --")
            break
        elif word == "--" and (shape.escape is True or (shape.escape == "first" and index == shape.leading + 1)):
            escaped = True
        elif word in shape.flags:
            if word in flags and not shape.repeats:
                raise ShapeRefusal(f"{word} given twice")
            flags.add(word)
        else:
            name, equals, value = word.partition("=") if shape.equals and word.startswith("--") else (word, "", "")
            if name in shape.options or name in shape.aliases:
                if not equals:
                    if index >= len(words):
                        raise ShapeRefusal(f"{name} needs a value")
                    value = words[index]
                    index += 1
                name = shape.aliases.get(name, name)
                if name in values and not shape.repeats:
                    raise ShapeRefusal(f"{name} given twice")
                if value.startswith("-") and not shape.dash_values:
                    raise ShapeRefusal(f"{name} {value}: a value starting with -")
                if name in shape.numbers and not plain_decimal(value):
                    raise ShapeRefusal(f"{name} {value}: not a plain decimal number")
                values[name] = value
            elif word.startswith("-") and not (word == "-" and shape.lone_dash):
                raise ShapeRefusal(f"unrecognized option: {word}")
            else:
                positionals.append(word)
    if shape.tail and tail is None:
        raise ShapeRefusal("no -- before the passed-on words")
    if shape.positionals is not None and len(positionals) > shape.leading + shape.positionals:
        raise ShapeRefusal(f"unexpected argument: {positionals[shape.leading + shape.positionals]}")
    for name in shape.required:
        if name not in values:
            raise ShapeRefusal(f"{name} is required")
    for name, allowed in shape.choices.items():
        if name in values and values[name] not in (allowed() if callable(allowed) else allowed):
            raise ShapeRefusal(f"{name} {values[name]}: not one of the choices")
    return Parsed(values, flags, positionals, tail)


KIT_ARM = dict(positionals=None, escape=True, repeats=True, dash_values=True, lone_dash=True)


def parse_kit(argv: list[str], flags: tuple[str, ...] = (),
              options: tuple[str, ...] = ()) -> tuple[set[str], dict[str, str], list[str]]:
    """The kit arms' grammar: any positionals, ``--`` ending option processing, repeats (the
    last value wins) and dash-led values allowed, ``-`` a positional. Return (flags seen,
    option values, positionals). Raise :class:`ShapeRefusal`."""
    parsed = parse(list(argv), Shape(options, flags, **KIT_ARM))
    return parsed.flags, parsed.values, parsed.positionals
