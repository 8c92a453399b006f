"""`st2 web`'s listener: where it may bind, the one uvicorn server, and the pairing link.

Loopback by default (:data:`DEFAULT_LISTEN`). A non-loopback address needs TLS (a certificate and
its key) or the operator's explicit ``--insecure-remote`` (for a tunnel that brings its own
encryption, such as Tailscale or an SSH forward); anything else is refused before a socket is
opened (:class:`ListenRefused`). The server binds its socket itself, so ``--listen host:0`` picks
a free port, and writes the address it serves to the session store's ``web/url``, where
`st2 web pair` reads it.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path

from st2.fs.atomic import ensure_directory, publish
from st2.fs.read import read_optional
from st2.runtime import layout

DEFAULT_LISTEN = "127.0.0.1:8377"


class ListenRefused(ValueError):
    """A listen address that is malformed, or remote without TLS and without ``--insecure-remote``."""


def parse_listen(text: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` -> (host, port)."""
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535 or not host:
        raise ListenRefused(f"--listen {text!r}: expected HOST:PORT (e.g. {DEFAULT_LISTEN})")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(host: str, tls: bool, insecure_remote: bool) -> None:
    if not is_loopback(host) and not tls and not insecure_remote:
        raise ListenRefused(
            f"refusing to serve {host} without TLS: give --cert and --key, or reach a loopback `st2 web` "
            "through a tunnel (Tailscale, ssh -L) and say --insecure-remote if the tunnel encrypts")


def served_url(store: Path) -> str | None:
    """The address the last `st2 web` on this host said it serves, if any."""
    data = read_optional(layout.web_url(store), 4096)
    text = data.decode("utf-8", "replace").strip() if data else ""
    return text or None


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on a socket whose proto says TCP,
    # and without it a keep-alive answer's body waits ~40 ms behind its headers (Nagle against
    # the client's delayed ACK: 44 ms a request measured, 0.6 ms with it).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise ListenRefused(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    listener.set_inheritable(True)
    return listener


def serve(location, listen: str, cert: str | None, key: str | None, insecure_remote: bool, store: Path, live) -> None:
    """Bind, say where, and serve until a signal ends uvicorn."""
    import uvicorn

    from st2.web.app import build_app

    host, port = parse_listen(listen)
    tls = bool(cert and key)
    check_listen(host, tls, insecure_remote)
    listener = bind(host, port)
    bound_port = listener.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"{'https' if tls else 'http'}://{shown_host}:{bound_port}"
    app = build_app(live, store, secure=tls)
    ensure_directory(layout.web(store), 0o700)
    staging = layout.staging(store)
    ensure_directory(staging, 0o700)
    publish(layout.web_url(store), (url + "\n").encode(), staging, mode=0o600)
    print(f"st2 web: serving {location.host} at {url} (sign in: st2 web pair)", flush=True)
    # proxy_headers off: uvicorn otherwise takes X-Forwarded-For from a loopback peer as the
    # client's address, and any local client (or tunnel user) could name a fresh address per
    # attempt past the pairing throttle's per-client bound.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", ssl_certfile=cert,
                            ssl_keyfile=key, timeout_graceful_shutdown=1, proxy_headers=False)
    server = uvicorn.Server(config)
    server.run(sockets=[listener])


def pair_text(url: str, token: str, qr: bool) -> str:
    """The pairing link, and its QR code for a phone's camera when ``qr``."""
    link = f"{url.rstrip('/')}/pair?token={token}"
    lines = [f"open within 10 minutes, once: {link}"]
    if qr:
        import io

        import qrcode

        code = qrcode.QRCode(border=1)
        code.add_data(link)
        out = io.StringIO()
        code.print_ascii(out=out, invert=True)
        lines.append(out.getvalue().rstrip("\n"))
    return "\n".join(lines) + "\n"


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb"
