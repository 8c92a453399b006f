"""A real Prometheus scrapes a real `st2 web`'s ``/metrics`` with the bearer token of
`st2 web token metrics` (read from a ``credentials_file``, as an operator's prometheus.yml does),
and its query API then holds the fleet's seats by observed state as `st2 agents --json` counts
them, from a target whose health is ``up``.

Without a `prometheus` binary the test skips loudly with the reason, as the multihost tier does
without syncthing (tests/multihost/conftest.py); where the binary is required — CI, the explicit
``ST2_REQUIRE_PROMETHEUS``, or ``ST2_MULTIHOST_REQUIRED=1``, which `scripts/dev test` exports after
installing its ``TEST_PACKAGES`` (prometheus among them) — its absence is a failure instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
import warnings
from collections import Counter
from pathlib import Path

import psutil
import pytest

import top_fixture
from support import poll_for, run_st2, st2_env
from web_support import WebServer

pytestmark = pytest.mark.process

PROMETHEUS = shutil.which("prometheus")
REQUIRED = ("CI", "ST2_REQUIRE_PROMETHEUS")
MISSING = "this test needs a `prometheus` binary on PATH (Debian: apt-get install prometheus; `scripts/dev test` installs it)"
QUERY = "sum by (state) (st2_seats)"


def prometheus_required() -> str | None:
    """The variable that makes a missing prometheus a failure, if one is set."""
    for name in REQUIRED:
        if os.environ.get(name):
            return name
    if os.environ.get("ST2_MULTIHOST_REQUIRED") == "1":
        return "ST2_MULTIHOST_REQUIRED=1"
    return None


def require_prometheus() -> str:
    if PROMETHEUS is not None:
        return PROMETHEUS
    required = prometheus_required()
    if required is not None:
        pytest.fail(f"{required} is set and {MISSING}", pytrace=False)
    warnings.warn(f"the Prometheus scrape test SKIPPED: {MISSING}", pytest.PytestWarning)
    pytest.skip(f"SKIPPED LOUDLY: {MISSING}")


def expected_states(catalog: Path, env: dict) -> Counter:
    """Seats by observed state word (``-`` without a record), counted from `st2 agents --json`."""
    result = run_st2("--catalog", str(catalog), "--host", top_fixture.HOST, "agents", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return Counter((row["observedState"] or {}).get("state", "-") for row in json.loads(result.stdout))


def api(base: str, path: str, **query: str):
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    with urllib.request.urlopen(url, timeout=5) as answer:
        body = json.load(answer)
    assert body["status"] == "success", body
    return body["data"]


def listening_address(process: subprocess.Popen) -> str | None:
    """Where ``process`` (told to listen on port 0) listens, once it does."""
    try:
        listening = [connection.laddr for connection in psutil.Process(process.pid).net_connections("tcp")
                     if connection.status == psutil.CONN_LISTEN]
    except psutil.NoSuchProcess:
        return None
    return f"http://{listening[0].ip}:{listening[0].port}" if listening else None


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_a_real_prometheus_scrapes_the_fleet_with_the_bearer_token(tmp_path: Path) -> None:
    binary = require_prometheus()
    catalog = top_fixture.build(tmp_path)
    env = st2_env(catalog, XDG_STATE_HOME=str(tmp_path / "state"), **top_fixture.usage_environment(tmp_path))
    expected = expected_states(catalog, env)
    assert sum(expected.values()) == 5 and expected["-"] == 1, expected  # four alpha seats with records, one beta without

    server = WebServer(catalog, top_fixture.HOST, env)
    prometheus = None
    log = tmp_path / "prometheus.log"
    try:
        token = run_st2("--catalog", str(catalog), "--host", top_fixture.HOST, "web", "token", "metrics", env=env)
        assert token.returncode == 0 and token.stdout.strip(), token.stderr
        credentials = tmp_path / "metrics.token"
        credentials.write_text(token.stdout.strip() + "\n")
        credentials.chmod(0o600)
        target = urllib.parse.urlsplit(server.url).netloc
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({  # JSON is YAML: no YAML writer needed
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{
                "job_name": "st2", "metrics_path": "/metrics", "scheme": "http",
                "authorization": {"type": "Bearer", "credentials_file": str(credentials)},
                "static_configs": [{"targets": [target]}],
            }],
        }, indent=2) + "\n")
        with log.open("wb") as output:
            prometheus = subprocess.Popen(
                [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 "--web.listen-address=127.0.0.1:0", "--web.enable-lifecycle"],
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, cwd=tmp_path,
                start_new_session=True)
        context = lambda: f"prometheus log:\n{log.read_text()[-3000:]}\nst2 web:\n{server.output[-2000:]}"  # noqa: E731
        base = poll_for(lambda: prometheus.poll() is None and listening_address(prometheus),
                        lambda: f"prometheus listening\n{context()}", timeout=15)

        def scraped():
            try:
                return api(base, "/api/v1/query", query=QUERY)["result"]
            except OSError:  # its HTTP API not ready yet
                return None
        result = poll_for(scraped, lambda: f"a non-empty answer to {QUERY!r}\n{context()}", timeout=15, step=0.2)
        assert {sample["metric"]["state"]: int(float(sample["value"][1])) for sample in result} == dict(expected)

        targets = api(base, "/api/v1/targets")["activeTargets"]
        assert len(targets) == 1, targets
        assert targets[0]["health"] == "up", (targets[0], context())
        assert targets[0]["scrapeUrl"] == f"{server.url}/metrics"
        assert targets[0]["lastError"] == ""
    finally:
        if prometheus is not None:
            stop(prometheus)
        server.stop()
