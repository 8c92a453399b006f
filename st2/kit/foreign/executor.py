"""``st2 foreign run|resume|close`` (docs/kit.md §Foreign run, docs/kit.md §Resuming a session).

run: ``st2 foreign run <adapter> <prompt-file> [--mode audit|sweep] [--class <class>] [--key <key>]``
and its budget form ``st2 foreign run <adapter> --budget``; resume: ``st2 foreign resume <key>
<prompt-file>``; close: ``st2 foreign close <key>``. The run directory is
``<top level>/${GATE_SDK_TMP_DIR:-.tmp}/foreign/<key>/``: ``tree/`` (the clone), ``report.txt``
and ``stderr.txt`` (the adapter's two streams), ``change.patch`` (a sweep's whole change),
``session.txt`` and ``refs.txt`` (an open session), ``report.<n>.txt``/``stderr.<n>.txt`` (the
rotated reports of earlier turns).

Order of a run: the shape of the argv; the pre-spawn checks (adapter, class, prompt file, key) —
a failure there prints ``budget=-``; the keyed verdict, read before anything is written (a PAUSE
clones nothing, spawns nothing and leaves no run directory); then the clone, the spawn (no
shell, cwd the clone, stdin the prompt file, GIT_* location variables removed, bounded by
``DELEGATION_KIT_FOREIGN_TIMEOUT``), the shape check (a moved ref is REFUSED committed; a dirty
audit is REFUSED audit wrote; a refusal outranks a failure), and the cleanup or the session.

Exits: 0 OK, 1 REFUSED, 2 FAILED and every shape refusal.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys

import st2.front as argv_grammar
from st2.kit.arm_knobs import resolve_knobs
from st2.kit.foreign import clone, keyed_verdict, session
from st2.kit import foreign_tables
from st2.fs.atomic import write_all
from st2.fs.read import RUNTIME_LIMIT, TRANSCRIPT_LIMIT, NotRegular, TooLarge, read_bounded

RUN_USAGE = ("usage: st2 foreign run <adapter> <prompt-file> [--mode audit|sweep] [--class <class>] [--key <key>]\n"
             "       st2 foreign run <adapter> --budget")
RESUME_USAGE = "usage: st2 foreign resume [--] <key> <prompt-file>"
CLOSE_USAGE = "usage: st2 foreign close [--] <key>"
ID_CHARACTERS = re.compile(rb"[A-Za-z0-9._:-]+")
ROTATED = re.compile(r"^(report|stderr)\.\d+\.txt$")


class Outcome:
    """What one command did, rendered as its verdict line."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.fields: dict[str, str] = {}
        self.verdict = ""
        self.status = 2

    def failed(self, why: str) -> "Outcome":
        self.verdict, self.status = f"FAILED ({why})", 2
        return self

    def line(self) -> str:
        return f"{self.prefix}: " + " ".join(f"{key}={value}" for key, value in self.fields.items()) + f" -> {self.verdict}"


class Context:
    def __init__(self, config, tables, toplevel: str, environ) -> None:
        self.config = config
        self.tables = tables
        self.toplevel = toplevel
        self.environ = environ

    def run_dir(self, key: str) -> str:
        scratch = self.environ.get("GATE_SDK_TMP_DIR") or ".tmp"
        base = scratch if os.path.isabs(scratch) else os.path.join(self.toplevel, scratch)
        return os.path.join(base, "foreign", key)

    @property
    def timeout(self) -> float:
        return float(self.config.integer("DELEGATION_KIT_FOREIGN_TIMEOUT"))


def _context(environ, cwd: str, err, name: str):
    config = resolve_knobs(environ, err, name)
    if config is None:
        return None
    tables = foreign_tables.read(config.arrays, config.indexed("DELEGATION_KIT_TIER_CLASSES"))
    try:
        top = clone.toplevel(cwd)
    except clone.CloneError:
        top = os.path.abspath(cwd)
    return Context(config, tables, top, environ)


def substitute(words: list[str], values: dict[str, str]) -> list[str]:
    out = []
    for word in words:
        for token, value in values.items():
            word = word.replace(token, value)
        out.append(word)
    return out


def capture_id(marker: str | None, stdout: bytes, stderr: bytes) -> str | None:
    """The run of [A-Za-z0-9._:-] after the marker's first occurrence, past blanks; stdout first."""
    if not marker:
        return None
    for stream in (stdout, stderr):
        at = stream.find(marker.encode())
        if at < 0:
            continue
        rest = stream[at + len(marker.encode()):].lstrip(b" \t")
        match = ID_CHARACTERS.match(rest)
        if match:
            return match.group().decode()
    return None


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot name a run directory ``<scratch>/foreign/<key>/``, or None: the one
    rule of run, resume and close, checked before any file is touched. A key is one printable
    path component: not empty, no ``/``, not ``.`` or ``..``, no control character (a NUL, a
    newline)."""
    if not key or "/" in key or key in (".", "..") or not key.isprintable():
        return f"{key!r} is not one path component"
    return None


def failure_of(error: OSError) -> str:
    """An OSError about a run file as the words of a FAILED verdict: ``<path> <why>``."""
    return f"{error.filename} {error.strerror}" if error.filename else str(error.strerror or error)


def open_output(path: str) -> int:
    """``path`` opened for writing from empty (created owner-only if absent); raise
    :class:`NotRegular` when what is there is a FIFO, a symlink or anything else but a regular
    file. Never blocks: ``O_NONBLOCK`` makes a FIFO without a reader fail at once."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as error:
        if error.errno not in (errno.ENXIO, errno.ELOOP, errno.EISDIR):
            raise
        raise NotRegular(error.errno, "is not a regular file", path) from None
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        raise NotRegular(errno.EINVAL, "is not a regular file", path)
    os.ftruncate(descriptor, 0)
    os.set_blocking(descriptor, True)
    return descriptor


def _write_file(path: str, data: bytes) -> None:
    descriptor = open_output(path)
    try:
        write_all(descriptor, data, path, durable=False)
    finally:
        os.close(descriptor)


def spawn(argv: list[str], tree: str, prompt: str, run_dir: str, timeout: float, environ) -> str:
    """Run the adapter; return its exit field (the status, ``timeout``) — raise OSError when it
    cannot start (:class:`NotRegular` when ``report.txt`` or ``stderr.txt`` is not a regular file)."""
    stdout = open_output(os.path.join(run_dir, "report.txt"))
    try:
        stderr = open_output(os.path.join(run_dir, "stderr.txt"))
    except BaseException:
        os.close(stdout)
        raise
    try:
        with open(prompt, "rb") as stdin:
            process = subprocess.Popen(argv, cwd=tree, stdin=stdin, stdout=stdout, stderr=stderr,
                                       env=clone.clean_environment(environ))
    finally:
        os.close(stdout)
        os.close(stderr)
    try:
        return str(process.wait(timeout=timeout))
    except subprocess.TimeoutExpired:
        process.kill()  # the adapter's own process; a program it started may outlive it
        process.wait()
        return "timeout"


def _read_bytes(path: str) -> bytes:
    """A report's bytes for the session-id capture; nothing when it cannot be read as a regular
    file within the bound."""
    try:
        return read_bounded(path, TRANSCRIPT_LIMIT, follow_symlinks=False)
    except OSError:
        return b""


def _write_patch(context_tree: str, base: str, run_dir: str) -> str:
    data = clone.patch(context_tree, base, os.path.join(run_dir, "patch.index"))
    path = os.path.join(run_dir, "change.patch")
    if data:
        _write_file(path, data)
        return path
    if os.path.exists(path):
        os.unlink(path)
    return "none"


def _resolve_class(context: Context, adapter: str, tier_class: str | None, forms: list[list[str]]):
    """``(class, model, effort, failure)``: the pair a class-taking adapter rides, or the
    pre-spawn failure; a plain adapter takes none (``class=-``)."""
    harness = context.tables.harness.get(adapter)
    if harness is None:
        return None, None, None, None
    row = context.tables.tier_model.get((harness, tier_class))
    if row is None:
        return tier_class, None, None, f"class: {harness} binds no model to {tier_class}"
    model, effort = row
    if effort is None and any(foreign_tables.EFFORT in word for form in forms for word in form):
        return tier_class, model, None, f"class: {harness}/{tier_class} binds no effort for @EFFORT@"
    return tier_class, model, effort, None


def _budget(context: Context, adapter: str, outcome: Outcome) -> bool:
    """Read the keyed verdict into the line; return False (and fail the outcome) on a PAUSE."""
    word, line, status = keyed_verdict.read(adapter, context.config, context.tables, context.toplevel)
    outcome.fields["budget"] = word
    if status == 1:
        outcome.failed("budget: " + line[line.index("used="):])
        return False
    return True


def run(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    cwd = os.getcwd() if cwd is None else cwd
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        seen, values, operands = argv_grammar.parse_kit(argv, ("--budget",), ("--mode", "--class", "--key"))
        if "--budget" in seen:
            if values:
                raise argv_grammar.ShapeRefusal(f"--budget takes no {' or '.join(sorted(values))}")
            if len(operands) != 1:
                raise argv_grammar.ShapeRefusal("--budget takes exactly one operand, the adapter")
        elif len(operands) != 2:
            raise argv_grammar.ShapeRefusal(f"takes two operands (<adapter> <prompt-file>), not {len(operands)}")
        mode = values.get("--mode", "audit")
        if mode not in ("audit", "sweep"):
            raise argv_grammar.ShapeRefusal(f"--mode {mode}: the mode is audit or sweep")
        adapter = operands[0]
        prompt = operands[1] if len(operands) > 1 else ""
        key = values.get("--key") or os.path.splitext(os.path.basename(prompt))[0]
        if "--budget" not in seen and key_problem(key):
            raise argv_grammar.ShapeRefusal(f"--key {key_problem(key)}")
    except argv_grammar.ShapeRefusal as refusal:
        err.write(f"foreign-run: {refusal}\n{RUN_USAGE}\n")
        return 2
    context = _context(environ, cwd, err, "foreign-run")
    if context is None:
        return 2
    if "--budget" in seen:
        if adapter not in context.tables.adapters:
            err.write(f"foreign-run: adapter {adapter!r} is not configured in {foreign_tables.ADAPTERS}\n{RUN_USAGE}\n")
            return 2
        _, line, status = keyed_verdict.read(adapter, context.config, context.tables, context.toplevel)
        out.write(line + "\n")
        return status
    roster = context.config.indexed("DELEGATION_KIT_TIER_CLASSES")
    if adapter in context.tables.harness:
        tier_class = values.get("--class")
        if tier_class is None or tier_class not in roster:
            why = "takes a class: --class <class> is required" if tier_class is None else f"--class {tier_class} is not in DELEGATION_KIT_TIER_CLASSES"
            err.write(f"foreign-run: adapter {adapter} {why}\n{RUN_USAGE}\n")
            return 2
    outcome = Outcome("foreign-run")
    outcome.fields.update(adapter=adapter, mode=mode, **{"class": "-"}, key=key, budget="-", exit="-", report="none", patch="none")
    status = _open(context, adapter, mode, values.get("--class"), key, prompt, outcome)
    out.write(outcome.line() + "\n")
    return status


def _open(context: Context, adapter: str, mode: str, tier_class: str | None, key: str, prompt: str, outcome: Outcome) -> int:
    form = context.tables.adapters.get(adapter)
    if form is None:
        return outcome.failed(f"unknown adapter {adapter}").status
    resume_form = context.tables.resume.get(adapter)
    tier_class, model, effort, class_failure = _resolve_class(context, adapter, tier_class, [form, resume_form or []])
    if tier_class is not None and context.tables.harness.get(adapter):
        outcome.fields["class"] = tier_class
    if class_failure:
        return outcome.failed(class_failure).status
    prompt_path = os.path.abspath(prompt)
    if not os.access(prompt_path, os.R_OK) or not os.path.isfile(prompt_path):
        return outcome.failed(f"cannot read the prompt file {prompt}").status
    run_dir = context.run_dir(key)
    if os.path.exists(os.path.join(run_dir, session.NAME)):
        return outcome.failed(f"key {key} holds an open session: resume or close it").status
    if os.path.exists(os.path.join(run_dir, "tree")):
        return outcome.failed(f"key {key} holds a kept clone at {os.path.join(run_dir, 'tree')}: inspect and remove it").status
    if not _budget(context, adapter, outcome):
        return outcome.status
    try:
        os.makedirs(run_dir, exist_ok=True)
        for name in os.listdir(run_dir):
            if ROTATED.match(name) or name in ("change.patch", "refs.txt"):
                os.unlink(os.path.join(run_dir, name))
    except OSError as error:  # the run directory (or a parent) is not a directory
        return outcome.failed(f"{run_dir}: {error.strerror}").status
    tree = os.path.join(run_dir, "tree")
    try:
        base = clone.make(context.toplevel, tree)
    except clone.CloneError as error:
        clone.remove(tree)
        return outcome.failed(f"clone: {error}").status
    before = clone.refs(tree)
    words = substitute(form, {foreign_tables.PROMPT_FILE: prompt_path, foreign_tables.MODEL: model or "",
                              foreign_tables.EFFORT: effort or ""})
    try:
        exit_field = spawn(words, tree, prompt_path, run_dir, context.timeout, context.environ)
    except NotRegular as error:
        clone.remove(tree)
        return outcome.failed(failure_of(error)).status
    except OSError as error:
        clone.remove(tree)
        return outcome.failed(f"spawn: {error.strerror or error}").status
    outcome.fields["exit"] = exit_field
    outcome.fields["report"] = os.path.join(run_dir, "report.txt")
    refusal = _shape(tree, before, mode)
    if refusal:
        outcome.verdict, outcome.status = f"REFUSED ({refusal}) — clone kept at {tree}", 1
        return 1
    if mode == "sweep" and exit_field == "0":
        outcome.fields["patch"] = _write_patch(tree, base, run_dir)
    if exit_field != "0":
        clone.remove(tree)
        return outcome.failed("timeout" if exit_field == "timeout" else f"adapter exited {exit_field}").status
    outcome.verdict, outcome.status = "OK", 0
    if resume_form is None:
        clone.remove(tree)
        return 0
    session_id = capture_id(context.tables.marker.get(adapter), _read_bytes(os.path.join(run_dir, "report.txt")),
                            _read_bytes(os.path.join(run_dir, "stderr.txt")))
    if session_id is None and any(foreign_tables.SESSION_ID in word for word in resume_form):
        clone.remove(tree)
        outcome.verdict += f" — not resumable (no session id after the marker {context.tables.marker.get(adapter)!r})"
        return 0
    try:
        _write_file(os.path.join(run_dir, "refs.txt"), before.encode())
    except OSError as error:
        clone.remove(tree)
        return outcome.failed(failure_of(error)).status
    session.write(run_dir, {"adapter": adapter, "mode": mode, "class": tier_class if model else None, "model": model,
                            "effort": effort, "base": base, "turn": "1", "id": session_id})
    outcome.verdict += f" — resumable: st2 foreign resume {os.path.basename(run_dir)} <prompt-file>"
    return 0


def _shape(tree: str, before: str, mode: str) -> str | None:
    try:
        if clone.refs(tree) != before:
            return "committed"
        if mode == "audit" and clone.dirty(tree):
            return "audit wrote"
    except clone.CloneError as error:
        return f"shape unreadable: {error}"
    return None


def _session_command(argv: list[str], shape: str, usage: str, environ, cwd, err):
    """The operands and context of a resume or close, or None after a refusal on ``err``."""
    try:
        _, _, operands = argv_grammar.parse_kit(argv)
        if len(operands) != len(shape.split()):
            raise argv_grammar.ShapeRefusal(f"takes {shape}, not {len(operands)} operand(s)")
        if key_problem(operands[0]):
            raise argv_grammar.ShapeRefusal(f"key {key_problem(operands[0])}")
    except argv_grammar.ShapeRefusal as refusal:
        err.write(f"foreign-resume: {refusal}\n{usage}\n")
        return None
    context = _context(os.environ if environ is None else environ, os.getcwd() if cwd is None else cwd, err, "foreign-resume")
    return None if context is None else (operands, context)


def resume(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    prepared = _session_command(argv, "<key> <prompt-file>", RESUME_USAGE, environ, cwd, err)
    if prepared is None:
        return 2
    (key, prompt), context = prepared
    outcome = Outcome("foreign-resume")
    run_dir = context.run_dir(key)
    try:
        record, unreadable = session.read(run_dir), None
    except OSError as error:
        record, unreadable = None, failure_of(error)
    outcome.fields.update(adapter=(record or {}).get("adapter", "-"), mode=(record or {}).get("mode", "-"),
                          **{"class": (record or {}).get("class", "-")}, key=key,
                          turn=(record or {}).get("turn", "-"), budget="-", exit="-", report="none", patch="none")
    status = outcome.failed(unreadable).status if unreadable else _resume(context, record, run_dir, key, prompt, outcome)
    out.write(outcome.line() + "\n")
    return status


def _resume(context: Context, record, run_dir: str, key: str, prompt: str, outcome: Outcome) -> int:
    if record is None:
        return outcome.failed(f"no open session under {key}").status
    adapter = record["adapter"]
    form = context.tables.resume.get(adapter)
    if adapter not in context.tables.adapters or form is None:
        return outcome.failed(f"adapter {adapter} has no resume form in {foreign_tables.RESUME}").status
    for token, field in ((foreign_tables.MODEL, "model"), (foreign_tables.EFFORT, "effort"), (foreign_tables.SESSION_ID, "id")):
        if any(token in word for word in form) and record[field] == "-":
            label = "class" if field != "id" else "session"
            return outcome.failed(f"{label}: the session recorded no {field} for {token}").status
    prompt_path = os.path.abspath(prompt)
    if not os.access(prompt_path, os.R_OK) or not os.path.isfile(prompt_path):
        return outcome.failed(f"cannot read the prompt file {prompt}").status
    if not _budget(context, adapter, outcome):
        return outcome.status
    turn = int(record["turn"])
    for stream in ("report", "stderr"):
        current = os.path.join(run_dir, f"{stream}.txt")
        if os.path.exists(current):
            os.replace(current, os.path.join(run_dir, f"{stream}.{turn}.txt"))
    tree = os.path.join(run_dir, "tree")
    words = substitute(form, {foreign_tables.PROMPT_FILE: prompt_path, foreign_tables.SESSION_ID: record["id"],
                              foreign_tables.MODEL: record["model"], foreign_tables.EFFORT: record["effort"]})
    try:
        before = read_bounded(os.path.join(run_dir, "refs.txt"), RUNTIME_LIMIT, follow_symlinks=False).decode(
            "utf-8", "replace")
        exit_field = spawn(words, tree, prompt_path, run_dir, context.timeout, context.environ)
    except (NotRegular, TooLarge, FileNotFoundError) as error:
        return outcome.failed(failure_of(error)).status
    except OSError as error:
        return outcome.failed(f"spawn: {error.strerror or error}").status
    outcome.fields.update(exit=exit_field, report=os.path.join(run_dir, "report.txt"), turn=str(turn + 1))
    refusal = _shape(tree, before, record["mode"])
    if record["mode"] == "sweep" and refusal != "committed":
        outcome.fields["patch"] = _write_patch(tree, record["base"], run_dir)
    if refusal:
        os.unlink(os.path.join(run_dir, session.NAME))
        outcome.verdict, outcome.status = f"REFUSED ({refusal}) — clone kept at {tree}", 1
        return 1
    session.write(run_dir, record | {"turn": str(turn + 1)})
    if exit_field != "0":
        return outcome.failed("timeout" if exit_field == "timeout" else f"adapter exited {exit_field}").status
    outcome.verdict, outcome.status = f"OK — resumable: st2 foreign resume {key} <prompt-file>", 0
    return 0


def close(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    prepared = _session_command(argv, "<key>", CLOSE_USAGE, environ, cwd, err)
    if prepared is None:
        return 2
    (key,), context = prepared
    run_dir = context.run_dir(key)
    try:
        record = session.read(run_dir)
    except OSError as error:
        out.write(f"foreign-resume: key={key} -> FAILED ({failure_of(error)})\n")
        return 2
    if record is None:
        out.write(f"foreign-resume: key={key} -> FAILED (no open session under {key})\n")
        return 2
    clone.remove(os.path.join(run_dir, "tree"))
    for name in (session.NAME, "refs.txt"):
        try:
            os.unlink(os.path.join(run_dir, name))
        except FileNotFoundError:
            pass
    out.write(f"foreign-resume: key={key} -> CLOSED\n")
    return 0
