"""Every click command named by a parsed row of the front door's table (st2/front/table.py)
takes the same words as the row's shape: the same value options under the same spellings
(aliases included), the same flags, the same choices, numbers where click takes a float, and the
same positionals and ``--`` tail. So no verb is defined twice: a word accepted on one route and
not the other fails here, whichever side it was added to. The root shape is checked against the
``st2`` group's own options the same way."""

from __future__ import annotations

import click

from st2.cli import cli
from st2.front import Shape
from st2.front.table import RAW, ROOT, ROUTES, session_routes

# Options of a click command that its row's shape deliberately leaves to click. The supervisor
# launches a DING task by runtime id, never by --identity; `st2 --version` is click's.
LEFT_TO_CLICK = {("ding",): {"--identity"}, (): {"--version"}}


def click_command(verb: tuple[str, ...]) -> click.Command:
    context = click.Context(cli)
    command = cli.get_command(context, verb[0])
    for word in verb[1:]:
        command = command.get_command(context, word)
    return command


def differences(shape: Shape, command: click.Command, left_to_click: set[str] = frozenset()) -> list[str]:
    """What ``command`` and ``shape`` accept differently, one line each (empty when the same)."""
    found = []
    shape_options = {name: {name, *(alias for alias, target in shape.aliases.items() if target == name)}
                     for name in shape.options}
    click_options, click_flags, arguments = {}, set(), []
    for parameter in command.params:
        if isinstance(parameter, click.Argument):
            arguments.append(parameter)
            continue
        spellings = set(parameter.opts) | set(parameter.secondary_opts)
        if spellings & set(left_to_click):
            continue
        if parameter.is_flag:
            click_flags |= spellings
            continue
        name = max(spellings, key=len)
        click_options[name] = (spellings, parameter.type)
    for name in sorted(set(shape_options) | set(click_options)):
        if name not in click_options:
            found.append(f"{name}: the shape takes it, click does not")
        elif name not in shape_options:
            found.append(f"{name}: click takes it, the shape does not")
        else:
            spellings, kind = click_options[name]
            if spellings != shape_options[name]:
                found.append(f"{name}: spelled {sorted(spellings)} by click, "
                             f"{sorted(shape_options[name])} by the shape")
            choices = shape.choices.get(name)
            choices = tuple(choices() if callable(choices) else choices or ())
            if tuple(getattr(kind, "choices", ())) != choices:
                found.append(f"{name}: choices {list(getattr(kind, 'choices', ()))} in click, "
                             f"{list(choices)} in the shape")
            if (kind == click.FLOAT) != (name in shape.numbers):
                found.append(f"{name}: a number on one side only")
    for flag in sorted(set(shape.flags) ^ click_flags):
        found.append(f"{flag}: a flag {'of the shape' if flag in shape.flags else 'of click'} only")
    single = sum(1 for argument in arguments if argument.nargs == 1)
    tail = any(argument.nargs == -1 and isinstance(argument.type, type(click.UNPROCESSED)) for argument in arguments)
    if single != shape.leading + (shape.positionals or 0):
        found.append(f"positionals: {single} in click, {shape.leading + (shape.positionals or 0)} in the shape")
    if tail != shape.tail:
        found.append(f"-- tail: {'click' if tail else 'the shape'} only")
    return found


def test_every_parsed_row_takes_the_words_its_click_command_takes() -> None:
    parsed = {verb: row for verb, row in {**ROUTES, **session_routes()}.items() if row.shape is not RAW}
    assert {("message", "send"), ("agents",), ("ding",), ("driver", "claude-session")} <= set(parsed)
    problems = {verb: differences(row.shape, click_command(verb), LEFT_TO_CLICK.get(verb, set()))
                for verb, row in parsed.items()}
    assert {verb: found for verb, found in problems.items() if found} == {}


def test_the_root_shape_is_the_st2_group_s() -> None:
    assert differences(ROOT, cli, LEFT_TO_CLICK[()]) == []


def test_an_option_added_to_one_side_only_is_named() -> None:
    """The firing twin: one option more on either side, a choice more, an alias less, a flag
    turned option, are each named."""
    row = ROUTES[("message", "send")].shape
    command = click_command(("message", "send"))

    def shape_with(**changes) -> Shape:
        fields = {name: getattr(row, name) for name in Shape.__slots__}
        fields.update(changes)
        return Shape(**fields)

    extra = click.Command("send", params=[*command.params, click.Option(["--urgent"], default=None)])
    assert differences(row, extra) == ["--urgent: click takes it, the shape does not"]
    assert differences(shape_with(options=row.options + ("--urgent",)), command) == [
        "--urgent: the shape takes it, click does not"]
    assert differences(shape_with(choices={"--priority": ("low", "normal", "high", "now")}), command) == [
        "--priority: choices ['low', 'normal', 'high'] in click, ['low', 'normal', 'high', 'now'] in the shape"]
    assert differences(shape_with(aliases={}), command) == [
        "--message: spelled ['--message', '-m'] by click, ['--message'] by the shape"]
    assert differences(shape_with(flags=(), options=row.options + ("--json",)), command) == [
        "--json: the shape takes it, click does not", "--json: a flag of click only"]
    assert differences(shape_with(positionals=0), command) == ["positionals: 1 in click, 0 in the shape"]
