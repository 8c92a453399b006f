"""``st2 model-verdict [--expect <class>] [--] [<transcript.jsonl | session8>]`` (docs/kit.md
§Model verdict): one line naming the model the session runs on and, with ``--expect``, whether
it meets the class.

Which transcript: a ``.jsonl`` operand as given; an eight-character key through the inverse
lookup (a leading ``agent-`` stripped from each candidate); bare, the newest transcript under
the sessions dir, a dispatched session's ``subagents/`` included. The sessions dir is
``DELEGATION_KIT_SESSIONS_DIR``, empty meaning ``<config-home>/projects/<cwd-slug>``.

Which model: the newest assistant record whose usage is not all zero
(:mod:`st2.kit.transcript`), and that record's ``effort``.

The verdict: the id's classes are the bound classes whose value it matches. Bare: READ, exit
0. With ``--expect E``: OK (exit 0) when it matches E or a class the roster ranks above E;
BELOW (1) when it matches only lower classes; UNBOUND (1) when it matches none; UNKNOWN (2)
when no reading can be had (no transcript, no model record, an empty binding, an unbound
expected class). Shape refusals exit 2 with the usage on stderr: a dash-led operand naming no
option, ``--expect`` naming no class of the roster, a second operand; ``--`` ends options.

Line: ``model-verdict: id=<id> effort=<effort|-> session=<key> class=<classes|none>
expect=<class|-> -> <VERDICT>`` and its consequence. It spawns nothing and writes nothing.
"""

from __future__ import annotations

import os
import sys

from st2.kit import knobs as knob_table
from st2.kit.delegation.knobs import model_matches
from st2.kit import transcript
import st2.front as argv_grammar

USAGE = "usage: st2 model-verdict [--expect <class>] [--] [<transcript.jsonl | session8>]"
OFF_TIER = " — the session is not on its expected tier; stop before work that needs it and have it re-dispatched at that tier"
UNVERIFIED = " — tier unverified, not refused; the caller's rule says whether to proceed"
STATUS = {"READ": 0, "OK": 0, "BELOW": 1, "UNBOUND": 1, "UNKNOWN": 2}


def parse_arguments(argv: list[str]) -> tuple[str | None, str | None]:
    _, values, operands = argv_grammar.parse_kit(argv, options=("--expect",))
    if len(operands) > 1:
        raise argv_grammar.ShapeRefusal(f"unexpected second operand: {operands[1]}")
    return values.get("--expect"), (operands[0] if operands else None)


def _line(model_id: str, effort: str | None, key: str, classes: list[str], expect: str | None, word: str, tail: str = "") -> tuple[str, int]:
    return (
        f"model-verdict: id={model_id} effort={effort or '-'} session={key} class={','.join(classes) or 'none'}"
        f" expect={expect or '-'} -> {word}{tail}",
        STATUS[word],
    )


def _unknown(key: str, expect: str | None, cause: str, model_id: str = "-", effort=None, classes=()) -> tuple[str, int]:
    return _line(model_id, effort, key, list(classes), expect, "UNKNOWN", f" ({cause}){UNVERIFIED}")


def verdict(argv: list[str], environ=None, cwd: str | None = None, stderr=None) -> tuple[str, int]:
    """Return ``(line, status)``; a shape refusal writes the usage to stderr and returns ``("", 2)``."""
    environ = os.environ if environ is None else environ
    cwd = os.getcwd() if cwd is None else cwd
    stderr = sys.stderr if stderr is None else stderr
    try:
        expect, operand = parse_arguments(argv)
    except argv_grammar.ShapeRefusal as refusal:
        stderr.write(f"model-verdict: {refusal}\n{USAGE}\n")
        return "", 2
    try:
        config = knob_table.resolve(environ)
    except knob_table.KnobError as error:
        for finding in error.findings:
            stderr.write(f"model-verdict: {finding}\n")
        return _unknown("-", expect, f"malformed knob configuration, {len(error.findings)} finding(s) on stderr")
    roster = list(config.indexed("DELEGATION_KIT_TIER_CLASSES"))
    if expect is not None and expect not in roster:
        stderr.write(f"model-verdict: --expect {expect} names no class of DELEGATION_KIT_TIER_CLASSES ({', '.join(roster)})\n{USAGE}\n")
        return "", 2
    _, rows = knob_table.tier_binding_findings(tuple(roster), config.indexed("DELEGATION_KIT_TIER_MODEL"))
    bound = {tier_class: (model, effort) for tier_class, model, effort in rows}

    sessions_dir = config.scalar("DELEGATION_KIT_SESSIONS_DIR") or transcript.derived_sessions_dir(environ, cwd)
    if operand is None:
        path = transcript.newest(sessions_dir)
        if path is None:
            return _unknown("-", expect, f"no transcript under {sessions_dir}")
    elif operand.endswith(".jsonl"):
        path = operand
    elif len(operand) == transcript.KEY_LENGTH:
        matches = transcript.by_key(sessions_dir, operand)
        if len(matches) != 1:
            found = "no transcript" if not matches else f"{len(matches)} transcripts"
            return _unknown(operand, expect, f"{found} under {sessions_dir} for key {operand}")
        path = matches[0]
    else:
        stderr.write(f"model-verdict: {operand} is neither a .jsonl transcript nor an eight-character session key\n{USAGE}\n")
        return "", 2
    key = transcript.key_of(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return _unknown(key, expect, f"cannot read {path}: {error.strerror or error.__class__.__name__}")
    reading = transcript.running_model(data)
    if reading is None:
        return _unknown(key, expect, f"no assistant record with non-zero usage in {path}")
    model_id, effort = reading
    classes = [tier_class for tier_class in roster if tier_class in bound and model_matches(bound[tier_class][0], model_id)]
    if expect is None:
        return _line(model_id, effort, key, classes, None, "READ")
    if not bound:
        return _unknown(key, expect, "the tier binding is empty", model_id, effort, classes)
    if expect not in bound:
        return _unknown(key, expect, f"expected class {expect} is unbound", model_id, effort, classes)
    if not classes:
        return _line(model_id, effort, key, classes, expect, "UNBOUND", OFF_TIER)
    floor = roster.index(expect)
    if any(roster.index(tier_class) <= floor for tier_class in classes):
        bound_effort = bound[expect][1]
        tail = ""
        if bound_effort is not None and effort is not None and effort != bound_effort:
            tail = f" — running effort {effort} is not the class's bound {bound_effort}"
        return _line(model_id, effort, key, classes, expect, "OK", tail)
    return _line(model_id, effort, key, classes, expect, "BELOW", OFF_TIER)


def main(argv: list[str]) -> int:
    line, status = verdict(argv)
    if line:
        sys.stdout.write(line + "\n")
    return status
