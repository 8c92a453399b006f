"""Web Push for `st2 web` (RFC 8030, with RFC 8291 encryption and RFC 8292 VAPID): fleet events
sent to the browsers that asked for them, even while no page is open.

- **VAPID key**: one P-256 key pair per host, made once (py-vapid), its private key as PKCS#8
  PEM in the session store's ``web/vapid-private.pem`` (:func:`st2.runtime.layout.web_vapid_private`),
  mode 0600, published with ``link`` so two servers starting together agree on the first one; a
  key others may read is refused. :func:`application_server_key` is its public point, base64url,
  what a page hands ``PushManager.subscribe``. Every push carries ``Authorization: vapid t=<JWT
  signed by it, aud = the endpoint's origin, sub = mailto:st2@<host>>,k=<that public point>``.
- **Subscriptions**: host-local in ``web/subscriptions.json`` — a JSON list of ``{"endpoint",
  "keys": {"p256dh", "auth"}, "kinds": [...]}`` — published atomically under its record lock and
  read bounded. A file that is not such a list reads as none, an entry that is not valid is left
  out, and each says so in ``web/push.log``. :func:`subscribe` validates what a browser sends:
  an ``http(s)`` endpoint whose origin is a host and optional port, ``p256dh`` a P-256 public
  point and ``auth`` 16 bytes, both base64url, and ``kinds`` fleet event kinds
  (:mod:`st2.declarations.event_kinds`; :data:`DEFAULT_KINDS` when none are given).
- **Pusher**: for each fleet event, one push per subscription whose kinds include its kind: the
  payload (:func:`payload`) encrypted ``aes128gcm`` to the subscription's keys (pywebpush). The
  queue, the one worker thread, the rate limit per endpoint, seat and kind and its summary lines
  are the notify hooks' (:class:`st2.events.dispatch.Dispatcher`), so :meth:`Pusher.submit`
  never blocks the server's event loop. Each failure is one line in ``web/push.log`` (rotated
  past :data:`st2.events.notify.LOG_BYTES`, like ``notify.log``); a push service answering 404
  or 410 has forgotten the subscription, which is then dropped (and that is logged).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Callable, NamedTuple
from urllib.parse import quote, urlsplit

from st2.catalog.names import shown
from st2.declarations.catalog import DEFAULT_NOTIFY_RATE_LIMIT_SECONDS, DEFAULT_NOTIFY_TIMEOUT_SECONDS
from st2.declarations.event_kinds import BLOCKED, KINDS, PARKED, PAUSE
from st2.events.dispatch import Dispatcher
from st2.events.event import FleetEvent
from st2.events.notify import LOG_BYTES, stamp
from st2.fs.atomic import ensure_directory, publish, write_temp
from st2.fs.lock import record_lock
from st2.fs.log import append_line
from st2.fs.read import read_bounded
from st2.runtime import layout

DEFAULT_KINDS = (BLOCKED, PARKED, PAUSE)
MAX_SUBSCRIPTIONS = 64
SUBSCRIPTIONS_LIMIT = 256 * 1024  # 64 subscriptions of the longest endpoint fit with room
ENDPOINT_LIMIT = 2048
KEY_LIMIT = 16 * 1024
BODY_SHOWN = 1000  # characters of the event's human line a notification carries (a push is at most 4 KiB)
TIME_TO_LIVE_SECONDS = 12 * 3600  # how long a push service keeps a push for a phone that is offline
GONE = (404, 410)  # the push service has forgotten the subscription (RFC 8030 §7.3)
# pywebpush's check of the JWT's ``aud``: scheme, host and an optional port, nothing else.
ORIGIN = re.compile(r"https?://[^/:@\s]+(:\d+)?")
BASE64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")


class SubscriptionRefused(ValueError):
    """What a browser sent is not a push subscription st2 can use."""


class VapidUnreadable(OSError):
    """The key file exists but is not one st2 wrote (not a P-256 PEM key, or readable by others)."""


def _decoded(text: object, name: str) -> bytes:
    if not isinstance(text, str) or len(text) > 512 or not BASE64URL.fullmatch(text):
        raise SubscriptionRefused(f"`keys.{name}` is not base64url")
    try:
        return base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        raise SubscriptionRefused(f"`keys.{name}` is not base64url") from None


def _encoded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Subscription(NamedTuple):
    """One browser's subscription. ``where`` names it in the log: the push service's origin and a
    digest of the endpoint (an endpoint is a capability; the log never holds one)."""

    endpoint: str
    p256dh: str
    auth: str
    kinds: tuple[str, ...]
    where: str
    rate_limit_seconds: float = DEFAULT_NOTIFY_RATE_LIMIT_SECONDS

    def wire(self) -> dict:
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth},
                "kinds": list(self.kinds)}


def checked(subscription: object, kinds: object = None) -> Subscription:
    """``subscription`` (a ``PushSubscription``'s JSON: ``endpoint`` and ``keys``) for ``kinds``
    (:data:`DEFAULT_KINDS` when None) as a :class:`Subscription`; raise
    :class:`SubscriptionRefused` naming what is wrong."""
    from cryptography.hazmat.primitives.asymmetric import ec

    if not isinstance(subscription, dict):
        raise SubscriptionRefused("a subscription is an object with `endpoint` and `keys`")
    endpoint, keys = subscription.get("endpoint"), subscription.get("keys")
    if not isinstance(endpoint, str) or not 0 < len(endpoint) <= ENDPOINT_LIMIT or not endpoint.isprintable() \
            or " " in endpoint:
        raise SubscriptionRefused(f"`endpoint` is not a URL of at most {ENDPOINT_LIMIT} characters")
    parts = urlsplit(endpoint)
    if parts.scheme not in ("https", "http") or not ORIGIN.fullmatch(f"{parts.scheme}://{parts.netloc}"):
        raise SubscriptionRefused("`endpoint` is not an http(s) URL whose origin is a host and optional port")
    if not isinstance(keys, dict):
        raise SubscriptionRefused("`keys` is not an object with `p256dh` and `auth`")
    point, auth = _decoded(keys.get("p256dh"), "p256dh"), _decoded(keys.get("auth"), "auth")
    try:
        if len(point) != 65:
            raise ValueError
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        raise SubscriptionRefused("`keys.p256dh` is not an uncompressed P-256 public point") from None
    if len(auth) != 16:
        raise SubscriptionRefused("`keys.auth` is not 16 bytes")
    if kinds is None:
        kinds = DEFAULT_KINDS
    if not isinstance(kinds, (list, tuple)) or not kinds or not all(kind in KINDS for kind in kinds):
        raise SubscriptionRefused(f"`kinds` is not a non-empty list of event kinds ({', '.join(KINDS)})")
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:8]
    return Subscription(endpoint, _encoded(point), _encoded(auth), tuple(dict.fromkeys(kinds)),
                        f"push {parts.scheme}://{parts.netloc} #{digest}")


def log(store: Path, line: str) -> None:
    """One line in ``web/push.log`` (owner-only, bounded like ``notify.log``)."""
    append_line(str(layout.web_push_log(store)), f"{stamp()} {shown(line)}\n", rotate_at=LOG_BYTES)


def read_subscriptions(store: Path) -> tuple[list[Subscription], list[str]]:
    """The stored subscriptions and a line for each problem found (never raises): a missing file
    is none; an unreadable or malformed one is none, said once; an invalid entry is left out."""
    path = layout.web_subscriptions(store)
    name = f"{layout.WEB}/{layout.WEB_SUBSCRIPTIONS}"
    try:
        body = json.loads(read_bounded(path, SUBSCRIPTIONS_LIMIT))
    except FileNotFoundError:
        return [], []
    except (OSError, ValueError) as error:
        return [], [f"{name} is unreadable or malformed ({error}); it reads as no subscription"]
    if not isinstance(body, list):
        return [], [f"{name} is malformed (not a list); it reads as no subscription"]
    found: dict[str, Subscription] = {}
    problems = []
    for number, entry in enumerate(body[:MAX_SUBSCRIPTIONS], 1):
        try:
            subscription = checked(entry, entry.get("kinds") if isinstance(entry, dict) else None)
        except SubscriptionRefused as refusal:
            problems.append(f"{name}: entry {number} left out: {refusal}")
            continue
        found[subscription.endpoint] = subscription
    if len(body) > MAX_SUBSCRIPTIONS:
        problems.append(f"{name}: {len(body) - MAX_SUBSCRIPTIONS} entries past {MAX_SUBSCRIPTIONS} left out")
    return list(found.values()), problems


def _rewrite(store: Path, change: Callable[[list[Subscription]], list[Subscription]]) -> list[Subscription]:
    """Apply ``change`` to the stored subscriptions under their record lock and publish the
    result atomically; the result."""
    path = layout.web_subscriptions(store)
    ensure_directory(layout.web(store), 0o700)
    staging = ensure_directory(layout.staging(store), 0o700)
    with record_lock(path):
        current, problems = read_subscriptions(store)
        for line in problems:
            log(store, line)
        changed = change(current)
        if changed != current:
            data = json.dumps([subscription.wire() for subscription in changed], indent=1) + "\n"
            publish(path, data.encode(), staging, mode=0o600)
    return changed


def subscribe(store: Path, subscription: object, kinds: object = None) -> Subscription:
    """Keep ``subscription`` for ``kinds`` (replacing what its endpoint had); raise
    :class:`SubscriptionRefused` when it is not valid or :data:`MAX_SUBSCRIPTIONS` are kept."""
    entry = checked(subscription, kinds)

    def added(current: list[Subscription]) -> list[Subscription]:
        others = [kept for kept in current if kept.endpoint != entry.endpoint]
        if len(others) >= MAX_SUBSCRIPTIONS:
            raise SubscriptionRefused(f"{MAX_SUBSCRIPTIONS} browsers are subscribed already: unsubscribe one first")
        return others + [entry]

    _rewrite(store, added)
    return entry


def unsubscribe(store: Path, endpoint: str) -> bool:
    """Forget the subscription of ``endpoint``; whether there was one."""
    found = []

    def removed(current: list[Subscription]) -> list[Subscription]:
        kept = [subscription for subscription in current if subscription.endpoint != endpoint]
        found.append(len(kept) != len(current))
        return kept

    _rewrite(store, removed)
    return found[0]


def load_vapid(store: Path):
    """This host's VAPID key (a ``py_vapid.Vapid``), made on first use; raise
    :class:`VapidUnreadable` for a key file others may read or st2 did not write."""
    from py_vapid import Vapid

    path = layout.web_vapid_private(store)
    ensure_directory(path.parent, 0o700)
    if not os.path.lexists(path):
        fresh = Vapid()
        fresh.generate_keys()
        staging = ensure_directory(layout.staging(store), 0o700)
        temp = write_temp(staging, layout.WEB_VAPID_PRIVATE, fresh.private_pem(), 0o600)
        try:
            os.link(temp, path)  # never replaces: a key another server made first wins
        except FileExistsError:
            pass
        finally:
            os.unlink(temp)
    if os.stat(path).st_mode & 0o077:
        raise VapidUnreadable(f"{path}: readable by others; `chmod 600` it or delete it to make a new one")
    try:
        vapid = Vapid.from_pem(read_bounded(path, KEY_LIMIT))
    except Exception:  # py-vapid raises what cryptography raises for a bad key, of several kinds
        raise VapidUnreadable(f"{path}: not a VAPID key st2 wrote; delete it to make a new one") from None
    # py-vapid's strict `sub` check wants a dotted mail domain; a host name may have no dot.
    vapid.conf = {"no-strict": True}
    return vapid


def public_key(vapid) -> str:
    """The applicationServerKey of ``vapid``: its uncompressed public point, base64url."""
    from cryptography.hazmat.primitives import serialization

    point = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return _encoded(point)


def application_server_key(store: Path) -> str:
    """What a page passes to ``PushManager.subscribe`` as ``applicationServerKey``."""
    return public_key(load_vapid(store))


def payload(item: FleetEvent) -> str:
    """The JSON a push carries, what ``sw.js`` shows: title, body (the event's human line), a tag
    per kind and seat (a newer notification replaces an older one) and the page to open."""
    seat = item.seat or "fleet"
    body = item.human()
    if len(body) > BODY_SHOWN:
        body = body[:BODY_SHOWN - 1] + "…"
    url = f"/seat/{quote(item.seat, safe='')}" if item.seat else "/events"
    return json.dumps({"title": f"st2: {item.kind} {seat}", "body": body, "tag": f"{item.kind}:{seat}", "url": url},
                      ensure_ascii=False)


class Pusher(Dispatcher):
    """The pushes of one `st2 web` server, over the session store ``store`` of host ``host``."""

    thread_name = "st2-push"

    def __init__(self, store: Path, host: str, *, say: Callable[[str], None] = lambda line: None,
                 monotonic: Callable[[], float] = time.monotonic,
                 timeout_seconds: float = DEFAULT_NOTIFY_TIMEOUT_SECONDS) -> None:
        super().__init__(monotonic=monotonic)
        self.store = Path(store)
        self.subject = f"mailto:st2@{host}"
        self.say = say
        self.timeout_seconds = timeout_seconds
        self.subscriptions: tuple[Subscription, ...] = ()
        self._vapid = None
        self.reload()

    def report(self, line: str) -> None:
        log(self.store, line)
        self.say(f"push: {line}")

    def reload(self) -> None:
        """Re-read the stored subscriptions (saying what is wrong with them)."""
        found, problems = read_subscriptions(self.store)
        for line in problems:
            self.report(line)
        self.subscriptions = tuple(found)

    def subscribe(self, subscription: object, kinds: object = None) -> Subscription:
        entry = subscribe(self.store, subscription, kinds)
        self.reload()
        return entry

    def unsubscribe(self, endpoint: str) -> bool:
        found = unsubscribe(self.store, endpoint)
        self.reload()
        return found

    def submit(self, events: list[FleetEvent]) -> None:
        """Enqueue the pushes ``events`` call for; never blocks, never reads a file."""
        subscriptions = self.subscriptions
        for item in events:
            for subscription in subscriptions:
                if item.kind in subscription.kinds:
                    self.offer(subscription.endpoint, subscription, item)

    def run(self, subscription: Subscription, item: FleetEvent) -> None:
        """Send one push; a failure is one line, and 404 or 410 drops the subscription."""
        from pywebpush import WebPushException, webpush

        if subscription.endpoint not in {kept.endpoint for kept in self.subscriptions}:
            return  # dropped or unsubscribed while this push waited
        if self._vapid is None:
            self._vapid = load_vapid(self.store)
        label = f"{subscription.where} for {item.kind} {item.seat or 'fleet'} #{item.seq}"
        try:
            webpush({"endpoint": subscription.endpoint, "keys": {"p256dh": subscription.p256dh,
                                                                  "auth": subscription.auth}},
                    payload(item), vapid_private_key=self._vapid, vapid_claims={"sub": self.subject},
                    timeout=self.timeout_seconds, ttl=TIME_TO_LIVE_SECONDS)
        except WebPushException as error:
            response = error.response
            status = getattr(response, "status_code", None)
            if status in GONE:
                self.unsubscribe(subscription.endpoint)
                self.report(f"{label}: the push service answered {status}; subscription dropped")
                return
            answer = f"HTTP {status} {getattr(response, 'reason', '') or ''}".strip() if status else str(error)
            self.report(f"{label}: failed ({answer[:200]})")
        except Exception as error:  # requests' connection errors and timeouts, above all
            self.report(f"{label}: failed: {type(error).__name__}: {str(error)[:200]}")
