"""Process-tier helpers for `st2 web`: a real server on a free loopback port, a pairing link from
the real `st2 web pair`, and a signed-in HTTP client (stdlib only, its own cookie jar)."""

from __future__ import annotations

import http.cookiejar
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from support import REPO, poll_for, run_st2

SERVING = re.compile(r"serving \S+ at (https?://\S+)")


class WebServer:
    """`st2 web --listen 127.0.0.1:0` on ``catalog`` as ``host`` with ``env``; ``url`` once it
    said where it serves. Its output goes to a file (``log``, else a temporary one): a pipe nobody
    reads would stall a server that writes much. Stopped by its own PID (SIGTERM, then SIGKILL)."""

    def __init__(self, catalog: Path, host: str, env: dict, *extra: str, log: Path | None = None) -> None:
        self.catalog, self.host, self.env = catalog, host, env
        if log is None:
            descriptor, name = tempfile.mkstemp(prefix="st2-web-", suffix=".log")
            os.close(descriptor)
            log, self._own_log = Path(name), True
        else:
            self._own_log = False
        self.log = log
        self._kept: str | None = None
        self.started = time.perf_counter()
        with open(log, "wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "st2", "--catalog", str(catalog), "--host", host, "web",
                 "--listen", "127.0.0.1:0", *extra],
                stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=REPO,
                start_new_session=True)
        self.url = self._read_url()

    @property
    def output(self) -> str:
        """Everything the server printed so far."""
        if self._kept is not None:
            return self._kept
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def _read_url(self, timeout: float = 60.0) -> str:
        def said() -> str | None:
            found = SERVING.search(self.output)
            return found.group(1) if found else ("" if self.process.poll() is not None else None)

        url = poll_for(said, timeout=timeout, step=0.005)
        if not url:
            self.stop()
            raise AssertionError(f"st2 web never said where it serves:\n{self.output}")
        return url

    def st2(self, *arguments: str) -> subprocess.CompletedProcess:
        """Another st2 verb on the same catalog, host and environment."""
        return run_st2("--catalog", str(self.catalog), "--host", self.host, *arguments, env=self.env)

    def pair_link(self) -> str:
        result = self.st2("web", "pair", "--no-qr")
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
        if self._kept is None:
            self._kept = self.output
            if self._own_log:
                self.log.unlink(missing_ok=True)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments, **keywords):
        return None


class Client:
    """An HTTP client with its own cookie jar; redirects are returned, not followed."""

    def __init__(self, base: str, context=None) -> None:
        """``context``: the ssl context an https server is checked with."""
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        handlers = [urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()]
        if context is not None:
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self.opener = urllib.request.build_opener(*handlers)

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
