"""`st2 usage verdict [--] [usage-file [credentials-file]]`: the trustworthy budget verdict.

One rule, two callers: :func:`verdict` returns ``(line, status)``; the CLI prints the line and
exits with the status, and `st2 hook budget-guard` calls the same function in process.

Check order: parse → RESET-OK → age-STALE → pause axes → account-STALE or login-STALE → OK.

* Exit 0 OK / RESET-OK, 1 PAUSE, 2 STALE or unreadable. STALE is budget-unknown and never
  blocks delegation; only a fresh, readable, at-or-over reading of a live window pauses.
* Fail-closed readings (unreadable file, missing mandatory key, non-numeric value) are STALE
  and append no sample.
* RESET-OK: the 5h window's resets_at is at or before now; its pct is from a dead window.
* age-STALE: ``now - updated_at`` beyond ``DELEGATION_KIT_STALE_AGE``.
* Two pause axes, float compares, at-or-over: the 5h axis against ``DELEGATION_KIT_PAUSE_PCT``
  always; the weekly axis against ``DELEGATION_KIT_PAUSE_PCT_7D`` only when both weekly keys
  are present and its own window is live. The line names the axis, ``PAUSE (5h window)`` or
  ``PAUSE (7-day window)`` — the weekly when both fire, since its remediation costs days.
* The post-login reroute may turn a would-be OK into STALE, never a PAUSE: a snapshot naming
  another account than the live one (the account config's ``oauthAccount.accountUuid``) is
  STALE; a matched account whose snapshot is younger than ``DELEGATION_KIT_LOGIN_SETTLE``
  seconds past the credentials file's mtime is STALE; where either identity is missing, a
  reading within ``DELEGATION_KIT_LOGIN_WINDOW`` of that mtime is STALE. Two roll witnesses
  read from the history log *before* this run's append — the boundary moved since the newest
  sample for this account, and updated_at is past that previous boundary — disarm the two
  time-keyed arms together (never the account-switch arm).
* Demand-driven refresh: a non-empty ``DELEGATION_KIT_REFRESH_CMD`` argv is spawned (no shell,
  output discarded, failure ignored) before the read, unless the snapshot is younger than
  ``DELEGATION_KIT_REFRESH_MIN_AGE`` and names the live account.
* Sampling: with ``DELEGATION_KIT_USAGE_HISTORY`` set, every parsed snapshot appends one sample.

Every line carries the reading, its status and its consequence, with ``width=<n>``
(``DELEGATION_KIT_FAN_WIDTH``) immediately before `` -> <VERDICT>``.

Standard library only (hot path): imports its own record modules and nothing else of st2.
"""

from __future__ import annotations

import os
import sys
import time

from st2.front import Shape, ShapeRefusal, parse
from st2.fs.read import SNAPSHOT_LIMIT, read_bounded
from st2.kit.usage import history, knobs as knob_table
from st2.records import usage_snapshot
from st2.records.usage_snapshot import (  # noqa: F401 - the rule's outcomes, named where the verdict's callers read them
    ACCOUNT_KEYED, JUDGED_AGE_STALE, JUDGED_CLEAR, JUDGED_PAUSE_5H, JUDGED_PAUSE_7D, JUDGED_PAUSE_LONG_DEAD_SHORT,
    JUDGED_RESET_OK, KEYED, at_or_over, judge,
)

NEVER_BLOCKS = "never blocks delegation — re-read or refresh before trusting the number"
USAGE = (
    "usage: st2 usage verdict [--] [usage-file [credentials-file]]\n"
    "  the positionals override DELEGATION_KIT_USAGE_FILE and DELEGATION_KIT_CRED_FILE;\n"
    '  "--" ends option processing, so a path beginning with "-" is passed after it'
)
# A refresh command that hangs must not hang every dispatch; the hook that calls us has its own
# (longer) timeout, and a killed refresh is just a failed one: the cached snapshot is judged.
REFRESH_TIMEOUT_SECONDS = 30.0

OK = "OK"
RESET_OK = "RESET-OK"
PAUSE = "PAUSE"
STALE = "STALE"
STATUS = {OK: 0, RESET_OK: 0, PAUSE: 1, STALE: 2}



ARGUMENTS = Shape(positionals=2, escape="first")  # ``[--] [usage-file [credentials-file]]``


def parse_arguments(args: list[str]) -> tuple[str | None, str | None]:
    """Return the (usage-file, credentials-file) positionals of :data:`ARGUMENTS`. A dash-led
    word names no option here (there are none), so it is refused unless ``--`` came first; so
    is a third word. Raise :class:`ShapeRefusal` with the verb's one-line message."""
    try:
        words = parse(list(args), ARGUMENTS).positionals
    except ShapeRefusal as refusal:
        reason = str(refusal)
        if reason.startswith("unrecognized option:"):
            reason += ' — a path beginning with "-" is passed after a "--" separator'
        raise ShapeRefusal(f"usage-verdict: {reason}") from None
    return (words[0] if words else None, words[1] if len(words) > 1 else None)



def credentials_mtime(path: str) -> int:
    """The credentials file's mtime in whole seconds (the auth-event proxy); 0 when absent."""
    try:
        return int(os.stat(path).st_mtime)
    except OSError:
        return 0


def refresh(argv: tuple[str, ...], usage_file: str, live_account: str, min_age: int, now: int) -> bool:
    """Run the refresh command unless the snapshot is younger than ``min_age`` and names no other
    account than the live one. Return whether it was spawned. Never raises, never prints: its
    diagnostics would otherwise be relayed verbatim inside the verdict line's stream."""
    if not argv:
        return False
    try:
        text = read_bounded(usage_file, SNAPSHOT_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        text = None
    if text is not None:
        # A lenient read (the final line counts even unterminated): this only decides whether to
        # poll, and polling one time too many is harmless.
        cached = usage_snapshot.parse(text + "\n")
        switched = bool(cached.account and live_account and cached.account != live_account)
        if not switched and cached.updated_at.isdigit() and now - int(cached.updated_at) < min_age:
            return False
    import subprocess

    try:
        subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=REFRESH_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        pass
    return True


def _fallback_width(environ) -> str:
    value = environ.get("DELEGATION_KIT_FAN_WIDTH", "")
    return value if value.isdigit() and int(value) > 0 else knob_table.TABLE["DELEGATION_KIT_FAN_WIDTH"].default


def _stale(body: str) -> tuple[str, int]:
    return f"{body} -> {STALE} ({NEVER_BLOCKS})", STATUS[STALE]


def verdict(args: list[str], environ=None, now: int | None = None, stderr=None, *,
            refreshing: bool = True, sampling: bool = True) -> tuple[str, int]:
    """Judge the usage snapshot. Return ``(line, status)``: status 0 OK/RESET-OK, 1 PAUSE,
    2 STALE. A view (``st2 top``) judges with ``refreshing=False`` (never spawns the refresh
    command: no network from a view) and ``sampling=False`` (appends no sample: the verdict's
    callers are the history's single author). A shape refusal writes the usage to ``stderr`` and returns ``("", 2)``; a
    malformed knob configuration writes every finding to ``stderr`` and returns a STALE line.
    ``environ`` defaults to ``os.environ``, ``now`` (epoch seconds) to the wall clock."""
    environ = os.environ if environ is None else environ
    stderr = sys.stderr if stderr is None else stderr
    try:
        usage_argument, credentials_argument = parse_arguments(args)
    except ShapeRefusal as refusal:
        stderr.write(f"{refusal}\n{USAGE}\n")
        return "", STATUS[STALE]
    try:
        config = knob_table.resolve(environ)
    except knob_table.KnobError as error:
        for finding in error.findings:
            stderr.write(f"usage-verdict: {finding}\n")
        return _stale(
            f"usage-verdict: malformed knob configuration ({len(error.findings)} finding(s) on stderr)"
            f" width={_fallback_width(environ)}"
        )
    paths = knob_table.usage_paths(config, environ)
    usage_file = usage_argument if usage_argument is not None else paths.usage_file
    credentials_file = credentials_argument if credentials_argument is not None else paths.cred_file
    width = config.scalar("DELEGATION_KIT_FAN_WIDTH")
    history_path = config.scalar("DELEGATION_KIT_USAGE_HISTORY")
    now = int(time.time()) if now is None else now

    # The live identity is read before the refresh: its short-circuit is keyed on it too.
    live_account = usage_snapshot.json_field(paths.account_config, ("oauthAccount", "accountUuid"))
    if refreshing:
        refresh(
            config.indexed("DELEGATION_KIT_REFRESH_CMD"),
            usage_file,
            live_account,
            config.integer("DELEGATION_KIT_REFRESH_MIN_AGE"),
            now,
        )

    reading = usage_snapshot.read_file(usage_file)
    if reading.outcome == usage_snapshot.UNREADABLE:
        return _stale(f"usage-verdict: cannot read {usage_file} width={width}")
    parsed = reading.snapshot
    if reading.outcome == usage_snapshot.MISSING_KEYS:
        return _stale(
            f"usage-verdict: missing key(s) in {usage_file} (pct={parsed.five_hour_used_pct!r}"
            f" resets_at={parsed.five_hour_resets_at!r} updated_at={parsed.updated_at!r}) width={width}"
        )
    if reading.outcome == usage_snapshot.NON_NUMERIC:
        value = getattr(parsed, reading.detail)
        return _stale(f"usage-verdict: non-numeric {reading.detail}={value!r} in {usage_file} width={width}")
    if reading.outcome == usage_snapshot.DUPLICATE_KEY:
        return _stale(f"usage-verdict: duplicate key {reading.detail} in {usage_file} width={width}")
    if usage_snapshot.future_skewed(parsed, now):
        return _stale(f"usage-verdict: updated_at={parsed.updated_at} is {int(parsed.updated_at) - now}s in the future"
                      f" in {usage_file} width={width}")

    age = now - int(parsed.updated_at)
    resets_in = int(parsed.five_hour_resets_at) - now
    login_at = credentials_mtime(credentials_file)
    # The witness is read before this run's own append, so it is always a previous reading.
    previous = history.previous_boundary(history_path, parsed.account)
    rolled = (
        previous is not None
        and int(parsed.five_hour_resets_at) != previous
        and int(parsed.updated_at) > previous
    )
    weekly = f" (7d {parsed.seven_day_used_pct}%)" if parsed.weekly_armed() else ""
    reading_text = (
        f"usage-verdict: used={parsed.five_hour_used_pct}%{weekly} age={age}s"
        f" resets_in={resets_in}s width={width}"
    )

    stale_age = config.integer("DELEGATION_KIT_STALE_AGE")
    judged = judge(
        parsed,
        now,
        config.scalar("DELEGATION_KIT_PAUSE_PCT"),
        config.scalar("DELEGATION_KIT_PAUSE_PCT_7D"),
        stale_age,
    )
    if judged == JUDGED_RESET_OK:
        word = RESET_OK
        consequence = (
            f"window rolled over {abs(resets_in)}s ago; pct is from the dead window and pauses nothing"
            " — re-read for the live value"
        )
    elif judged == JUDGED_AGE_STALE:
        word = STALE
        consequence = f"reading older than {stale_age}s; pct may lag reality; {NEVER_BLOCKS}"
    elif judged == JUDGED_PAUSE_7D:
        word = PAUSE
        consequence = (
            f"at or over {config.scalar('DELEGATION_KIT_PAUSE_PCT_7D')}% of the live weekly window;"
            " remediation is days, not hours — dispatch nothing new until it resets"
        )
    elif judged == JUDGED_PAUSE_5H:
        word = PAUSE
        consequence = (
            f"at or over {config.scalar('DELEGATION_KIT_PAUSE_PCT')}% of the live 5h window;"
            " dispatch nothing new until it resets"
        )
    else:
        word, consequence = _reroute(parsed, live_account, login_at, now, rolled, config)

    if history_path and sampling:
        history.append(history_path, history.sample_line(parsed, word, login_at))
    if word == PAUSE:
        axis = "7-day window" if judged == JUDGED_PAUSE_7D else "5h window"
        return f"{reading_text} -> {PAUSE} ({axis}): {consequence}", STATUS[PAUSE]
    return f"{reading_text} -> {word} ({consequence})", STATUS[word]


def _reroute(parsed, live_account: str, login_at: int, now: int, rolled: bool, config) -> tuple[str, str]:
    """The post-login reroute over a would-be OK: (word, consequence)."""
    keyed = bool(parsed.account and live_account)
    if keyed and parsed.account != live_account:
        return STALE, f"snapshot predates an account switch; {NEVER_BLOCKS}"
    since_login = now - login_at
    if keyed:
        lagging = int(parsed.updated_at) - login_at < config.integer("DELEGATION_KIT_LOGIN_SETTLE")
    else:
        lagging = since_login < config.integer("DELEGATION_KIT_LOGIN_WINDOW")
    if login_at > 0 and since_login >= 0 and lagging and not rolled:
        return STALE, (
            f"auth changed {since_login}s ago; a /login starts fresh windows the server-fed pct lags;"
            f" {NEVER_BLOCKS}"
        )
    return OK, "fresh reading under its pause thresholds; headroom now — a floor, not a recommendation"


def verdict_word(line: str) -> str:
    """The verdict word of a verdict line (``OK``, ``RESET-OK``, ``PAUSE``, ``STALE``); a line
    that names none (a shape refusal's empty line) reads ``STALE``."""
    return line.rsplit(" -> ", 1)[-1].split(" ", 1)[0] if " -> " in line else STALE


def main(argv: list[str], environ=None) -> int:
    """Hot-path entry (`st2 usage verdict …`): print the line, return the status. ``environ``
    (default ``os.environ``) is where the knobs resolve: a declared account's
    (:mod:`st2.accounts.usage`, which the front door runs for ``--account``)."""
    line, status = verdict(argv, environ)
    if line:
        sys.stdout.write(line + "\n")
    return status
