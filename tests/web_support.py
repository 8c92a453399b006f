"""Process-tier helpers for `st2 web`: a real server on a free loopback port, a pairing link from
the real `st2 web pair`, and a signed-in HTTP client (stdlib only, its own cookie jar)."""

from __future__ import annotations

import http.cookiejar
import re
import selectors
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from support import REPO, run_st2

SERVING = re.compile(r"serving \S+ at (https?://\S+)")


class WebServer:
    """`st2 web --listen 127.0.0.1:0` on ``catalog`` as ``host`` with ``env``; ``url`` once it
    said where it serves. Stopped by its own PID (SIGTERM, then SIGKILL)."""

    def __init__(self, catalog: Path, host: str, env: dict, *extra: str, log: Path | None = None) -> None:
        self.catalog, self.host, self.env = catalog, host, env
        self.process = subprocess.Popen(
            [sys.executable, "-m", "st2", "--catalog", str(catalog), "--host", host, "web",
             "--listen", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True, text=True)
        self.output = ""
        self.url = self._read_url()

    def _read_url(self, timeout: float = 60.0) -> str:
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not selector.select(max(0.0, deadline - time.monotonic())):
                break
            line = self.process.stdout.readline()
            if not line:
                break
            self.output += line
            found = SERVING.search(line)
            if found:
                return found.group(1)
        self.stop()
        raise AssertionError(f"st2 web never said where it serves:\n{self.output}")

    def pair_link(self) -> str:
        result = run_st2("--catalog", str(self.catalog), "--host", self.host, "web", "pair", "--no-qr", env=self.env)
        assert result.returncode == 0, result.stderr
        link = re.search(r"(https?://\S+/pair\?token=\S+)", result.stdout)
        assert link, result.stdout
        return link.group(1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.output += self.process.stdout.read() or ""
            self.process.stdout.close()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments, **keywords):
        return None


class Client:
    """An HTTP client with its own cookie jar; redirects are returned, not followed."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def request(self, path: str, form: dict | None = None, headers: dict | None = None,
                method: str | None = None) -> tuple[int, dict, str]:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {}, method=method)
        try:
            with self.opener.open(request, timeout=30) as answer:
                return answer.status, dict(answer.headers), answer.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode("utf-8", "replace")

    def pair(self, link: str) -> int:
        status, _, _ = self.request(link[len(self.base):])
        return status


def csrf_tokens(page: str) -> list[str]:
    return re.findall(r'name="csrf" value="([^"]+)"', page)
