"""The real `st2 web` over the fixed fleet catalog, through plain HTTP: nothing without a session
but /pair, pairing links that sign in once, one-use CSRF tokens bound to a session, markup planted
in a seat's name and mail shown as text under a script-src 'self' policy, no path out of the
catalog, the pairing throttle, the /metrics bearer, the refusal to serve a remote address without
TLS, and the secret never shown.

One server for the module (its own XDG_STATE_HOME, so its own secret); the tests that throttle a
whole server, stop one, or serve another address start their own on another state directory."""

from __future__ import annotations

import collections
import http.client
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest

import top_fixture
from roster_fixture import MINUTE_MS
from support import run_st2, st2_env
from web_support import Client, WebServer, csrf_tokens

pytestmark = pytest.mark.process

HOST = top_fixture.HOST
HOSTILE_NAME = "<script>window.pwned=1</script><img src=x onerror=alert(1)>"
HOSTILE_SUBJECT = "<script>window.pwned=2</script>"
HOSTILE_BODY = "<img src=x onerror=alert(3)>"
RAW_MARKUP = ("<script>window.pwned", "<img src=x")
SEATS = ("builder", "reviewer", "flaky", "sleeper", "remote", "hostile")
ATTEMPTS = 1000


@dataclass
class Face:
    root: Path
    catalog: Path
    usage: dict
    env: dict
    server: WebServer

    def environment(self, state: str) -> dict:
        """The environment of another `st2 web` on this catalog with its own session store."""
        return st2_env(self.catalog, XDG_STATE_HOME=str(self.root / state), **self.usage)


def plant_hostile_seat(catalog: Path) -> None:
    """A seat whose declared name, and the subject and body of its mail, are markup."""
    seat = top_fixture._seat(catalog, "hostile", f'    name "{HOSTILE_NAME}"\n')
    inbox = seat / "resources" / "inbox"
    (inbox / f"{top_fixture.NOW_MS - 2 * MINUTE_MS}-c0ffee.md").write_text(
        f"---\nfrom: {HOST}.operator\nsubject: {HOSTILE_SUBJECT}\n---\nsee the subject\n")
    (inbox / f"{top_fixture.NOW_MS - 1 * MINUTE_MS}-d0ffee.md").write_text(
        f"---\nfrom: {HOST}.operator\n---\n{HOSTILE_BODY}\n")


@pytest.fixture(scope="module")
def face(tmp_path_factory) -> Face:
    from st2.bus.principals import ensure_operator

    root = tmp_path_factory.mktemp("web")
    catalog = top_fixture.build(root)
    plant_hostile_seat(catalog)
    ensure_operator(catalog, HOST)
    usage = top_fixture.usage_environment(root)
    env = st2_env(catalog, XDG_STATE_HOME=str(root / "state"), **usage)
    server = WebServer(catalog, HOST, env)
    try:
        yield Face(root, catalog, usage, env, server)
    finally:
        server.stop()


def header(headers: dict, name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


def assert_policy(headers: dict) -> None:
    """The Content-Security-Policy admits script from this origin only, never inline."""
    policy = header(headers, "content-security-policy")
    assert policy, headers
    directives = {words[0]: words[1:] for words in (part.split() for part in policy.split(";")) if words}
    assert directives["script-src"] == ["'self'"] and directives["default-src"] == ["'none'"], policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, policy


def fetch(client: Client, path: str, form: dict | None = None, headers: dict | None = None,
          method: str | None = None) -> tuple[int, dict, str]:
    """``client.request``, checking the policy of every HTML answer."""
    status, answer_headers, body = client.request(path, form, headers, method)
    if (header(answer_headers, "content-type") or "").startswith("text/html"):
        assert_policy(answer_headers)
    return status, answer_headers, body


def path_of(link: str) -> str:
    parts = urllib.parse.urlsplit(link)
    return f"{parts.path}?{parts.query}"


def signed_in(server: WebServer) -> Client:
    client = Client(server.url)
    status, _, body = fetch(client, path_of(server.pair_link()))
    assert status == 200, body
    return client


@pytest.fixture(scope="module")
def client(face: Face) -> Client:
    return signed_in(face.server)


def inbox(catalog: Path, identity: str) -> set[str]:
    return {path.name for path in (catalog / "agents" / HOST / identity / "resources" / "inbox").glob("*.md")}


def secret_of(state: Path) -> str:
    (path,) = state.rglob("web/secret")
    return path.read_text().strip()


def pieces(secret: str, width: int = 16) -> list[str]:
    """Every ``width``-character run of the secret's hex: none may be shown, not even part of it."""
    return [secret[index:index + width] for index in range(len(secret) - width + 1)]


def status_of(base: str, path: str, source: str = "127.0.0.1", headers: dict | None = None) -> int:
    """GET ``path`` on a fresh connection from the loopback address ``source``."""
    parts = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30, source_address=(source, 0))
    try:
        connection.request("GET", path, headers=headers or {})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


# --- no session, no fleet -----------------------------------------------------------------------

UNSIGNED = [
    ("GET", "/"), ("GET", "/?text=builder"), ("GET", "/fragment/rows"), ("GET", "/fragment/detail/alpha.builder"),
    ("GET", "/seat/alpha.builder"), ("POST", "/seat/alpha.builder/message"), ("POST", "/seat/alpha.builder/unpark"),
    ("POST", "/seat/alpha.builder/desired"), ("GET", "/seat/alpha.builder/message"), ("GET", "/events"),
    ("GET", "/stream"), ("GET", "/api/fleet"), ("GET", "/metrics"), ("GET", "/static/st2.js"),
    ("GET", "/static/st2.css"), ("GET", "/static/icon.svg"), ("GET", "/sw.js"), ("GET", "/manifest.webmanifest"),
    ("GET", "/nope"), ("GET", "/seat/alpha.nope"),
]


@pytest.mark.parametrize("cookie", ["none", "forged"])
def test_without_a_session_every_route_but_pair_is_401_and_names_no_seat(face: Face, client: Client,
                                                                       cookie: str) -> None:
    stranger = Client(face.server.url)
    headers = {}
    if cookie == "forged":
        (real,) = [item.value for item in client.jar]
        headers = {"Cookie": f"st2_session={real[:-1]}{'0' if real[-1] != '0' else '1'}"}
    before = inbox(face.catalog, "builder")
    for method, path in UNSIGNED:
        form = {"body": "let me in", "state": "retired", "csrf": "x"} if method == "POST" else None
        status, answer_headers, body = fetch(stranger, path, form, headers, method)
        assert status == 401, (method, path, status)
        assert header(answer_headers, "set-cookie") is None
        assert not [seat for seat in SEATS if seat in body], (path, body)
        assert "not signed in" in body
    assert inbox(face.catalog, "builder") == before


def test_with_a_session_the_same_routes_answer(client: Client) -> None:
    for method, path in UNSIGNED:
        if method == "GET" and path not in ("/stream", "/nope", "/seat/alpha.nope", "/seat/alpha.builder/message"):
            status, _, body = fetch(client, path)
            assert status == 200, (path, body)
    assert "builder" in fetch(client, "/")[2]


# --- pairing ------------------------------------------------------------------------------------

def test_a_pairing_link_signs_in_once(face: Face) -> None:
    link = face.server.pair_link()
    browser = Client(face.server.url)
    status, headers, _ = fetch(browser, path_of(link))
    assert status == 200
    attributes = [part.strip().lower() for part in header(headers, "set-cookie").split(";")]
    assert attributes[0].startswith("st2_session=")
    assert {"httponly", "samesite=strict", "path=/"} <= set(attributes), attributes
    assert "secure" not in attributes  # served over plain http on loopback
    assert fetch(browser, "/")[0] == 200

    again = Client(face.server.url)
    status, headers, _ = fetch(again, path_of(link))
    assert (status, header(headers, "set-cookie")) == (401, None)
    assert fetch(again, "/")[0] == 401


def test_a_forged_pairing_token_or_a_session_cookie_does_not_sign_in(face: Face, client: Client) -> None:
    link = face.server.pair_link()
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]
    forged = token[:-1] + ("0" if token[-1] != "0" else "1")
    browser = Client(face.server.url)
    assert fetch(browser, f"/pair?token={forged}")[0] == 401
    (cookie,) = [item.value for item in client.jar]
    assert fetch(browser, f"/pair?token={cookie}")[0] == 401
    assert fetch(browser, "/")[0] == 401
    assert fetch(browser, path_of(link))[0] == 200  # the forgery spent nothing


# --- CSRF ---------------------------------------------------------------------------------------

def test_a_post_needs_a_fresh_token_of_its_own_session(face: Face, client: Client) -> None:
    action = "/seat/alpha.builder/message"
    before = inbox(face.catalog, "builder")
    other = signed_in(face.server)
    (others_token, _, _) = csrf_tokens(fetch(other, "/seat/alpha.builder")[2])
    token = csrf_tokens(fetch(client, "/seat/alpha.builder")[2])[0]
    forged = token[:-1] + ("0" if token[-1] != "0" else "1")
    for form in ({"body": "no token"}, {"body": "forged", "csrf": forged}, {"body": "stolen", "csrf": others_token}):
        status, _, body = fetch(client, action, form)
        assert status == 403, (form, status, body)
    assert inbox(face.catalog, "builder") == before

    status, headers, _ = fetch(client, action, {"body": "from the web face", "subject": "hello", "csrf": token})
    assert (status, header(headers, "location")) == (303, "/seat/alpha.builder")
    (sent,) = inbox(face.catalog, "builder") - before
    text = (face.catalog / "agents" / HOST / "builder" / "resources" / "inbox" / sent).read_text()
    front, _, message = text.partition("\n---\n")
    assert f"from: {HOST}.operator" in front.splitlines() and "subject: hello" in front.splitlines(), text
    assert message == "from the web face\n"
    assert f"sent {sent} to alpha.builder as {HOST}.operator" in fetch(client, "/seat/alpha.builder")[2]

    status, _, _ = fetch(client, action, {"body": "replayed", "csrf": token})
    assert status == 403
    assert fetch(other, action, {"body": "its own, but spent by another", "csrf": token})[0] == 403
    assert inbox(face.catalog, "builder") - before == {sent}


# --- hostile markup -----------------------------------------------------------------------------

def test_markup_in_a_name_and_in_mail_is_shown_as_text(client: Client) -> None:
    escaped_name = "&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    for path in ("/", "/?text=hostile", "/fragment/rows", "/seat/alpha.hostile", "/fragment/detail/alpha.hostile"):
        status, headers, body = fetch(client, path)
        assert status == 200 and header(headers, "content-type").startswith("text/html"), (path, status)
        assert escaped_name in body, (path, body)
        assert not [raw for raw in RAW_MARKUP if raw in body], (path, body)
    for path in ("/seat/alpha.hostile", "/fragment/detail/alpha.hostile"):
        body = fetch(client, path)[2]
        assert "&lt;script&gt;window.pwned=2&lt;/script&gt;" in body, body
        assert "&lt;img src=x onerror=alert(3)&gt;" in body, body
    status, headers, body = fetch(client, "/api/fleet")
    assert header(headers, "content-type") == "application/json"
    assert header(headers, "x-content-type-options") == "nosniff"


# --- no path out of the catalog -----------------------------------------------------------------

@pytest.mark.parametrize("path", ["/seat/..%2F..%2Fetc%2Fpasswd", "/seat/alpha.nope", "/fragment/detail/..%2Fx",
                                  "/fragment/detail/alpha.nope", "/seat/..", "/static/..%2Faccess.py",
                                  "/static/..%2F..%2F..%2Fetc%2Fpasswd", "/seat/%2Fetc%2Fpasswd"])
def test_a_path_that_is_no_seat_is_404(client: Client, path: str) -> None:
    status, _, body = fetch(client, path)
    assert status == 404, (path, status)
    assert "root:" not in body and "import" not in body


def test_an_action_on_no_seat_is_404_and_spends_nothing(face: Face, client: Client) -> None:
    token = csrf_tokens(fetch(client, "/seat/alpha.builder")[2])[0]
    assert fetch(client, "/seat/..%2F..%2Ftmp/message", {"body": "x", "csrf": token})[0] == 404
    assert fetch(client, "/seat/alpha.nope/message", {"body": "x", "csrf": token})[0] == 404
    before = inbox(face.catalog, "builder")
    assert fetch(client, "/seat/alpha.builder/message", {"body": "after the misses", "csrf": token})[0] == 303
    assert len(inbox(face.catalog, "builder") - before) == 1


# --- /metrics -----------------------------------------------------------------------------------

def test_metrics_take_the_bearer_from_st2_web_token_metrics(face: Face, client: Client) -> None:
    result = run_st2("--catalog", str(face.catalog), "--host", HOST, "web", "token", "metrics", env=face.env)
    assert result.returncode == 0, result.stderr
    bearer = result.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", bearer), result.stdout
    stranger = Client(face.server.url)
    assert fetch(stranger, "/metrics")[0] == 401
    status, headers, body = fetch(stranger, "/metrics", headers={"Authorization": f"Bearer {bearer}"})
    assert status == 200 and header(headers, "content-type").startswith("text/plain"), body
    assert 'st2_seat_inbox_unread{runtime_id="alpha.builder"}' in body
    wrong = bearer[:-1] + ("0" if bearer[-1] != "0" else "1")
    for authorization in (f"Bearer {wrong}", "Bearer ", bearer, f"Basic {bearer}"):
        assert fetch(stranger, "/metrics", headers={"Authorization": authorization})[0] == 401, authorization
    assert fetch(client, "/metrics")[0] == 200  # a signed-in browser reads them too


# --- where it may listen ------------------------------------------------------------------------

def test_a_remote_address_without_tls_is_refused_and_served_with_insecure_remote(face: Face) -> None:
    env = face.environment("remote-state")
    refused = run_st2("--catalog", str(face.catalog), "--host", HOST, "web", "--listen", "0.0.0.0:0", env=env)
    assert refused.returncode == 2, refused
    assert refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and "--insecure-remote" in lines[0] and lines[0].startswith("st2 web: "), refused.stderr
    assert "Traceback" not in refused.stderr

    server = WebServer(face.catalog, HOST, env, "--listen", "0.0.0.0:0", "--insecure-remote")
    try:
        assert server.url.startswith("http://0.0.0.0:"), server.url
        port = urllib.parse.urlsplit(server.url).port
        assert status_of(f"http://127.0.0.1:{port}", "/") == 401  # serving, and still asking for a session
    finally:
        server.stop()


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM), made here."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "st2 web test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "web.crt", directory / "web.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


def test_with_a_certificate_a_remote_address_is_served_over_tls_and_the_cookie_is_secure(face: Face) -> None:
    import ssl

    cert, key = self_signed(face.root)
    env = face.environment("tls-state")
    server = WebServer(face.catalog, HOST, env, "--listen", "0.0.0.0:0", "--cert", str(cert), "--key", str(key))
    try:
        assert server.url.startswith("https://0.0.0.0:"), server.url
        base = f"https://127.0.0.1:{urllib.parse.urlsplit(server.url).port}"
        context = ssl.create_default_context(cafile=str(cert))
        client = Client(base, context)
        assert client.request("/")[0] == 401
        status, headers, _ = client.request(path_of(server.pair_link()))
        cookie = header(headers, "set-cookie") or ""
        assert status == 200 and "st2_session=" in cookie, (status, headers)
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert client.request("/")[0] == 200
    finally:
        server.stop()
    half = run_st2("--catalog", str(face.catalog), "--host", HOST, "web", "--listen", "0.0.0.0:0", "--cert", str(cert),
                   env=env)
    assert half.returncode == 2 and half.stderr.startswith("st2 web: give both --cert and --key"), half


# --- the secret stays on the host ---------------------------------------------------------------

def test_the_secret_is_never_shown(face: Face) -> None:
    env = face.environment("leak-state")
    server = WebServer(face.catalog, HOST, env)
    shown = []
    try:
        browser = signed_in(server)
        stranger = Client(server.url)
        for path in ("/", "/fragment/rows", "/seat/alpha.reviewer", "/fragment/detail/alpha.reviewer", "/events",
                     "/api/fleet", "/metrics", "/static/st2.js", "/sw.js", "/manifest.webmanifest", "/nope"):
            for who in (browser, stranger):
                status, headers, body = fetch(who, path)
                shown += [body, repr(headers)]
        token = csrf_tokens(fetch(browser, "/seat/alpha.reviewer")[2])[0]
        status, headers, body = fetch(browser, "/seat/alpha.reviewer/message", {"body": "hello", "csrf": token})
        assert status == 303
        shown += [body, repr(headers), fetch(browser, "/seat/alpha.reviewer")[2]]
        for words in (("web", "pair", "--no-qr"), ("web", "pair", "--qr"), ("web", "token", "metrics")):
            result = run_st2("--catalog", str(face.catalog), "--host", HOST, *words, env=env)
            assert result.returncode == 0, result.stderr
            shown += [result.stdout, result.stderr]
        shown += [repr(item) for item in browser.jar]
    finally:
        server.stop()
    shown.append(server.output)
    secret = secret_of(face.root / "leak-state")
    assert len(secret) == 64
    text = "\n".join(shown)
    assert not [piece for piece in pieces(secret) if piece in text]


def test_a_refusing_disk_is_one_line_on_the_page_and_in_the_output_never_a_traceback(face: Face) -> None:
    env = face.environment("refusing-state")
    server = WebServer(face.catalog, HOST, env)
    try:
        [url_file] = list((face.root / "refusing-state").glob("**/web/url"))
        (url_file.parent / "paired").write_text("a file where the used links' directory belongs\n")
        status, _, body = Client(server.url).request(path_of(server.pair_link()))
        assert status == 503, (status, body)
        assert "st2 web: cannot" in body and "paired" in body
    finally:
        server.stop()
    lines = [line for line in server.output.splitlines() if "paired" in line]
    assert len(lines) == 1 and lines[0].startswith("st2 web: cannot"), server.output
    assert "Traceback" not in server.output


def test_a_busy_port_is_one_line(face: Face) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_st2("--catalog", str(face.catalog), "--host", HOST, "web", "--listen", f"127.0.0.1:{port}",
                         env=face.environment("busy-state"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"st2 web: cannot listen on 127.0.0.1:{port}: Address already in use\n", result.stderr


def test_a_signal_ends_the_server_cleanly(face: Face) -> None:
    """SIGTERM ends the lifespan without a Traceback (LiveFleet.close once called a
    MutationWatch.close that did not exist)."""
    server = WebServer(face.catalog, HOST, face.environment("stop-state"))
    try:
        assert status_of(server.url, "/") == 401  # started up, lifespan and all
    finally:
        server.stop()
    assert "Traceback" not in server.output and "shutdown failed" not in server.output, server.output


# --- the pairing throttle (its own server: it refuses every pairing there for a minute) -----------

def test_a_thousand_bad_pairings_are_throttled_and_so_is_a_good_one(face: Face) -> None:
    from st2.web.access import FAILURES_PER_WINDOW, GLOBAL_FAILURES_PER_WINDOW

    server = WebServer(face.catalog, HOST, face.environment("throttle-state"))
    try:
        link = server.pair_link()
        good = path_of(link)
        bad = good[:-1] + ("0" if good[-1] != "0" else "1")
        statuses = [status_of(server.url, bad) for _ in range(ATTEMPTS)]
        assert statuses[:FAILURES_PER_WINDOW] == [401] * FAILURES_PER_WINDOW
        assert collections.Counter(statuses) == {401: FAILURES_PER_WINDOW, 429: ATTEMPTS - FAILURES_PER_WINDOW}
        assert status_of(server.url, good) == 429                      # validity does not matter
        assert status_of(server.url, good, headers={"X-Forwarded-For": "10.9.8.7"}) == 429  # nor a claimed address

        assert status_of(server.url, good, source="127.0.0.2") == 200  # another client; the 429s spent nothing
        assert status_of(server.url, good, source="127.0.0.3") == 401  # spent now

        fresh = path_of(server.pair_link())
        failures = FAILURES_PER_WINDOW + 1
        clients = iter(f"127.0.0.{index}" for index in range(4, 250))
        while failures < GLOBAL_FAILURES_PER_WINDOW:
            source = next(clients)
            for _ in range(min(FAILURES_PER_WINDOW, GLOBAL_FAILURES_PER_WINDOW - failures)):
                assert status_of(server.url, bad, source=source) == 401
                failures += 1
        assert status_of(server.url, fresh, source=next(clients)) == 429  # past the bound over all clients
    finally:
        server.stop()
