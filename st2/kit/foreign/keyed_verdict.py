"""The keyed verdict (docs/kit.md §Keyed verdict): the usage rule over one foreign adapter's
own snapshot, in the keyed order parse → long-axis pause → RESET-OK → short-axis pause →
age-STALE → OK (:func:`st2.records.usage_snapshot.judge` with ``order=KEYED``). No identity arm, no
history sample, no ``width=`` field.

``DELEGATION_KIT_FOREIGN_USAGE`` names the adapter's snapshot (the usage.txt contract, the
mandatory triple its shorter window, the weekly pair its longer one); where
``DELEGATION_KIT_FOREIGN_USAGE_CMD`` configures a producer, it runs first (no shell, from the top
level, ``@USAGE_FILE@`` substituted absolute, output discarded, bounded by
``DELEGATION_KIT_FOREIGN_TIMEOUT``; fail-soft). Thresholds: ``DELEGATION_KIT_FOREIGN_PAUSE_PCT``
(short) and ``_PAUSE_PCT_LONG`` (long); ``DELEGATION_KIT_STALE_AGE`` as it stands.

Line: ``foreign-budget: adapter=<a> used=<pct>%[ (long <pct>%)] age=<n>s resets_in=<n>s ->
<VERDICT> (<status>; <consequence>)``; a line with no parsed snapshot names the adapter and why.
Exits 0 OK/RESET-OK, 1 PAUSE, 2 STALE, unreadable and OFF (no snapshot configured).
"""

from __future__ import annotations

import os
import subprocess

from st2.kit import foreign_tables
from st2.records import usage_snapshot

OK, RESET_OK, PAUSE, STALE, OFF = "OK", "RESET-OK", "PAUSE", "STALE", "OFF"
STATUS = {OK: 0, RESET_OK: 0, PAUSE: 1, STALE: 2, OFF: 2}
UNKNOWN = "budget-unknown, never blocks a foreign run"
HOLD = "spawn nothing on this adapter until it resets"


def run_producer(argv: list[str], usage_file: str, toplevel: str, timeout: float) -> None:
    """Fail-soft: a non-zero exit, a spawn failure or the bound's expiry leaves the snapshot as it was."""
    words = [word.replace(foreign_tables.USAGE_FILE, usage_file) for word in argv]
    try:
        subprocess.run(words, cwd=toplevel, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


def read(adapter: str, config, tables, toplevel: str, now: int | None = None) -> tuple[str, str, int]:
    """Return ``(word, line, status)`` for ``adapter``."""
    import time

    path = tables.usage.get(adapter)
    if path is None:
        return OFF, f"foreign-budget: adapter={adapter} -> {OFF} (no {foreign_tables.USAGE} snapshot; nothing gates this adapter — {UNKNOWN})", STATUS[OFF]
    usage_file = path if os.path.isabs(path) else os.path.join(toplevel, path)
    producer = tables.usage_cmd.get(adapter)
    if producer:
        run_producer(producer, usage_file, toplevel, float(config.integer("DELEGATION_KIT_FOREIGN_TIMEOUT")))
    now = int(time.time()) if now is None else now
    reading = usage_snapshot.read_file(usage_file)
    if reading.outcome != usage_snapshot.READ:
        why = {usage_snapshot.UNREADABLE: f"cannot read {usage_file}",
               usage_snapshot.MISSING_KEYS: f"missing key(s) in {usage_file}",
               usage_snapshot.NON_NUMERIC: f"non-numeric {reading.detail} in {usage_file}",
               usage_snapshot.DUPLICATE_KEY: f"duplicate key {reading.detail} in {usage_file}"}[reading.outcome]
        return STALE, f"foreign-budget: adapter={adapter} -> {STALE} ({why}; {UNKNOWN})", STATUS[STALE]
    parsed = reading.snapshot
    if usage_snapshot.future_skewed(parsed, now):
        why = f"updated_at is {int(parsed.updated_at) - now}s in the future in {usage_file}"
        return STALE, f"foreign-budget: adapter={adapter} -> {STALE} ({why}; {UNKNOWN})", STATUS[STALE]
    short, long_ = config.scalar("DELEGATION_KIT_FOREIGN_PAUSE_PCT"), config.scalar("DELEGATION_KIT_FOREIGN_PAUSE_PCT_LONG")
    stale_age = config.integer("DELEGATION_KIT_STALE_AGE")
    judged = usage_snapshot.judge(parsed, now, short, long_, stale_age, order=usage_snapshot.KEYED)
    age = now - int(parsed.updated_at)
    resets_in = int(parsed.five_hour_resets_at) - now
    weekly = f" (long {parsed.seven_day_used_pct}%)" if parsed.weekly_armed() else ""
    reading_text = f"foreign-budget: adapter={adapter} used={parsed.five_hour_used_pct}%{weekly} age={age}s resets_in={resets_in}s"
    if judged in (usage_snapshot.JUDGED_PAUSE_7D, usage_snapshot.JUDGED_PAUSE_LONG_DEAD_SHORT):
        long_in = int(parsed.seven_day_resets_at) - now
        rolled = "; the short window rolled over" if judged == usage_snapshot.JUDGED_PAUSE_LONG_DEAD_SHORT else ""
        word, clause = PAUSE, f"long window at or over {long_}%, resets in {long_in}s{rolled}; {HOLD}"
    elif judged == usage_snapshot.JUDGED_RESET_OK:
        word, clause = RESET_OK, (f"short window rolled over {abs(resets_in)}s ago and the long window is under threshold, "
                                  "absent or reset; the pct is from the dead window and pauses nothing")
    elif judged == usage_snapshot.JUDGED_PAUSE_5H:
        word, clause = PAUSE, f"short window at or over {short}%, resets in {resets_in}s; {HOLD}"
    elif judged == usage_snapshot.JUDGED_AGE_STALE:
        word, clause = STALE, f"reading older than {stale_age}s under its thresholds; {UNKNOWN}"
    else:
        word, clause = OK, "fresh reading under both thresholds; headroom now — a floor, not a recommendation"
    return word, f"{reading_text} -> {word} ({clause})", STATUS[word]
