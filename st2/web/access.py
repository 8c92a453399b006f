"""Who may use `st2 web`: the per-host secret, pairing links, session cookies, CSRF tokens and the
pairing throttle. Every token is ``<fields>.<mac>`` with the MAC an HMAC-SHA256 under the secret
over a purpose word and the fields, so a token of one purpose is never accepted for another.

- **Secret**: 32 random bytes as hex in the session store's ``web/secret``
  (:func:`st2.runtime.layout.web_secret`), mode 0600, made once with ``O_EXCL`` (two servers
  starting together agree on the first one written). It never leaves this host and is never
  printed; deleting it signs every browser out.
- **Pairing link**: ``/pair?token=<expires>.<nonce>.<mac>``, valid for :data:`PAIRING_SECONDS`
  and once: its first use creates ``web/paired/<nonce>`` with ``O_EXCL``; a second use is refused.
- **Session cookie** :data:`COOKIE`: ``<issued>.<sid>.<mac>``, valid for :data:`SESSION_SECONDS`.
- **CSRF token**: ``<boot>.<nonce>.<mac>`` over the session id: valid only for that session, only
  in this server process (``boot`` is drawn at start) and only once (:class:`CsrfTokens` keeps
  the used nonces; a form carries a fresh token every time a page is rendered).
- **Throttle**: :class:`Throttle` admits at most :data:`FAILURES_PER_WINDOW` failed pairings per
  client address and :data:`GLOBAL_FAILURES_PER_WINDOW` over all addresses per
  :data:`WINDOW_SECONDS`; beyond that every pairing attempt is answered 429 until the window
  passes, a valid link included.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

from st2.fs.atomic import ensure_directory
from st2.fs.read import read_bounded
from st2.runtime import layout

COOKIE = "st2_session"
PAIRING_SECONDS = 600
SESSION_SECONDS = 30 * 24 * 3600
FAILURES_PER_WINDOW = 10
GLOBAL_FAILURES_PER_WINDOW = 100
WINDOW_SECONDS = 60.0
USED_CSRF_KEPT = 100_000
SECRET_BYTES = 32


class SecretUnreadable(OSError):
    """The secret file exists but is not one st2 wrote (wrong size, not hex, or group/world readable)."""


def load_secret(store: Path) -> bytes:
    """The host's secret, made on first use. Refuses a secret file others may read."""
    path = layout.web_secret(store)
    ensure_directory(path.parent, 0o700)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(SECRET_BYTES) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
    if os.stat(path).st_mode & 0o077:
        raise SecretUnreadable(f"{path}: readable by others; `chmod 600` it or delete it to make a new one")
    text = read_bounded(path, 4096).decode("ascii", errors="replace").strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != SECRET_BYTES:
        raise SecretUnreadable(f"{path}: not a secret st2 wrote; delete it to make a new one")
    return secret


def _mac(secret: bytes, purpose: str, *fields: str) -> str:
    message = "\0".join((purpose,) + fields).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _split(token: str, count: int) -> list[str] | None:
    parts = token.split(".")
    if len(parts) != count + 1 or not all(parts) or len(token) > 512:
        return None
    return parts


def _checked(secret: bytes, purpose: str, token: str, count: int, *bound: str) -> list[str] | None:
    """The fields of ``token`` when its MAC is right, else None."""
    parts = _split(token or "", count)
    if parts is None:
        return None
    fields, mac = parts[:-1], parts[-1]
    if not hmac.compare_digest(mac, _mac(secret, purpose, *bound, *fields)):
        return None
    return fields


class Access:
    """The host's secret and what it signs. ``clock`` returns wall seconds (a test's seam)."""

    def __init__(self, store: Path, clock=time.time) -> None:
        self.store = Path(store)
        self.secret = load_secret(self.store)
        self.clock = clock
        self.csrf = CsrfTokens(self.secret)

    # --- pairing links ------------------------------------------------------------------------
    def pairing_token(self, seconds: int = PAIRING_SECONDS) -> str:
        expires, nonce = str(int(self.clock()) + seconds), secrets.token_hex(16)
        return f"{expires}.{nonce}.{_mac(self.secret, 'pair', expires, nonce)}"

    def redeem(self, token: str) -> str | None:
        """A new session cookie's value for a valid, unexpired, unused pairing token, else None.
        Using the token spends it."""
        fields = _checked(self.secret, "pair", token, 2)
        if fields is None or not fields[0].isdigit() or int(fields[0]) < self.clock():
            return None
        nonce = fields[1]
        if not all(character in "0123456789abcdef" for character in nonce):
            return None
        paired = layout.web_paired(self.store)
        ensure_directory(paired, 0o700)
        try:
            os.close(os.open(paired / nonce, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        except FileExistsError:
            return None
        self._sweep(paired)
        return self.session_cookie()

    def _sweep(self, paired: Path) -> None:
        """Forget used links older than any link can be (they are expired anyway)."""
        horizon = self.clock() - 2 * PAIRING_SECONDS
        for entry in os.scandir(paired):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < horizon:
                    os.unlink(entry.path)
            except OSError:
                pass

    # --- sessions -------------------------------------------------------------------------------
    def session_cookie(self) -> str:
        issued, sid = str(int(self.clock())), secrets.token_hex(16)
        return f"{issued}.{sid}.{_mac(self.secret, 'session', issued, sid)}"

    def session_id(self, cookie: str | None) -> str | None:
        """The session id of a valid, unexpired cookie, else None."""
        fields = _checked(self.secret, "session", cookie or "", 2)
        if fields is None or not fields[0].isdigit() or int(fields[0]) + SESSION_SECONDS < self.clock():
            return None
        return fields[1]

    def bearer(self, purpose: str) -> str:
        """A long-lived token for a machine reader (``metrics`` for a Prometheus scrape)."""
        return _mac(self.secret, "bearer", purpose)

    def bearer_valid(self, purpose: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(token, self.bearer(purpose))


class CsrfTokens:
    """One-use CSRF tokens bound to a session and to this process."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.boot = secrets.token_hex(8)
        self.used: collections.OrderedDict[str, None] = collections.OrderedDict()

    def issue(self, sid: str) -> str:
        nonce = secrets.token_hex(12)
        return f"{self.boot}.{nonce}.{_mac(self.secret, 'csrf', sid, self.boot, nonce)}"

    def spend(self, sid: str, token: str | None) -> bool:
        """True once for a token this process issued to ``sid``; False for any other, and for a
        token already spent."""
        fields = _checked(self.secret, "csrf", token or "", 2, sid)
        if fields is None or fields[0] != self.boot or fields[1] in self.used:
            return False
        self.used[fields[1]] = None
        while len(self.used) > USED_CSRF_KEPT:
            self.used.popitem(last=False)
        return True


class Throttle:
    """Failed pairing attempts per client address and over all, in a sliding window."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self.failures: dict[str, collections.deque] = {}
        self.all: collections.deque = collections.deque()

    def _trim(self, times: collections.deque, now: float) -> None:
        while times and times[0] <= now - WINDOW_SECONDS:
            times.popleft()

    def admits(self, client: str) -> bool:
        now = self.clock()
        self._trim(self.all, now)
        times = self.failures.get(client)
        if times is not None:
            self._trim(times, now)
            if not times:
                del self.failures[client]
                times = None
        return len(self.all) < GLOBAL_FAILURES_PER_WINDOW and (times is None or len(times) < FAILURES_PER_WINDOW)

    def failed(self, client: str) -> None:
        now = self.clock()
        self.all.append(now)
        self.failures.setdefault(client, collections.deque()).append(now)
