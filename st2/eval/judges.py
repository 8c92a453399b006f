"""The eval's judges: each returns ``(passed, detail)``, ``detail`` one line saying why.

* declarative checks read the catalog's files: ``file "p" has|lacks "text"``, ``json "p" field
  "x" is <value>`` (``x`` a dotted path of object keys; the value compared with its JSON type) and
  ``committed "p"`` (the path is tracked by the git repository around it, and its working copy has
  no change against HEAD);
* an ``exec`` judge passes when its shell command exits 0 (:mod:`st2.eval.shell`);
* an ``ask`` judge mails its prompt to the judging agent from the eval's requester and reads the
  agent's reply in the requester's inbox: a first word ``PASS`` passes, ``FAIL`` fails, no reply
  before the judge's timeout fails.

Paths are relative to the catalog and may not leave it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from st2.eval.spec import Check, Judge

DEFAULT_TIMEOUT = 60.0
ASK_POLL_SECONDS = 0.2


def inside(catalog: Path, relative: str) -> Path | None:
    path = (catalog / relative).resolve()
    root = catalog.resolve()
    return path if path == root or root in path.parents else None


def check(catalog: Path, item: Check) -> tuple[bool, str]:
    path = inside(catalog, item.path)
    if path is None:
        return False, f"{item.path} leaves the catalog"
    if item.kind == "committed":
        return _committed(path, item.path)
    try:
        data = path.read_bytes()
    except OSError as error:
        return False, f"{item.path}: {error.strerror or error}"
    text = data.decode("utf-8", errors="replace")
    if item.kind == "has":
        return (item.text in text), f"{item.path} {'has' if item.text in text else 'lacks'} {item.text!r}"
    if item.kind == "lacks":
        return (item.text not in text), f"{item.path} {'lacks' if item.text not in text else 'has'} {item.text!r}"
    try:
        value = json.loads(text)
    except ValueError:
        return False, f"{item.path} is not JSON"
    for key in item.field.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, f"{item.path} has no field {item.field!r}"
        value = value[key]
    same = type(value) is type(item.value) and value == item.value
    return same, f"{item.path} field {item.field!r} is {json.dumps(value)}" + ("" if same else
                                                                               f", not {json.dumps(item.value)}")


def _committed(path: Path, shown: str) -> tuple[bool, str]:
    directory = path if path.is_dir() else path.parent
    if not directory.is_dir():
        return False, f"{shown} does not exist"

    def git(*words: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(directory), *words], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})

    tracked = git("ls-files", "--error-unmatch", "--", str(path))
    if tracked.returncode != 0:
        return False, f"{shown} is not tracked by git"
    in_head = git("cat-file", "-e", f"HEAD:./{path.name}" if path.is_file() else "HEAD")
    changed = git("status", "--porcelain", "--", str(path))
    if in_head.returncode != 0:
        return False, f"{shown} is not in HEAD"
    if changed.returncode != 0 or changed.stdout.strip():
        return False, f"{shown} has uncommitted changes"
    return True, f"{shown} is committed"


def declarative(catalog: Path, judge: Judge) -> tuple[bool, str]:
    results = [check(catalog, item) for item in judge.checks]
    failed = [detail for passed, detail in results if not passed]
    return (not failed), "; ".join(failed or [detail for _, detail in results])


def ask_verdict(body: str) -> bool | None:
    """True for a reply whose first word is PASS, False for FAIL, None otherwise."""
    words = body.strip().split(None, 1)
    word = words[0].strip(".:,;!").upper() if words else ""
    return {"PASS": True, "FAIL": False}.get(word)


def await_reply(requester_directory: Path, agent_bus_id: str, after: str, deadline: float, stop):
    """The first message from ``agent_bus_id`` in the requester's inbox or archive whose filename
    sorts after ``after`` (the prompt's own filename: names start with their unix ms), or None."""
    from st2.bus.mailbox import list_box
    from st2.catalog.layout import ARCHIVE, INBOX, RESOURCES

    while not stop():
        for box in (INBOX, ARCHIVE):
            for message in list_box(requester_directory / RESOURCES / box):
                if message.sender == agent_bus_id and message.filename > after:
                    return message
        if time.monotonic() >= deadline:
            return None
        time.sleep(ASK_POLL_SECONDS)
    return None
