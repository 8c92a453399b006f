"""`st2 usage poll`: the payload mapping over the captured response shapes, the file:// seam, and
the real CLI against a real HTTP server on 127.0.0.1 — happy path, 401, 500, timeout, malformed
JSON, a payload without the five-hour window, missing credentials. Every failure leaves the
pre-seeded snapshot byte-identical, and the token appears in no output and no file but the
credentials file it came from (it must reach the server's Authorization header, and only there).
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from st2.kit.usage.poll import PollFailure, epoch_of, map_payload, poll

CAPTURES = Path(__file__).resolve().parents[3] / "captures" / "anthropic-oauth-usage"
TOKEN = "sk-ant-oat01-SANDBOX-SECRET-7f3a9c"
SEEDED = b"five_hour_used_pct=55\nfive_hour_resets_at=1700000000\nupdated_at=1699990000\n"


@pytest.mark.parametrize(
    "capture, expected",
    [
        ("response.better-ccflare-changelog.2025-11-25.json", ("19.0", "1764108000", "7.0", "1764622800")),
        ("response.better-ccflare-changelog.pre-2025-11.json", ("0.0", "1764100800", "0.0", "1764615600")),
        ("response.charlieyou-aim.QUOTA_APIS.json", ("24.0", "1767383999", "36.0", "1767855599")),
        ("response.gnomecodexbar.BREAKTHROUGH.json", ("61.0", "1769587199", "22.0", "1770112799")),
    ],
)
def test_every_captured_response_shape_maps_onto_the_contract(capture, expected):
    assert map_payload((CAPTURES / capture).read_bytes(), "x") == expected


def test_a_missing_or_null_weekly_window_omits_both_weekly_keys():
    body = json.dumps({"five_hour": {"utilization": 3, "resets_at": "2026-01-01T00:00:00+00:00"}, "seven_day": None})
    assert map_payload(body.encode(), "x") == ("3", "1767225600", "", "")
    body = json.dumps({"five_hour": {"utilization": 3, "resets_at": "1767225600"}, "seven_day": {"utilization": 9, "resets_at": None}})
    assert map_payload(body.encode(), "x") == ("3", "1767225600", "", "")


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[]", b'{"five_hour": null}', b'{"five_hour": {"utilization": "n/a", "resets_at": "2026-01-01T00:00:00Z"}}',
     b'{"five_hour": {"utilization": -3, "resets_at": "2026-01-01T00:00:00Z"}}', b'{"five_hour": {"utilization": 3, "resets_at": "soon"}}'],
)
def test_an_unreadable_five_hour_window_is_unparseable(body):
    with pytest.raises(PollFailure) as failure:
        map_payload(body, "x")
    assert failure.value.problem.startswith("unparseable payload:")


def test_reset_stamps_floor_to_the_second_and_read_naive_as_utc():
    assert epoch_of("2026-01-02T19:59:59.600956+00:00") == "1767383999"
    assert epoch_of("2026-01-02T20:59:59.9+01:00") == "1767383999"
    assert epoch_of("2026-01-02T19:59:59") == "1767383999"
    assert epoch_of("1767383999") == "1767383999"
    assert epoch_of(None) == "" and epoch_of("") == "" and epoch_of("yesterday") == ""


def test_file_seam_writes_the_whole_snapshot(usage):
    usage.login(99999, token=TOKEN)
    usage.live("11111111-2222-3333-4444-555555555555")
    endpoint = (CAPTURES / "response.better-ccflare-changelog.2025-11-25.json").as_uri()
    import os

    environ = dict(os.environ, DELEGATION_KIT_USAGE_ENDPOINT=endpoint)
    assert poll(environ, now=usage.now) == str(usage.usage_file)
    assert usage.usage_file.read_text() == (
        "five_hour_used_pct=19.0\n"
        "five_hour_resets_at=1764108000\n"
        f"updated_at={usage.now}\n"
        "seven_day_used_pct=7.0\n"
        "seven_day_resets_at=1764622800\n"
        "account=11111111-2222-3333-4444-555555555555\n"
        "tier=max\n"
    )
    assert usage.usage_file.stat().st_mode & 0o777 == 0o600
    assert TOKEN not in usage.usage_file.read_text()


class UsageServer:
    """A loopback stand-in for the usage endpoint; records every request's headers."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.body = b""
        self.requests: list[dict[str, str]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's spelling)
                server.requests.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                if server.mode == "slow":
                    server.release.wait(10)  # held until the test ends; the client times out first
                    return
                status, body = {
                    "ok": (200, server.body),
                    "401": (401, b'{"error": "unauthorized"}'),
                    "500": (500, b"internal error"),
                    "malformed": (200, b'{"five_hour": {"utilization": 3,'),
                    "no-window": (200, b'{"seven_day": {"utilization": 3, "resets_at": null}}'),
                }[server.mode]
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/api/oauth/usage"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    running = UsageServer()
    yield running
    running.close()


@pytest.fixture
def polling(usage_process, server, monkeypatch):
    usage_process.login(99999, token=TOKEN)
    usage_process.usage_file.write_bytes(SEEDED)
    monkeypatch.setenv("DELEGATION_KIT_USAGE_ENDPOINT", server.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    return usage_process


def assert_token_nowhere(usage, *outputs: str) -> None:
    for output in outputs:
        assert TOKEN not in output
    for path in usage.root.rglob("*"):
        if path.is_file() and path != usage.credentials:
            assert TOKEN.encode() not in path.read_bytes(), path


def iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


@pytest.mark.process
def test_happy_path_over_http_writes_a_snapshot_the_verdict_accepts(polling, server):
    usage = polling
    shape = json.loads((CAPTURES / "response.charlieyou-aim.QUOTA_APIS.json").read_text())
    shape["five_hour"]["resets_at"] = iso(usage.now + 3 * 3600)
    shape["seven_day"]["resets_at"] = iso(usage.now + 5 * 86400)
    server.body = json.dumps(shape).encode()
    result = usage.run("usage", "poll", "--timeout", "20")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert result.stdout == f"usage-poll: wrote {usage.usage_file}\n"
    lines = usage.usage_file.read_text().splitlines()
    assert lines[:2] == ["five_hour_used_pct=24.0", f"five_hour_resets_at={usage.now + 3 * 3600}"]
    assert lines[3:] == ["seven_day_used_pct=36.0", f"seven_day_resets_at={usage.now + 5 * 86400}", "tier=max"]
    assert lines[2].startswith("updated_at=") and abs(int(lines[2].split("=")[1]) - usage.now) < 120
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request["authorization"] == f"Bearer {TOKEN}"
    assert request["anthropic-beta"] == "oauth-2025-04-20"
    assert request["accept"] == "application/json"
    assert request["path"] == "/api/oauth/usage"
    verdict = usage.run("usage", "verdict")
    assert verdict.returncode == 0 and "used=24.0% (7d 36.0%)" in verdict.stdout and "-> OK" in verdict.stdout
    assert_token_nowhere(usage, result.stdout, result.stderr, verdict.stdout, verdict.stderr)


@pytest.mark.process
@pytest.mark.parametrize(
    "mode, problem",
    [
        ("401", "answered HTTP 401"),
        ("500", "answered HTTP 500"),
        ("slow", "timed out after 0.5s"),
        ("malformed", "unparseable payload: "),
        ("no-window", "unparseable payload: no five_hour.utilization"),
    ],
)
def test_a_failed_cycle_leaves_the_snapshot_byte_identical(polling, server, mode, problem):
    usage = polling
    server.mode = mode
    # Only the held response needs a short bound; the others get a long one, so a loaded
    # machine can never turn a 401 into a timeout.
    result = usage.run("usage", "poll", "--timeout", "0.5" if mode == "slow" else "20")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("usage-poll: ") and problem in result.stderr, result.stderr
    assert "\n  help: " in result.stderr
    assert usage.usage_file.read_bytes() == SEEDED
    assert server.requests and server.requests[0]["authorization"] == f"Bearer {TOKEN}"
    assert_token_nowhere(usage, result.stdout, result.stderr)


@pytest.mark.process
def test_missing_credentials_fail_before_any_request(polling, server):
    usage = polling
    usage.credentials.unlink()
    result = usage.run("usage", "poll", "--timeout", "0.5")
    assert result.returncode == 1
    assert result.stderr == (
        f"usage-poll: credentials file missing: {usage.credentials}\n"
        "  help: log the harness in, or point DELEGATION_KIT_CRED_FILE at its credentials file;"
        " the snapshot is untouched; usage-verdict judges its age (STALE, never a silent green)\n"
    )
    assert usage.usage_file.read_bytes() == SEEDED
    assert server.requests == []


@pytest.mark.process
def test_unreadable_credentials_fail_soft(polling, server):
    usage = polling
    usage.credentials.write_text(f"not json but it holds {TOKEN}")
    result = usage.run("usage", "poll", "--timeout", "0.5")
    assert result.returncode == 1 and "credentials file unreadable" in result.stderr and "help: " in result.stderr
    assert usage.usage_file.read_bytes() == SEEDED
    assert server.requests == []
    assert_token_nowhere(usage, result.stdout, result.stderr)


@pytest.mark.process
def test_connection_refused_fails_soft(polling, server, monkeypatch):
    usage = polling
    port = server.httpd.server_address[1]
    server.close()  # nothing listens there any more
    monkeypatch.setenv("DELEGATION_KIT_USAGE_ENDPOINT", f"http://127.0.0.1:{port}/api/oauth/usage")
    result = usage.run("usage", "poll", "--timeout", "0.5")
    assert result.returncode == 1 and "fetch failed" in result.stderr and "help: " in result.stderr
    assert usage.usage_file.read_bytes() == SEEDED
    assert_token_nowhere(usage, result.stdout, result.stderr)


@pytest.mark.process
def test_misuse_exits_two(polling):
    result = polling.run("usage", "poll", "--frobnicate")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "usage-poll: unexpected argument: --frobnicate\nusage: st2 usage poll [--timeout SECONDS]\n"
    assert polling.usage_file.read_bytes() == SEEDED
