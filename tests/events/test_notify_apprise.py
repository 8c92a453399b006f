"""``notify { apprise … }`` hooks (process tier: each run is a child process): an apprise
``json://`` URL to a loopback receiver gets the event's JSON line, under the same rate limit,
timeout and log lines as an ``argv`` hook; a receiver that hangs past ``timeout`` is one line and
never holds back the next event; a URL apprise cannot use or a refusing service is one line."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from loopback_http import Endpoint
from st2.catalog.location import CatalogLocation
from st2.declarations.catalog import NotifyHook
from st2.events import journal
from st2.events.event import FleetEvent
from st2.events.notify import HookRunner, apprise_command, hook_label
from support import poll_for

pytestmark = pytest.mark.process

OBSERVED_MS = 1_788_000_000_123


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def event(seq: int, seat: str = "h.a", kind: str = "blocked") -> FleetEvent:
    return FleetEvent(kind, seat, "none", "human", OBSERVED_MS, {"ask": "permission"}, seq)


@pytest.fixture
def endpoint(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = Endpoint()
    server.status = 200
    yield server
    server.close()


@pytest.fixture
def make_runner(tmp_path: Path):
    made = []

    def make(*lines: str, clock=None) -> HookRunner:
        catalog = tmp_path / "catalog"
        catalog.mkdir(exist_ok=True)
        body = "".join(f"        {line}\n" for line in lines)
        (catalog / "catalog.kdl").write_text(f'catalog {{\n    notify {{\n        on "blocked"\n{body}    }}\n}}\n')
        scope = SimpleNamespace(directory=tmp_path / "scope")
        runner = HookRunner(CatalogLocation(catalog, "h"), scope, monotonic=clock or Monotonic())
        assert len(runner.hooks) == 1, "the catalog.kdl did not validate"
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.stop()


def log_lines(runner: HookRunner) -> list[str]:
    path = Path(runner.log_path)
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


def test_a_json_url_receives_the_event_line_and_the_rate_limit_holds_back_a_second(make_runner, endpoint):
    clock = Monotonic()
    runner = make_runner(f'apprise "json://127.0.0.1:{endpoint.port}/hook"', 'rate-limit "1m"', clock=clock)
    first = event(1)
    runner.submit([first])
    clock.now += 1
    runner.submit([event(2), event(3, seat="h.b")])  # #2: the same seat and kind, inside the window
    poll_for(lambda: len(endpoint.requests) == 2, lambda: f"two posts; log: {log_lines(runner)}", timeout=60)
    request = endpoint.requests[0]
    assert request.path == "/hook" and request.headers["content-type"] == "application/json"
    posted = json.loads(request.body)
    assert posted == {"version": "1.0", "title": "st2: blocked h.a", "message": first.line(), "attachments": [],
                      "type": "info"}
    assert json.loads(posted["message"]) == first.wire()
    assert json.loads(json.loads(endpoint.requests[1].body)["message"])["seat"] == "h.b"
    assert log_lines(runner) == []
    clock.now += 58
    runner.flush()
    assert log_lines(runner) == []  # the window (60 s from #1) has not ended
    clock.now += 1
    runner.flush()
    assert log_lines(runner) == ["catalog.kdl:2:5: blocked h.a: 1 run suppressed (#2; rate-limit 60s per seat and kind)"]
    assert len(endpoint.requests) == 2


def test_a_receiver_that_hangs_past_the_timeout_is_one_line_and_the_next_event_goes_out(make_runner, endpoint):
    runner = make_runner(f'apprise "json://127.0.0.1:{endpoint.port}/slow"', 'timeout "5s"')
    endpoint.hang = True
    runner.submit([event(1)])
    poll_for(lambda: endpoint.requests, "the first post", timeout=60)
    poll_for(lambda: log_lines(runner), "the timeout's line", timeout=30)
    assert log_lines(runner) == ["catalog.kdl:2:5 (apprise json) for blocked h.a #1: timed out after 5s; "
                                 "killed its process group"]
    endpoint.hang = False
    runner.submit([event(2, seat="h.b")])
    poll_for(lambda: len(endpoint.requests) == 2, lambda: f"the next post; log: {log_lines(runner)}", timeout=60)
    assert len(log_lines(runner)) == 1


def test_a_refusing_service_and_a_url_apprise_cannot_use_are_one_line_each(make_runner, endpoint):
    endpoint.status = 500
    runner = make_runner(f'apprise "json://127.0.0.1:{endpoint.port}/refuses" "nosuch://token-1234"')
    runner.submit([event(1)])
    poll_for(lambda: log_lines(runner), "the unusable URL's line", timeout=60)
    assert log_lines(runner) == ["catalog.kdl:2:5 (apprise json, nosuch) for blocked h.a #1: failed (exit 2): "
                                 "apprise cannot use URL 2 (nosuch://…)"]
    assert endpoint.requests == []
    runner = make_runner(f'apprise "json://127.0.0.1:{endpoint.port}/refuses"')
    runner.submit([event(2)])
    poll_for(lambda: len(log_lines(runner)) == 2, "the refusal's line", timeout=60)
    line = log_lines(runner)[1]
    assert line.startswith("catalog.kdl:2:5 (apprise json) for blocked h.a #2: failed (exit 1): ")
    assert "500" in line and len(endpoint.requests) == 1
    assert "token-1234" not in Path(runner.log_path).read_text()


def test_an_apprise_url_is_never_on_the_command_line():
    hook = NotifyHook(("blocked",), (), apprise=("pover://user@secret-token", "json://127.0.0.1:9/x"))
    argv, environment = apprise_command(hook, event(1))
    assert not any("secret-token" in word for word in argv)
    assert environment["ST2_APPRISE_URLS"] == "pover://user@secret-token\njson://127.0.0.1:9/x"
    assert hook_label(hook) == "apprise pover, json"


def test_a_supervisors_apprise_hook_posts_the_journaled_event(fleet, endpoint):
    from events_support import HOST, journal_lines, state, supervised_seat, wait_for_events
    from support import run_st2

    (fleet.catalog / "catalog.kdl").write_text(
        f'catalog {{\n    notify {{\n        on "blocked"\n        apprise "json://127.0.0.1:{endpoint.port}/st2"\n'
        '    }\n}\n')
    validate = run_st2("--host", HOST, "validate", env=fleet.env)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    seat = supervised_seat(fleet)
    state(seat, "human")
    [line] = wait_for_events(fleet, 1)
    poll_for(lambda: endpoint.requests, lambda: f"the post; supervisor log:\n{fleet.log()}", timeout=60)
    assert json.loads(json.loads(endpoint.requests[0].body)["message"]) == line
    assert journal_lines(fleet)[0] == line
    assert not (journal.directory_of(SimpleNamespace(directory=fleet.base)) / journal.NOTIFY_LOG).exists()
