"""Web Push (:mod:`st2.web.push`) against a loopback push endpoint in a thread (unit tier: no
process). A browser cannot reach a vendor's push service offline, so the test is the browser:
it makes the subscription's key pair and auth secret itself, and reads what arrives — a
VAPID-signed request for the endpoint's origin, whose ``aes128gcm`` body decrypts with the
subscription's key to the event. 404 and 410 drop the subscription, other failures keep it; a
seat and kind pushes once per rate-limit window, and the window's held-back pushes are one line."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import time
from pathlib import Path

import http_ece
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from loopback_http import Endpoint
from st2.declarations.event_kinds import KINDS
from st2.events.event import FleetEvent
from st2.runtime import layout
from st2.web import push
from support import poll_for

OBSERVED_MS = 1_788_000_000_123


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """What a browser keeps of its subscription: the P-256 key pair and the auth secret."""

    def __init__(self, endpoint: str) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        point = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        self.subscription = {"endpoint": endpoint, "expirationTime": None,
                             "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)}}

    def decrypt(self, body: bytes) -> dict:
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"))


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def event(seq: int, kind: str = "blocked", seat: str | None = "h.a") -> FleetEvent:
    return FleetEvent(kind, seat, "none", "human", OBSERVED_MS, {"ask": "permission"}, seq)


@pytest.fixture
def endpoint(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = Endpoint()
    yield server
    server.close()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def clock() -> Monotonic:
    return Monotonic()


@pytest.fixture
def pusher(store: Path, clock: Monotonic):
    made = push.Pusher(store, "h", monotonic=clock, timeout_seconds=5)
    yield made
    made.stop()


def log_lines(store: Path) -> list[str]:
    path = layout.web_push_log(store)
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


def stored(store: Path) -> list[dict]:
    return json.loads(layout.web_subscriptions(store).read_text())


def verify_vapid(authorization: str, server_key: str) -> dict:
    """The claims of ``vapid t=<JWT>,k=<key>`` after checking the JWT's ES256 signature with the
    host's public key (raising InvalidSignature otherwise)."""
    scheme, _, fields = authorization.partition(" ")
    assert scheme == "vapid"
    parts = dict(field.split("=", 1) for field in fields.split(","))
    assert parts["k"] == server_key
    header, claims, signature = parts["t"].split(".")
    assert json.loads(unb64url(header)) == {"typ": "JWT", "alg": "ES256"}
    raw = unb64url(signature)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                  f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    return json.loads(unb64url(claims))


def test_a_push_is_vapid_signed_for_the_endpoints_origin_and_decrypts_to_the_event(store, pusher, endpoint):
    browser = Browser(f"{endpoint.origin}/push/v2/a-subscription")
    entry = pusher.subscribe(browser.subscription)
    assert entry.kinds == ("blocked", "parked", "pause")
    assert stored(store) == [{"endpoint": browser.subscription["endpoint"], "keys": browser.subscription["keys"],
                              "kinds": ["blocked", "parked", "pause"]}]
    item = event(7)
    started = time.monotonic()
    pusher.submit([event(6, kind="context"), item])  # a kind it did not ask for is never pushed
    assert time.monotonic() - started < 0.5  # enqueued, not sent, on the caller's thread
    [request] = poll_for(lambda: endpoint.requests, "the push")
    assert request.path == "/push/v2/a-subscription"
    server_key = push.application_server_key(store)
    claims = verify_vapid(request.headers["authorization"], server_key)
    assert claims["aud"] == endpoint.origin and claims["sub"] == "mailto:st2@h"
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600
    assert request.headers["content-encoding"] == "aes128gcm"
    assert int(request.headers["ttl"]) == push.TIME_TO_LIVE_SECONDS
    assert browser.decrypt(request.body) == {
        "title": "st2: blocked h.a", "body": "2026-08-29T10:40:00.123Z #7 blocked h.a none -> human (ask=permission)",
        "tag": "blocked:h.a", "url": "/seat/h.a"}
    # Another key pair cannot read it.
    with pytest.raises(Exception):
        Browser(browser.subscription["endpoint"]).decrypt(request.body)
    # A signature by any other key is refused by the check above.
    other = push.public_key(type(pusher._vapid)(ec.generate_private_key(ec.SECP256R1())))
    with pytest.raises((InvalidSignature, AssertionError)):
        verify_vapid(request.headers["authorization"].replace(server_key, other), other)
    assert log_lines(store) == []


def test_the_vapid_key_is_made_once_owner_only_and_a_readable_one_is_refused(store):
    first = push.application_server_key(store)
    path = layout.web_vapid_private(store)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert push.application_server_key(store) == first and len(unb64url(first)) == 65
    assert list(layout.staging(store).iterdir()) == []
    path.chmod(0o644)
    with pytest.raises(push.VapidUnreadable, match="readable by others"):
        push.load_vapid(store)
    path.chmod(0o600)
    path.write_text("not a key\n")
    with pytest.raises(push.VapidUnreadable, match="not a VAPID key"):
        push.load_vapid(store)


@pytest.mark.parametrize("status", [404, 410])
def test_a_push_service_that_forgot_the_subscription_drops_it_and_says_so(store, pusher, endpoint, status):
    browser, kept = Browser(f"{endpoint.origin}/gone"), Browser(f"{endpoint.origin}/kept")
    gone = pusher.subscribe(browser.subscription)
    pusher.subscribe(kept.subscription, ["stale"])
    endpoint.status = status
    pusher.submit([event(1)])
    poll_for(lambda: len(log_lines(store)) == 1, "the drop's line")
    assert gone.where == f"push {endpoint.origin} #{hashlib.sha256(gone.endpoint.encode()).hexdigest()[:8]}"
    assert log_lines(store) == [f"{gone.where} for blocked h.a #1: the push service answered {status}; "
                                "subscription dropped"]
    assert [entry["endpoint"] for entry in stored(store)] == [kept.subscription["endpoint"]]
    assert [entry.endpoint for entry in pusher.subscriptions] == [kept.subscription["endpoint"]]
    endpoint.status = 201
    pusher.submit([event(2, seat="h.b"), event(3, kind="stale")])
    poll_for(lambda: len(endpoint.requests) == 2, "the kept subscription's push")
    assert [request.path for request in endpoint.requests] == ["/gone", "/kept"]


def test_a_failing_push_service_keeps_the_subscription_and_each_failure_is_one_line(store, pusher, endpoint):
    browser = Browser(f"{endpoint.origin}/flaky")
    pusher.subscribe(browser.subscription)
    endpoint.status = 500
    pusher.submit([event(1)])
    poll_for(lambda: log_lines(store), "the failure's line")
    [line] = log_lines(store)
    assert line.endswith(" for blocked h.a #1: failed (HTTP 500 Internal Server Error)")
    assert len(stored(store)) == 1 and len(pusher.subscriptions) == 1
    endpoint.status = 201
    pusher.submit([event(2, seat="h.b")])
    poll_for(lambda: len(endpoint.requests) == 2, "the next push")
    assert browser.decrypt(endpoint.requests[1].body)["tag"] == "blocked:h.b"


def test_a_hanging_push_service_costs_one_timeout_line_and_the_next_push_goes_out(store, clock, endpoint):
    pusher = push.Pusher(store, "h", monotonic=clock, timeout_seconds=0.5)
    try:
        pusher.subscribe(Browser(f"{endpoint.origin}/slow").subscription)
        endpoint.hang = True
        pusher.submit([event(1)])
        poll_for(lambda: log_lines(store), "the timeout's line", timeout=10)
        [line] = log_lines(store)
        assert " for blocked h.a #1: failed: ReadTimeout: " in line
        endpoint.hang = False
        endpoint.release.set()
        pusher.submit([event(2, seat="h.b")])
        poll_for(lambda: len(endpoint.requests) == 2, "the next push")
        assert len(log_lines(store)) == 1
    finally:
        pusher.stop()


def test_one_push_per_seat_and_kind_per_window_and_the_held_back_ones_are_one_summary(store, pusher, endpoint, clock):
    browser = Browser(f"{endpoint.origin}/limited")
    pusher.subscribe(browser.subscription)
    pusher.submit([event(1)])
    clock.now += 1
    pusher.submit([event(2), event(3, seat="h.b"), event(4, kind="parked")])  # #2 is held back
    clock.now += 29
    pusher.submit([event(5)])  # held back too: the window is 60 s from #1
    poll_for(lambda: len(endpoint.requests) == 3, "the three pushes")
    assert [browser.decrypt(request.body)["tag"] for request in endpoint.requests] == [
        "blocked:h.a", "blocked:h.b", "parked:h.a"]
    pusher.flush()
    assert log_lines(store) == []  # the window has not ended
    clock.now += 31
    pusher.flush()
    where = pusher.subscriptions[0].where
    assert log_lines(store) == [f"{where}: blocked h.a: 2 runs suppressed (#2-#5; rate-limit 60s per seat and kind)"]
    pusher.submit([event(6)])  # a new window
    poll_for(lambda: len(endpoint.requests) == 4, "the next window's push")


def test_only_a_valid_subscription_for_known_kinds_is_kept(store):
    good = Browser("https://push.example.net/abc").subscription
    assert set(push.DEFAULT_KINDS) <= set(KINDS)
    assert push.subscribe(store, good, ["stale", "stale", "pause"]).kinds == ("stale", "pause")
    short_auth = {**good, "keys": {**good["keys"], "auth": b64url(os.urandom(8))}}
    off_curve = {**good, "keys": {**good["keys"], "p256dh": b64url(b"\x04" + b"\x01" * 64)}}
    cases = [
        ({**good, "endpoint": "ftp://push.example.net/abc"}, None, "`endpoint` is not an http(s) URL"),
        ({**good, "endpoint": "https://user@push.example.net/abc"}, None, "`endpoint` is not an http(s) URL"),
        ({**good, "endpoint": "https://push.example.net/" + "a" * 3000}, None, "`endpoint` is not a URL"),
        ({**good, "keys": {**good["keys"], "p256dh": "not base64url!"}}, None, "`keys.p256dh` is not base64url"),
        (off_curve, None, "`keys.p256dh` is not an uncompressed P-256 public point"),
        (short_auth, None, "`keys.auth` is not 16 bytes"),
        ({"endpoint": good["endpoint"]}, None, "`keys` is not an object"),
        (good, ["blockd"], "`kinds` is not a non-empty list of event kinds"),
        (good, [], "`kinds` is not a non-empty list of event kinds"),
        ("https://push.example.net/abc", None, "a subscription is an object"),
    ]
    for subscription, kinds, message in cases:
        with pytest.raises(push.SubscriptionRefused, match=message.replace("(", r"\(").replace(")", r"\)")):
            push.subscribe(store, subscription, kinds)
    assert [entry["kinds"] for entry in stored(store)] == [["stale", "pause"]]
    assert stat.S_IMODE(layout.web_subscriptions(store).stat().st_mode) == 0o600
    assert push.unsubscribe(store, good["endpoint"]) is True
    assert push.unsubscribe(store, good["endpoint"]) is False
    assert stored(store) == []


def test_a_malformed_subscriptions_file_reads_as_none_and_says_so(store):
    path = layout.web_subscriptions(store)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    pusher = push.Pusher(store, "h")
    assert pusher.subscriptions == ()
    [line] = log_lines(store)
    assert line.startswith("web/subscriptions.json is unreadable or malformed (")
    good = Browser("https://push.example.net/abc").subscription
    path.write_text(json.dumps([{"endpoint": "https://push.example.net/x", "keys": {}, "kinds": ["blocked"]},
                                {**good, "kinds": ["blocked"]}]))
    pusher.reload()
    assert [entry.endpoint for entry in pusher.subscriptions] == [good["endpoint"]]
    assert log_lines(store)[1] == ("web/subscriptions.json: entry 1 left out: `keys.p256dh` is not base64url")
    path.write_text(json.dumps({"endpoint": "x"}))
    pusher.reload()
    assert pusher.subscriptions == ()
    assert log_lines(store)[2] == "web/subscriptions.json is malformed (not a list); it reads as no subscription"
