"""The sixth driver's wrapper verb core: it says what it was given and exits 6."""

import sys


def run_session(catalog, identity, runtime_id, argv, operator=None, clock=None) -> int:
    sys.stdout.write(f"sixth-session {identity} {runtime_id} {operator} {' '.join(argv)}\n")
    return 6
