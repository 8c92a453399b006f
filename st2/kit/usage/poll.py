"""`st2 usage poll [--timeout SECONDS]`: one poll cycle of the usage snapshot's poll producer.

1. Read the harness OAuth token (``claudeAiOauth.accessToken``) from the credentials file. The
   token goes into the request's Authorization header and nowhere else: it is never logged,
   echoed, written to the snapshot or put into an error message.
2. GET ``DELEGATION_KIT_USAGE_ENDPOINT`` (default the Anthropic OAuth usage endpoint; a
   ``file://`` URL is the test seam and the valve when the unpublished source moves).
3. Map the payload onto the usage.txt contract: ``five_hour.utilization`` / ``resets_at``
   (mandatory) and ``seven_day.*`` (both or neither), ``tier`` from the credentials'
   ``subscriptionType``, ``account`` from the account config's ``oauthAccount.accountUuid``;
   ``updated_at`` is the poll time. Percentages keep the source's own spelling.
4. Rewrite the snapshot atomically.

Fail-soft: a missing or unreadable credentials file, a fetch failure (HTTP error, refused
connection, timeout) or an unparseable payload exits 1 with a ``help:`` line and leaves the
snapshot byte-identical; usage-verdict then judges the cached snapshot's age (STALE, never a
silent green). A malformed knob configuration or argv exits 2. No daemon, no loop: the
``st2-usage-poll.timer`` or ``DELEGATION_KIT_REFRESH_CMD`` schedules it.

Real response shapes: ``captures/anthropic-oauth-usage/``. Standard library only (it runs on the
verdict's demand-driven refresh path).
"""

from __future__ import annotations

import os
import sys
import time

from st2.fs.read import SNAPSHOT_LIMIT, read_bounded
from st2.kit.usage import knobs as knob_table
from st2.records import usage_snapshot

DEFAULT_TIMEOUT_SECONDS = 30.0
MAXIMUM_PAYLOAD_BYTES = 1 << 20
USAGE = "usage: st2 usage poll [--timeout SECONDS]"
# Headers the harness itself sends on OAuth-authenticated calls (captures/anthropic-oauth-usage/
# request.json): without the beta header the endpoint does not accept an OAuth bearer token.
BETA_HEADER = ("anthropic-beta", "oauth-2025-04-20")


class PollFailure(Exception):
    """One poll cycle failed; ``problem`` and ``help`` never contain the token."""

    def __init__(self, problem: str, help: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.help = help


UNTOUCHED = "the snapshot is untouched; usage-verdict judges its age (STALE, never a silent green)"


def read_token(credentials_file: str) -> str:
    """The OAuth access token from the credentials file, or raise :class:`PollFailure`."""
    import json

    try:
        document = json.loads(read_bounded(credentials_file, SNAPSHOT_LIMIT))
    except FileNotFoundError:
        raise PollFailure(
            f"credentials file missing: {credentials_file}",
            f"log the harness in, or point DELEGATION_KIT_CRED_FILE at its credentials file; {UNTOUCHED}",
        ) from None
    except (OSError, ValueError, RecursionError) as error:
        raise PollFailure(
            f"credentials file unreadable: {credentials_file} ({error.__class__.__name__})",
            f"check the file's permissions and JSON; {UNTOUCHED}",
        ) from None
    oauth = document.get("claudeAiOauth") if isinstance(document, dict) else None
    token = oauth.get("accessToken") if isinstance(oauth, dict) else None
    if not isinstance(token, str) or not token:
        raise PollFailure(
            f"no claudeAiOauth.accessToken in {credentials_file}",
            f"log the harness in with a subscription (OAuth) account; {UNTOUCHED}",
        )
    return token


def fetch(endpoint: str, token: str, timeout: float) -> bytes:
    """GET ``endpoint`` with the bearer token; return the body or raise :class:`PollFailure`."""
    import socket
    import urllib.error
    import urllib.request

    scheme = endpoint.partition(":")[0].lower()
    if scheme not in ("https", "http", "file"):
        raise PollFailure(
            f"unsupported endpoint scheme {scheme!r} in DELEGATION_KIT_USAGE_ENDPOINT",
            f"use an https:// URL (or file:// for a stub); {UNTOUCHED}",
        )
    request = urllib.request.Request(
        endpoint,
        headers={
            "Authorization": f"Bearer {token}",
            BETA_HEADER[0]: BETA_HEADER[1],
            "Accept": "application/json",
        },
        method="GET",
    )
    failure_help = f"check the network and the account's login; if the source moved, set DELEGATION_KIT_USAGE_ENDPOINT; {UNTOUCHED}"
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAXIMUM_PAYLOAD_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise PollFailure(f"fetch failed: {endpoint} answered HTTP {error.code}", failure_help) from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise PollFailure(f"fetch failed: {endpoint} timed out after {timeout:g}s", failure_help) from None
        raise PollFailure(f"fetch failed: {endpoint} ({reason.__class__.__name__})", failure_help) from None
    except (socket.timeout, TimeoutError):
        raise PollFailure(f"fetch failed: {endpoint} timed out after {timeout:g}s", failure_help) from None
    except (OSError, ValueError) as error:
        raise PollFailure(f"fetch failed: {endpoint} ({error.__class__.__name__})", failure_help) from None
    if len(body) > MAXIMUM_PAYLOAD_BYTES:
        raise PollFailure(f"unparseable payload: {endpoint} sent more than {MAXIMUM_PAYLOAD_BYTES} bytes", failure_help)
    return body


def epoch_of(value) -> str:
    """A reset stamp as epoch-seconds text: an all-digit value passes through; an ISO-8601 stamp
    (the endpoint's ``2025-11-25T22:00:00.288792+00:00``; a naive one is read as UTC) converts,
    floored to the second; anything else is ""."""
    if not isinstance(value, str) or not value:
        return ""
    if value.isdigit() and value.isascii():
        return value
    from datetime import datetime, timezone

    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return ""
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return str(int(stamp.timestamp() // 1))


def map_payload(body: bytes, endpoint: str) -> tuple[str, str, str, str]:
    """Map a usage payload to (five_hour_used_pct, five_hour_resets_at, seven_day_used_pct,
    seven_day_resets_at); the weekly pair is ("", "") unless both are readable. Raise
    :class:`PollFailure` when the five-hour window cannot be read."""
    import json

    moved = f"the source shape moved — compare it with captures/anthropic-oauth-usage/; {UNTOUCHED}"
    try:
        # Numbers stay text, so 19.0 is written as the source spelled it, never re-rendered.
        document = json.loads(body, parse_float=str, parse_int=str)
    except (ValueError, RecursionError):  # nesting past the recursion limit is malformed too
        raise PollFailure(f"unparseable payload: {endpoint} did not send JSON", moved) from None
    if not isinstance(document, dict):
        raise PollFailure(f"unparseable payload: {endpoint} sent no JSON object", moved)

    def window(name: str) -> tuple[str, str]:
        entry = document.get(name)
        if not isinstance(entry, dict):
            return "", ""
        utilization = entry.get("utilization")
        utilization = utilization if isinstance(utilization, str) and usage_snapshot.is_percentage(utilization) else ""
        return utilization, epoch_of(entry.get("resets_at"))

    five_pct, five_resets = window("five_hour")
    if not five_pct:
        raise PollFailure(f"unparseable payload: no five_hour.utilization at {endpoint}", moved)
    if not five_resets:
        raise PollFailure(f"unparseable payload: no five_hour.resets_at epoch at {endpoint}", moved)
    seven_pct, seven_resets = window("seven_day")
    if not (seven_pct and seven_resets):
        seven_pct = seven_resets = ""
    return five_pct, five_resets, seven_pct, seven_resets


def poll(environ=None, now: int | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> str:
    """Run one poll cycle; return the snapshot path written. Raise :class:`PollFailure` (the
    snapshot untouched) or :class:`st2.kit.usage.knobs.KnobError`."""
    environ = os.environ if environ is None else environ
    config = knob_table.resolve(environ)
    paths = knob_table.usage_paths(config, environ)
    token = read_token(paths.cred_file)
    endpoint = config.scalar("DELEGATION_KIT_USAGE_ENDPOINT")
    body = fetch(endpoint, token, timeout)
    del token  # nothing below needs it
    five_pct, five_resets, seven_pct, seven_resets = map_payload(body, endpoint)
    tier = usage_snapshot.json_field(paths.cred_file, ("claudeAiOauth", "subscriptionType"))
    account = usage_snapshot.json_field(paths.account_config, ("oauthAccount", "accountUuid"))
    reading = usage_snapshot.Snapshot(
        five_hour_used_pct=five_pct,
        five_hour_resets_at=five_resets,
        updated_at=str(int(time.time()) if now is None else now),
        seven_day_used_pct=seven_pct,
        seven_day_resets_at=seven_resets,
        account=account if usage_snapshot.is_word(account) else "",
        tier=tier if usage_snapshot.is_word(tier) else "",
    )
    try:
        usage_snapshot.write(paths.usage_file, reading)
    except (OSError, ValueError) as error:
        raise PollFailure(
            f"cannot write the snapshot at {paths.usage_file} ({error.__class__.__name__})",
            "check that its directory exists and is writable; the previous snapshot is untouched",
        ) from None
    return paths.usage_file


def parse_arguments(argv: list[str]) -> float:
    """Return the timeout; raise ValueError with a message for any other shape."""
    timeout = DEFAULT_TIMEOUT_SECONDS
    words = list(argv)
    while words:
        word = words.pop(0)
        if word == "--timeout" and words:
            value = words.pop(0)
        elif word.startswith("--timeout="):
            value = word.partition("=")[2]
        else:
            raise ValueError(f"usage-poll: unexpected argument: {word}")
        try:
            timeout = float(value)
        except ValueError:
            raise ValueError(f"usage-poll: --timeout takes seconds, not {value!r}") from None
        if not timeout > 0:
            raise ValueError("usage-poll: --timeout must be positive")
    return timeout


def cycle(environ, timeout: float, prefix: str = "usage-poll: ") -> int:
    """One poll cycle in ``environ`` with its report lines (each led by ``prefix``): 0 written,
    1 fail-soft cycle failure, 2 malformed knob configuration."""
    try:
        path = poll(environ, timeout=timeout)
    except knob_table.KnobError as error:
        for finding in error.findings:
            sys.stderr.write(f"{prefix}{finding}\n")
        sys.stderr.write("  help: fix the knob configuration; the snapshot is untouched\n")
        return 2
    except PollFailure as failure:
        sys.stderr.write(f"{prefix}{failure.problem}\n  help: {failure.help}\n")
        return 1
    except Exception as error:  # never a traceback: a frame could be printed near the token
        sys.stderr.write(
            f"{prefix}unexpected {error.__class__.__name__}\n  help: report it; the snapshot is untouched\n"
        )
        return 1
    sys.stdout.write(f"{prefix}wrote {path}\n")
    return 0


def main(argv: list[str], environ=None, prefix: str = "usage-poll: ") -> int:
    """Hot-path entry (`st2 usage poll`): 0 written, 1 fail-soft cycle failure, 2 misuse.
    ``environ`` as for :func:`st2.kit.usage.verdict.main`; ``prefix`` leads each report line."""
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n")
        return 0
    try:
        timeout = parse_arguments(argv)
    except ValueError as error:
        sys.stderr.write(f"{error}\n{USAGE}\n")
        return 2
    return cycle(os.environ if environ is None else environ, timeout, prefix)
