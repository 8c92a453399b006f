"""Append the JSON document on stdin as one line to a file (the lab's status-line and hook tee).

    python3 tee_json.py FILE [LABEL] [--print TEXT] [--stamp]

With LABEL the line is ``{"label": LABEL, "payload": <stdin>}``, else the document itself;
``--stamp`` adds ``"atMs"`` (wall-clock milliseconds when the hook ran) after the label.
``--print TEXT`` writes TEXT to stdout (a status line must print something to render; a hook
must print nothing, since SessionStart/UserPromptSubmit output would be added to the prompt).
Standard library only; never fails the harness: unreadable input is recorded as a string.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    printed = None
    if "--print" in argv:
        at = argv.index("--print")
        printed = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    stamp = "--stamp" in argv
    argv = [word for word in argv if word != "--stamp"]
    path, label = argv[0], (argv[1] if len(argv) > 1 else None)
    raw = sys.stdin.read()
    try:
        document = json.loads(raw)
    except ValueError:
        document = raw
    if label and stamp:
        import time

        line = json.dumps({"label": label, "atMs": time.time_ns() // 1_000_000, "payload": document})
    else:
        line = json.dumps({"label": label, "payload": document} if label else document)
    with open(path, "a") as log:
        log.write(line + "\n")
    if printed is not None:
        print(printed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
