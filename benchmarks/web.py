"""`st2 web` over 627 seats (the roster benchmark's catalog, benchmarks/roster.py), the real server
on a loopback port, signed in through the real `st2 web pair --no-qr`:

- the fleet page ``/``: time to its first byte and to its last byte, median of 20 fetches, each on
  a fresh connection (as a browser's first load); anchor: the same server answering its smallest
  route, ``/static/st2.css`` (routing, the session check, HTTP — everything but the page);
- the SSE update latency: an open ``/stream``; 200 times, a new ``harness-state`` record (its state
  flipped between idle and active) is staged beside a random seat's and renamed into place, and the
  time from just before the rename to the arrival of the ``event: seat`` carrying that seat's
  changed row is taken; p50 and p99. Changes (and each staging before its rename) are spaced past
  the server's coalescing window (st2.web.app.FLUSHES_PER_SECOND), so each is its own flush, as
  `benchmarks/top.py` spaces them: a change inside the window of the previous flush waits up to
  50 ms more, by design;
- the server's RSS after the page loads;
- its idle CPU over 10 s of no changes, the stream still open, as percent of one core.

Targets (the web issue): page <= 300 ms, SSE p99 <= 250 ms, idle CPU <= 1 %.
Usage: python benchmarks/web.py [--seats N] [--smoke] (``--smoke``: the same path over 60 seats,
3 fetches, 10 changes, 2 s idle). Last line: RESULT page_ms=<median last byte>
page_first_byte_ms=<median first byte> static_ms=<anchor> ratio_static=<page/static>
ratio_page_target=<page/300> sse_p50_ms=<p50> sse_p99_ms=<p99> ratio_sse_target=<p99/250>
rss_mib=<rss> idle_cpu_pct=<pct> ratio_idle_target=<pct/1> seats=<N>
"""

from __future__ import annotations

import argparse
import http.client
import http.cookiejar
import json
import os
import queue
import random
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from roster import HOSTS, SEATS, write_catalog  # noqa: E402
from web_support import WebServer  # noqa: E402 (the tests' server: output to a file, stopped by PID)

PAGE_TARGET_MS, SSE_TARGET_MS, IDLE_TARGET_PCT = 300.0, 250.0, 1.0
FETCHES, CHANGES, IDLE_SECONDS = 20, 200, 10.0
SMOKE_SEATS, SMOKE_FETCHES, SMOKE_CHANGES, SMOKE_IDLE_SECONDS = 60, 3, 10, 2.0
# Between a change's staging and its rename, and after each change: the staged file's creation in
# the seat directory wakes the server too, and its flush (itself up to one 50 ms coalescing window
# after the last, st2.web.app.FLUSHES_PER_SECOND = 20) must be a whole window behind the rename, or
# the rename waits out the rest of that window: 80 ms here measured 20 ms of that wait on every change.
GAP_SECONDS = 0.12
EVENT_TIMEOUT_SECONDS = 10.0
HOST = HOSTS[0]


def sign_in(server: WebServer) -> str:
    """Spend a pairing link from `st2 web pair --no-qr` with a cookie jar; the Cookie header."""
    link = re.search(r"(https?://\S+/pair\?token=\S+)", server.st2("web", "pair", "--no-qr").stdout)
    if link is None:
        raise SystemExit("st2 web pair printed no link")
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(link.group(1), timeout=120) as answer:
        answer.read()
    if not list(jar):
        raise SystemExit("the pairing link set no cookie")
    return "; ".join(f"{cookie.name}={cookie.value}" for cookie in jar)


def fetch(url: str, path: str, cookie: str) -> tuple[float, float, bytes]:
    """GET ``path`` on a fresh connection: milliseconds to the first byte (the status line and
    headers read) and to the last, and the body."""
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        begun = time.perf_counter()
        connection.request("GET", path, headers={"Cookie": cookie})
        response = connection.getresponse()
        first = time.perf_counter()
        body = response.read()
        last = time.perf_counter()
    finally:
        connection.close()
    if response.status != 200:
        raise SystemExit(f"GET {path} answered {response.status}")
    return (first - begun) * 1000, (last - begun) * 1000, body


def timed_fetches(url: str, path: str, cookie: str, count: int) -> dict[str, float]:
    firsts, lasts, size = [], [], 0
    for _ in range(count):
        first, last, body = fetch(url, path, cookie)
        firsts.append(first)
        lasts.append(last)
        size = len(body)
    return {"first_ms": statistics.median(firsts), "last_ms": statistics.median(lasts), "max_ms": max(lasts),
            "bytes": size}


class Stream:
    """An open ``/stream``: a reader thread stamps each event (kind, data) on arrival."""

    def __init__(self, url: str, cookie: str) -> None:
        address = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=None)
        self.connection.request("GET", "/stream", headers={"Cookie": cookie, "Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise SystemExit(f"GET /stream answered {self.response.status}")
        self.events: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        kind, data = None, []
        try:
            while line := self.response.readline():
                text = line.decode("utf-8").rstrip("\n")
                if text.startswith("event: "):
                    kind = text[7:]
                elif text.startswith("data: "):
                    data.append(text[6:])
                elif text == "" and kind is not None:
                    self.events.put((time.perf_counter(), kind, "\n".join(data)))
                    kind, data = None, []
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # shut down under us at the end (http.client drops its file object mid-read)
        self.events.put((time.perf_counter(), "closed", ""))

    def drain(self) -> None:
        while True:
            try:
                self.events.get_nowait()
            except queue.Empty:
                return

    def close(self) -> None:
        """Shut the socket down (the reader's readline returns), join the reader, close."""
        if self.connection.sock is not None:
            try:
                self.connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(timeout=10)
        self.connection.close()


def seat_record(identity: str, host: str, state: str, now_ms: int, seq: int) -> dict:
    """A fresh ``st2.harness-state.v1`` record (the shape of tests/roster_fixture.py's)."""
    return {"schema": "st2.harness-state.v1", "agent": identity, "harness": "claude", "state": state,
            "blockedOn": "none", "inputBuffer": "empty", "ask": "none", "reason": None, "exit": None,
            "ptySession": f"{host}.{identity}", "incarnation": "bench", "seq": seq, "sinceMs": now_ms,
            "writtenAtMs": now_ms, "transitions": seq}


def sse_latencies(root: Path, stream: Stream, seats: int, changes: int) -> list[float]:
    """Stage a flipped harness-state beside a random seat's, let any flush its creation caused
    pass, then time the rename to the arrival of that seat's ``event: seat`` showing the flip."""
    chooser = random.Random(627)
    states: dict[str, str] = {}
    latencies = []
    for index in range(changes):
        number = chooser.randrange(seats)
        host, identity = HOSTS[number % len(HOSTS)], f"seat-{number:04d}"
        runtime_id = f"{host}.{identity}"
        state = "active" if states.get(runtime_id, "idle") == "idle" else "idle"
        states[runtime_id] = state
        seat = root / "agents" / host / identity
        staged = seat / ".harness-state.bench"
        with open(staged, "w") as handle:
            handle.write(json.dumps(seat_record(identity, host, state, int(time.time() * 1000), 10 + index)) + "\n")
        time.sleep(GAP_SECONDS)
        stream.drain()
        begun = time.perf_counter()
        os.replace(staged, seat / "harness-state")
        deadline = begun + EVENT_TIMEOUT_SECONDS
        while True:
            try:
                arrived, kind, data = stream.events.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                raise SystemExit(f"no seat event for {runtime_id} within {EVENT_TIMEOUT_SECONDS:g} s") from None
            if kind == "closed":
                raise SystemExit("the stream closed")
            if kind == "seat":
                event = json.loads(data)
                if event["id"] == runtime_id and f"<td>obs:{state}</td>" in event["html"]:
                    latencies.append((arrived - begun) * 1000)
                    break
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seats", type=int, default=SEATS)
    parser.add_argument("--smoke", action="store_true",
                        help=f"the same path over {SMOKE_SEATS} seats, {SMOKE_FETCHES} fetches, {SMOKE_CHANGES} "
                             f"changes, {SMOKE_IDLE_SECONDS:g} s idle")
    options = parser.parse_args()
    seats, fetches, changes, idle_seconds = ((SMOKE_SEATS, SMOKE_FETCHES, SMOKE_CHANGES, SMOKE_IDLE_SECONDS)
                                             if options.smoke else (options.seats, FETCHES, CHANGES, IDLE_SECONDS))
    with tempfile.TemporaryDirectory(prefix="st2-bench-web-") as directory:
        root = Path(directory) / "catalog"
        write_catalog(root, int(time.time() * 1000), seats)
        # The declaration cache, the session store (the access secret, web/url) live in this run's
        # own state directory; the usage reader reads a file that is not there.
        env = dict(os.environ, CATALOG=str(root), XDG_STATE_HOME=str(Path(directory) / "state"),
                   DELEGATION_KIT_USAGE_FILE=str(Path(directory) / "usage.txt"))
        env.pop("ST_AGENT", None)
        server = WebServer(root, HOST, env, log=Path(directory) / "web.log")
        stream = None
        try:
            serving_ms = (time.perf_counter() - server.started) * 1000
            cookie = sign_in(server)
            first_page = fetch(server.url, "/", cookie)
            startup_ms = (time.perf_counter() - server.started) * 1000
            if first_page[2].count(b'<tr id="seat-') != seats:
                raise SystemExit(f"the fleet page does not show {seats} seats")
            static = timed_fetches(server.url, "/static/st2.css", cookie, fetches)
            page = timed_fetches(server.url, "/", cookie, fetches)
            process = psutil.Process(server.process.pid)
            rss_mib = process.memory_info().rss / 2**20
            stream = Stream(server.url, cookie)
            latencies = sse_latencies(root, stream, seats, changes)
            time.sleep(GAP_SECONDS)
            before, wall_before = process.cpu_times(), time.perf_counter()
            time.sleep(idle_seconds)
            after, wall_after = process.cpu_times(), time.perf_counter()
            idle_cpu_pct = ((after.user + after.system) - (before.user + before.system)) / (wall_after - wall_before) * 100
            rss_after_mib = process.memory_info().rss / 2**20
        except SystemExit as error:
            raise SystemExit(f"{error}\nst2 web's output:\n{server.output[-3000:]}") from None
        finally:
            if stream is not None:
                stream.close()
            server.stop()
    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"{seats} seats: `st2 web` said where it serves after {serving_ms:.0f} ms; signed in and the first "
          f"page loaded after {startup_ms:.0f} ms")
    print(f"static file /static/st2.css ({static['bytes']} B), median of {fetches}: first byte "
          f"{static['first_ms']:.2f} ms, last byte {static['last_ms']:.2f} ms")
    print(f"fleet page / ({page['bytes'] / 1024:.0f} KiB), median of {fetches}: first byte {page['first_ms']:.1f} ms "
          f"({page['first_ms'] / static['first_ms']:.1f} x the static file), last byte {page['last_ms']:.1f} ms "
          f"({page['last_ms'] / static['last_ms']:.1f} x the static file; target <= {PAGE_TARGET_MS:.0f} ms, ratio "
          f"{page['last_ms'] / PAGE_TARGET_MS:.2f}), max {page['max_ms']:.1f} ms")
    print(f"page_ms={page['last_ms']:.1f} ({page['last_ms'] / static['last_ms']:.1f} x the static file)")
    print(f"SSE rename -> event: seat, {changes} changes: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max "
          f"{max(latencies):.1f} ms (target p99 <= {SSE_TARGET_MS:.0f} ms; ratio {p99 / SSE_TARGET_MS:.2f})")
    print(f"server RSS after the page loads: {rss_mib:.1f} MiB ({rss_after_mib:.1f} MiB at the end)")
    print(f"idle {idle_seconds:g} s, one stream open: cpu {idle_cpu_pct:.2f} % of one core, in steps of one 10 ms "
          f"clock tick ({1 / idle_seconds:.2f} %) (target <= "
          f"{IDLE_TARGET_PCT:g} %; ratio {idle_cpu_pct / IDLE_TARGET_PCT:.2f})")
    print(f"RESULT page_ms={page['last_ms']:.1f} page_first_byte_ms={page['first_ms']:.1f} "
          f"static_ms={static['last_ms']:.2f} ratio_static={page['last_ms'] / static['last_ms']:.1f} "
          f"ratio_page_target={page['last_ms'] / PAGE_TARGET_MS:.2f} sse_p50_ms={p50:.1f} sse_p99_ms={p99:.1f} "
          f"ratio_sse_target={p99 / SSE_TARGET_MS:.2f} rss_mib={rss_mib:.1f} idle_cpu_pct={idle_cpu_pct:.2f} "
          f"ratio_idle_target={idle_cpu_pct / IDLE_TARGET_PCT:.2f} seats={seats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
