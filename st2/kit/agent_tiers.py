"""The tier binding projected into agent definitions (docs/kit.md §Tier binding).

``st2 emit agent-tiers [--write] [<agent-dir>]`` generates each tiered definition's ``model:``
(and ``effort:`` where its class binds one) from ``DELEGATION_KIT_TIER_MODEL``: for every
definition under the agent dir whose first front-matter block carries ``tier: <class>``.

* Bare, it prints one line per tiered definition — ``<path>: current``, or
  ``<path>: model: <current> -> <expected>`` (``, effort: <current|-> -> <expected>`` appended
  where the class binds an effort) — and exits 0. ``binding off`` when the binding is empty.
* ``--write`` rewrites the ``model:`` line inside the first front-matter block, or inserts one
  after ``tier:``; a bound effort's line is rewritten where it stands or inserted after
  ``model:``. No other byte changes. Where the class binds no effort, ``effort:`` is left alone.
* Nothing is written until every definition has resolved: a class the binding leaves unbound
  exits 2 naming it, the tree untouched.

``st2 check agent-tier-explicit [<agent-dir>]`` is the gate over the same walk:

* A — every definition declares ``model:`` (an explicit ``inherit`` passes; omission reds).
* B — with the binding set: a non-inherit ``model:`` with no ``tier:``, an unbound class, a
  stale model line, and a stale or missing effort line under a class binding one each red,
  pointing at ``st2 emit agent-tiers --write``. B runs this module's rewrite in process and
  compares whole-file bytes, so the gate and ``--write`` cannot disagree.

A missing agent dir, or one holding no definitions, scans zero and reads clean (counted). The
positional overrides ``DELEGATION_KIT_AGENT_DIR``. Standard library only.
"""

from __future__ import annotations

import os
import sys

from st2.kit import knobs as knob_table
from st2.kit.delegation.agent_definitions import front_matter
from st2.kit import gate_output
import st2.front as argv_grammar
from st2.kit.arm_knobs import resolve_knobs

GATE = "check-agent-tier-explicit"
EMIT = "agent-tiers"
WRITE_HINT = "st2 emit agent-tiers --write"


class Unbound(Exception):
    """A definition names a class the binding leaves unbound."""


def definitions(agent_dir: str) -> list[str]:
    """Every ``*.md`` under ``agent_dir``, sorted; an absent directory holds none."""
    found: list[str] = []
    if not os.path.isdir(agent_dir):
        return found
    for directory, subdirectories, files in os.walk(agent_dir):
        subdirectories.sort()
        found.extend(os.path.join(directory, name) for name in files if name.endswith(".md"))
    return sorted(found)


def _block(lines: list[str]) -> int | None:
    """Index of the closing ``---`` of the first front-matter block, or None."""
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return index
    return None


def _key_line(lines: list[str], end: int, key: str) -> int | None:
    for index in range(1, end):
        name, separator, _ = lines[index].partition(":")
        if separator and name == key:
            return index
    return None


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):] or "\n"


def rewrite(text: str, model: str, effort: str | None) -> str:
    """``text`` with its first block's ``model:`` (and, when ``effort`` is given, ``effort:``)
    set; the block must carry ``tier:``. No other byte changes."""
    lines = text.splitlines(keepends=True)
    end = _block(lines)
    if end is None:
        return text
    model_at = _key_line(lines, end, "model")
    if model_at is not None:
        lines[model_at] = f"model: {model}{_ending(lines[model_at])}"
    else:
        tier_at = _key_line(lines, end, "tier")
        model_at = tier_at + 1
        lines.insert(model_at, f"model: {model}{_ending(lines[tier_at])}")
        end += 1
    if effort is not None:
        effort_at = _key_line(lines, end, "effort")
        if effort_at is not None:
            lines[effort_at] = f"effort: {effort}{_ending(lines[effort_at])}"
        else:
            lines.insert(model_at + 1, f"effort: {effort}{_ending(lines[model_at])}")
    return "".join(lines)


class Definition:
    __slots__ = ("path", "text", "fields")

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.fields = front_matter(text)


def read_definitions(agent_dir: str) -> list[Definition]:
    out = []
    for path in definitions(agent_dir):
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                out.append(Definition(path, handle.read()))
        except (OSError, UnicodeDecodeError) as error:
            raise gate_output.GateRefusal(f"{path}: cannot be read ({error.__class__.__name__})") from error
    return out


def binding(config) -> dict[str, tuple[str, str | None]]:
    _, rows = knob_table.tier_binding_findings(
        config.indexed("DELEGATION_KIT_TIER_CLASSES"), config.indexed("DELEGATION_KIT_TIER_MODEL")
    )
    return {tier_class: (model, effort) for tier_class, model, effort in rows}


def expected(definition: Definition, bound: dict[str, tuple[str, str | None]]) -> str:
    """The definition's text after the rewrite; raise :class:`Unbound` for an unbound class."""
    tier_class = definition.fields.get("tier", "")
    if tier_class not in bound:
        raise Unbound(f"{definition.path}: tier: {tier_class} names a class the binding leaves unbound")
    model, effort = bound[tier_class]
    return rewrite(definition.text, model, effort)


def _parse(argv: list[str], flags: tuple[str, ...]) -> tuple[set[str], str | None]:
    seen, _, positional = argv_grammar.parse_kit(argv, flags)
    if len(positional) > 1:
        raise argv_grammar.ShapeRefusal(f"unexpected argument: {positional[1]}")
    return seen, (positional[0] if positional else None)


def _setup(argv, flags, environ, err, name, usage):
    try:
        seen, directory = _parse(argv, flags)
    except ValueError as error:
        err.write(f"{name}: {error}\n{usage}\n")
        return None
    config = resolve_knobs(environ, err, name)
    if config is None:
        return None
    return seen, directory or config.scalar("DELEGATION_KIT_AGENT_DIR"), config


EMIT_USAGE = "usage: st2 emit agent-tiers [--write] [--] [<agent-dir>]"
GATE_USAGE = "usage: st2 check agent-tier-explicit [--] [<agent-dir>]"


def emit(argv: list[str], environ=None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    setup = _setup(argv, ("--write",), environ, err, EMIT, EMIT_USAGE)
    if setup is None:
        return 2
    seen, agent_dir, config = setup
    bound = binding(config)
    if not bound:
        out.write("agent-tiers: binding off\n")
        return 0
    try:
        tiered = [d for d in read_definitions(agent_dir) if "tier" in d.fields]
        plans = [(d, expected(d, bound)) for d in tiered]
    except (Unbound, gate_output.GateRefusal) as error:
        err.write(f"{EMIT}: {error}; nothing written\n")
        return 2
    for definition, text in plans:
        model, effort = bound[definition.fields["tier"]]
        if text == definition.text:
            out.write(f"{definition.path}: current\n")
            continue
        line = f"{definition.path}: model: {definition.fields.get('model') or '-'} -> {model}"
        if effort is not None:
            line += f", effort: {definition.fields.get('effort') or '-'} -> {effort}"
        out.write(line + "\n")
    if "--write" in seen:
        for definition, text in plans:
            if text != definition.text:
                from pathlib import Path

                from st2.fs.atomic import publish

                target = Path(definition.path)
                publish(target, text.encode("utf-8"), target.parent, mode=os.stat(target).st_mode & 0o7777)
    return 0


def check(argv: list[str], environ=None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    err = sys.stderr if err is None else err
    setup = _setup(argv, (), environ, err, GATE, GATE_USAGE)
    if setup is None:
        return 2
    _, agent_dir, config = setup
    bound = binding(config)
    try:
        found = read_definitions(agent_dir)
    except gate_output.GateRefusal as error:
        return gate_output.refuse(GATE, str(error), err)
    findings: list[str] = []
    holding = 0
    for definition in found:
        fields = definition.fields
        model = fields.get("model", "")
        if not model:
            findings.append(f"A: {definition.path}: declares no model: (omission rides the dispatcher's tier; "
                            "state a tier:, or model: inherit to choose that)")
        if not bound:
            continue
        if "tier" not in fields:
            if model and model != "inherit":
                findings.append(f"B: {definition.path}: model: {model} with no tier: names no class of the binding")
            continue
        try:
            text = expected(definition, bound)
        except Unbound as error:
            findings.append(f"B: {error}")
            continue
        if text != definition.text:
            bound_model, bound_effort = bound[fields["tier"]]
            stale = []
            if model != bound_model:
                stale.append(f"model: {model or '-'} is not {bound_model}")
            if bound_effort is not None and fields.get("effort", "") != bound_effort:
                stale.append(f"effort: {fields.get('effort') or '-'} is not {bound_effort}")
            findings.append(f"B: {definition.path}: tier: {fields['tier']} is stale ({'; '.join(stale) or 'lines out of place'})")
        elif model:
            holding += 1
    if bound:
        detail = f"{len(found)} definition(s) scanned, {holding} holding their class's bound model"
    else:
        detail = f"{len(found)} definition(s) scanned, binding off"
    help_lines = []
    if any(line.startswith("A:") for line in findings):
        help_lines.append("every agent definition states model: (or tier: <class> and run " + WRITE_HINT + ")")
    if any(line.startswith("B:") for line in findings):
        help_lines.append(f"regenerate the tiered lines from DELEGATION_KIT_TIER_MODEL: {WRITE_HINT}")
    return gate_output.report(GATE, findings, help_lines, detail, out)
