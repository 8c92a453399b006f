"""Who may use `st2 web` (:mod:`st2.web.access`) and where it may listen (:mod:`st2.web.serve`),
on a temporary session store and a fake clock: the secret file, pairing links, session cookies,
one-use CSRF tokens, the pairing throttle, the listen address check and the listener's TCP_NODELAY."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.runtime import layout
from st2.web.access import (FAILURES_PER_WINDOW, GLOBAL_FAILURES_PER_WINDOW, PAIRING_SECONDS, SESSION_SECONDS,
                            WINDOW_SECONDS, Access, CsrfTokens, SecretUnreadable, Throttle)
from st2.web.serve import ListenRefused, check_listen, parse_listen


def wall_seconds(clock: FakeClock):
    return lambda: clock.wall_ms() / 1000


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def access(store: Path, clock: FakeClock) -> Access:
    return Access(store, clock=wall_seconds(clock))


def flipped(token: str, index: int = -1) -> str:
    """``token`` with one hex character at ``index`` changed."""
    character = token[index]
    replacement = "0" if character != "0" else "1"
    index %= len(token)
    return token[:index] + replacement + token[index + 1:]


# --- the secret ---------------------------------------------------------------------------------

def test_the_secret_is_made_once_with_mode_0600_and_read_back_by_a_second_access(store: Path, clock: FakeClock) -> None:
    first = Access(store, clock=wall_seconds(clock))
    path = layout.web_secret(store)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    written = path.read_bytes()
    assert written == first.secret.hex().encode() + b"\n" and len(first.secret) == 32
    second = Access(store, clock=wall_seconds(clock))
    assert second.secret == first.secret and path.read_bytes() == written
    assert second.session_id(first.session_cookie()) is not None  # what one signs the other accepts


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660], ids=oct)
def test_a_secret_others_may_read_is_refused(store: Path, clock: FakeClock, mode: int) -> None:
    Access(store, clock=wall_seconds(clock))
    os.chmod(layout.web_secret(store), mode)
    with pytest.raises(SecretUnreadable, match="readable by others"):
        Access(store, clock=wall_seconds(clock))


def test_a_secret_st2_did_not_write_is_refused(store: Path, clock: FakeClock) -> None:
    Access(store, clock=wall_seconds(clock))
    layout.web_secret(store).write_text("not hex at all\n")
    with pytest.raises(SecretUnreadable, match="not a secret st2 wrote"):
        Access(store, clock=wall_seconds(clock))


# --- pairing links ------------------------------------------------------------------------------

def test_a_pairing_token_redeems_once_into_a_session(access: Access) -> None:
    token = access.pairing_token()
    cookie = access.redeem(token)
    assert cookie is not None and access.session_id(cookie) is not None
    assert access.redeem(token) is None


def test_a_pairing_token_is_spent_for_every_access_of_the_store(access: Access, store: Path, clock: FakeClock) -> None:
    token = access.pairing_token()
    assert access.redeem(token) is not None
    assert Access(store, clock=wall_seconds(clock)).redeem(token) is None  # another server on the host


def test_a_pairing_token_expires_after_pairing_seconds(access: Access, clock: FakeClock) -> None:
    late, on_time = access.pairing_token(), access.pairing_token()
    clock.advance(PAIRING_SECONDS)
    assert access.redeem(on_time) is not None
    clock.advance(1)
    assert access.redeem(late) is None


def test_a_pairing_token_with_a_changed_character_is_refused(access: Access) -> None:
    token = access.pairing_token()
    expires, nonce, mac = token.split(".")
    assert access.redeem(flipped(token)) is None                                  # the MAC
    assert access.redeem(f"{int(expires) + 3600}.{nonce}.{mac}") is None          # a later expiry
    assert access.redeem(f"{expires}.{flipped(nonce)}.{mac}") is None             # the nonce
    assert access.redeem("") is None and access.redeem("a.b") is None and access.redeem("..") is None
    assert access.redeem(token) is not None  # the probes spent nothing


def test_a_pairing_token_of_another_secret_is_refused(access: Access, tmp_path: Path, clock: FakeClock) -> None:
    other = Access(tmp_path / "other-store", clock=wall_seconds(clock))
    assert access.redeem(other.pairing_token()) is None
    assert access.session_id(other.session_cookie()) is None


def test_a_token_of_one_purpose_is_not_accepted_for_another(access: Access) -> None:
    cookie = access.session_cookie()
    pairing = access.pairing_token()
    csrf = access.csrf.issue(access.session_id(cookie))
    assert access.redeem(cookie) is None            # a session cookie is no pairing link
    assert access.redeem(csrf) is None              # nor is a CSRF token
    assert access.session_id(pairing) is None       # a pairing link is no session cookie
    assert access.session_id(csrf) is None          # nor is a CSRF token
    assert access.redeem(pairing) is not None       # and each still works for its own purpose


# --- sessions -----------------------------------------------------------------------------------

def test_a_session_cookie_lasts_session_seconds(access: Access, clock: FakeClock) -> None:
    cookie = access.session_cookie()
    sid = access.session_id(cookie)
    assert sid is not None and len(sid) == 32
    clock.advance(SESSION_SECONDS)
    assert access.session_id(cookie) == sid
    clock.advance(1)
    assert access.session_id(cookie) is None


def test_a_changed_session_cookie_is_refused(access: Access) -> None:
    cookie = access.session_cookie()
    issued, sid, mac = cookie.split(".")
    assert access.session_id(flipped(cookie)) is None
    assert access.session_id(f"{int(issued) + SESSION_SECONDS}.{sid}.{mac}") is None
    assert access.session_id(None) is None and access.session_id("") is None


def test_the_metrics_bearer_is_checked_exactly(access: Access) -> None:
    bearer = access.bearer("metrics")
    assert access.bearer_valid("metrics", bearer)
    assert not access.bearer_valid("metrics", flipped(bearer))
    assert not access.bearer_valid("metrics", None) and not access.bearer_valid("metrics", "")
    assert not access.bearer_valid("other", bearer)


# --- CSRF tokens --------------------------------------------------------------------------------

def test_a_csrf_token_is_spent_once(access: Access) -> None:
    tokens = access.csrf
    token = tokens.issue("session-a")
    assert tokens.spend("session-a", token) is True
    assert tokens.spend("session-a", token) is False


def test_a_csrf_token_of_another_session_is_refused(access: Access) -> None:
    tokens = access.csrf
    token = tokens.issue("session-a")
    assert tokens.spend("session-b", token) is False
    assert tokens.spend("session-a", token) is True  # the refusal spent nothing


def test_a_csrf_token_of_another_process_boot_is_refused(access: Access) -> None:
    earlier = CsrfTokens(access.secret)  # the same secret, another server process
    token = earlier.issue("session-a")
    assert access.csrf.spend("session-a", token) is False
    assert earlier.spend("session-a", token) is True


def test_a_forged_or_missing_csrf_token_is_refused(access: Access) -> None:
    tokens = access.csrf
    token = tokens.issue("session-a")
    assert tokens.spend("session-a", flipped(token)) is False
    assert tokens.spend("session-a", None) is False and tokens.spend("session-a", "") is False
    assert tokens.spend("session-a", token) is True


# --- the pairing throttle -----------------------------------------------------------------------

def test_a_client_is_refused_after_its_failures_and_admitted_again_after_the_window(clock: FakeClock) -> None:
    throttle = Throttle(clock=clock.monotonic)
    for _ in range(FAILURES_PER_WINDOW - 1):
        throttle.failed("10.0.0.1")
    assert throttle.admits("10.0.0.1")
    throttle.failed("10.0.0.1")
    assert not throttle.admits("10.0.0.1")
    assert throttle.admits("10.0.0.2")
    clock.advance(WINDOW_SECONDS - 0.5)
    assert not throttle.admits("10.0.0.1")
    clock.advance(0.5)
    assert throttle.admits("10.0.0.1")


def test_the_window_slides(clock: FakeClock) -> None:
    throttle = Throttle(clock=clock.monotonic)
    throttle.failed("10.0.0.1")
    clock.advance(WINDOW_SECONDS / 2)
    for _ in range(FAILURES_PER_WINDOW - 1):
        throttle.failed("10.0.0.1")
    assert not throttle.admits("10.0.0.1")
    clock.advance(WINDOW_SECONDS / 2)  # the first failure left the window, the others did not
    assert throttle.admits("10.0.0.1")
    throttle.failed("10.0.0.1")
    assert not throttle.admits("10.0.0.1")


def test_every_client_is_refused_past_the_global_bound_until_the_window_passes(clock: FakeClock) -> None:
    throttle = Throttle(clock=clock.monotonic)
    clients = [f"10.0.1.{index // (FAILURES_PER_WINDOW - 1)}" for index in range(GLOBAL_FAILURES_PER_WINDOW)]
    for client in clients[:-1]:  # each client stays below its own bound
        throttle.failed(client)
    assert throttle.admits("10.0.9.9") and throttle.admits(clients[-1])
    throttle.failed(clients[-1])
    assert not throttle.admits("10.0.9.9")       # a client that never failed
    assert not throttle.admits(clients[0])       # one below its own bound
    clock.advance(WINDOW_SECONDS)
    assert throttle.admits("10.0.9.9") and throttle.admits(clients[0])


# --- where `st2 web` may listen -----------------------------------------------------------------

@pytest.mark.parametrize("listen, host, port", [
    ("127.0.0.1:8377", "127.0.0.1", 8377), ("[::1]:0", "::1", 0), ("localhost:65535", "localhost", 65535),
    ("0.0.0.0:80", "0.0.0.0", 80), ("192.168.1.20:8377", "192.168.1.20", 8377), ("[::]:8377", "::", 8377),
])
def test_a_listen_address_parses_to_host_and_port(listen: str, host: str, port: int) -> None:
    assert parse_listen(listen) == (host, port)


@pytest.mark.parametrize("listen", ["", "8377", "127.0.0.1", "127.0.0.1:", ":8377", "127.0.0.1:65536",
                                    "127.0.0.1:http", "127.0.0.1:-1", "127.0.0.1: 80", "[::1]:"])
def test_a_malformed_listen_address_is_refused(listen: str) -> None:
    with pytest.raises(ListenRefused, match="expected HOST:PORT"):
        parse_listen(listen)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_is_served_without_tls(host: str) -> None:
    check_listen(host, tls=False, insecure_remote=False)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "100.64.0.7", "localhost.example.com",
                                  "example.com"])
def test_a_remote_address_needs_tls_or_insecure_remote(host: str) -> None:
    with pytest.raises(ListenRefused, match="--insecure-remote"):
        check_listen(host, tls=False, insecure_remote=False)
    check_listen(host, tls=True, insecure_remote=False)
    check_listen(host, tls=False, insecure_remote=True)


def test_an_accepted_connection_sends_without_waiting_for_acks() -> None:
    """asyncio sets TCP_NODELAY only on a socket whose proto says TCP: without it a keep-alive
    answer's body waited ~40 ms behind its headers (Nagle against the client's delayed ACK)."""
    import asyncio
    import socket

    from st2.web.serve import bind

    async def accepted_nodelay() -> int:
        loop = asyncio.get_running_loop()
        seen: asyncio.Future = loop.create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        listener = bind("127.0.0.1", 0)
        server = await loop.create_server(Probe, sock=listener)
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            value = await asyncio.wait_for(seen, 10)
            writer.close()
            return value
        finally:
            server.close()

    assert asyncio.run(accepted_nodelay()) != 0
