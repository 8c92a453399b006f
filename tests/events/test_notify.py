"""Operator hooks over fleet events under a real `st2 up` (process tier): a hook gets the event's
JSON line on stdin, is rate-limited per seat and kind, and one that hangs or fails is bounded,
logged and never holds the journal back."""

from __future__ import annotations

import json
import shutil

import pytest

from events_support import HOST, journal_directory, journal_lines, state, supervised_seat, wait_for_events
from support import poll_for, run_st2

pytestmark = pytest.mark.process


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def notify_log(fleet) -> str:
    path = journal_directory(fleet) / "notify.log"
    return path.read_text() if path.exists() else ""


def test_a_hook_that_hangs_or_fails_is_bounded_and_reported_and_never_holds_the_journal(fleet):
    base = fleet.base
    (fleet.catalog / "catalog.kdl").write_text(
        'catalog {\n'
        '    notify {\n'
        '        on "blocked"\n'
        f'        command "cat > {base}/hook-$ST2_EVENT_SEQ.json; echo $ST2_EVENT_KIND $ST2_EVENT_SEAT '
        f'$ST2_EVENT_FROM $ST2_EVENT_TO >> {base}/hook.env"\n'
        '        rate-limit "1h"\n'
        '    }\n'
        '    notify {\n'
        '        on "blocked"\n'
        f'        command "sleep 600 & echo $! > {base}/grandchild.pid; echo $$ > {base}/hang.pid; wait"\n'
        '        timeout "4s"\n'
        '    }\n'
        '    notify {\n'
        '        on "blocked" "stale"\n'
        '        command "echo broken hook >&2; exit 3"\n'
        '    }\n'
        '}\n')
    assert run_st2("--host", HOST, "validate", env=fleet.env).returncode == 0
    seat = supervised_seat(fleet)

    state(seat, "human")
    [first] = wait_for_events(fleet, 1)
    # The first hook got the event's line on stdin, and its words in the environment.
    poll_for(lambda: (base / "hook-1.json").exists() and (base / "hook.env").exists(), "the first hook's output")
    assert (base / "hook-1.json").read_text() == json.dumps(first, separators=(",", ":")) + "\n"
    assert (base / "hook.env").read_text() == "blocked h.a none human\n"
    # The second hangs: while it does, the next transition is journaled all the same.
    hang = int(poll_for(lambda: (base / "hang.pid").exists() and (base / "hang.pid").read_text().strip(), "the hang"))
    grandchild = int((base / "grandchild.pid").read_text())
    state(seat, "none")
    wait_for_events(fleet, 2)
    assert alive(hang) and alive(grandchild), "the journal waited for the hanging hook"
    # Its timeout kills its whole process group, and says so.
    poll_for(lambda: "timed out" in notify_log(fleet), lambda: f"the timeout line; log: {notify_log(fleet)}", timeout=20)
    poll_for(lambda: not alive(hang) and not alive(grandchild), "the hanging hook's group killed", timeout=10)
    poll_for(lambda: "failed (exit 3)" in notify_log(fleet), lambda: f"the failing hook line; log: {notify_log(fleet)}", timeout=30)
    # Suppressed runs are counted: one summary line per hook, seat and kind when its window
    # ends, or when the supervisor stops.
    assert fleet.stop(fleet.supervisors[-1]) == 0
    lines = [line.split(" ", 1)[1] for line in notify_log(fleet).splitlines()]
    assert lines == [
        "catalog.kdl:7:5 (sh) for blocked h.a #1: timed out after 4s; killed its process group",
        "catalog.kdl:12:5 (sh) for blocked h.a #1: failed (exit 3): broken hook",
        "catalog.kdl:7:5: blocked h.a: 1 run suppressed (#2; rate-limit 60s per seat and kind)",
        "catalog.kdl:12:5: blocked h.a: 1 run suppressed (#2; rate-limit 60s per seat and kind)",
        "catalog.kdl:2:5: blocked h.a: 1 run suppressed (#2; rate-limit 3600s per seat and kind)",
    ]
    assert "notify: catalog.kdl:7:5 (sh) for blocked h.a #1: timed out after 4s; killed its process group" in fleet.log()
    assert not (base / "hook-2.json").exists()  # rate-limited per seat and kind
    assert [line["seq"] for line in journal_lines(fleet)] == [1, 2]


def test_a_hook_that_cannot_start_is_reported_and_a_malformed_notify_block_runs_nothing(fleet):
    (fleet.catalog / "catalog.kdl").write_text(
        'catalog {\n    notify {\n        on "blocked"\n        argv "/nonexistent/notifier"\n    }\n}\n')
    seat = supervised_seat(fleet)
    state(seat, "human")
    wait_for_events(fleet, 1)
    poll_for(lambda: "failed" in notify_log(fleet), "the failure line")
    line = notify_log(fleet).splitlines()[0].split(" ", 1)[1]
    assert line.startswith("catalog.kdl:2:5 (/nonexistent/notifier) for blocked h.a #1: failed (exit 127): ")
    assert "/nonexistent/notifier" in line.split("(exit 127): ", 1)[1]  # the shell's own words
    # An edited catalog.kdl is re-read; a malformed one runs no hook and says why, once.
    (fleet.catalog / "catalog.kdl").write_text(
        f'catalog {{\n    notify {{\n        on "blockd"\n        command "touch {fleet.base}/ran"\n    }}\n}}\n')
    poll_for(lambda: "does not validate" in notify_log(fleet), "the refusal line")
    state(seat, "none")
    wait_for_events(fleet, 2)
    validate = run_st2("--host", HOST, "validate", env=fleet.env)
    assert validate.returncode != 0
    assert "catalog.kdl:3:12: error[invalid-value]: `on` names no event kind 'blockd'" in validate.stdout + validate.stderr
    assert notify_log(fleet).count("does not validate") == 1
    assert not (fleet.base / "ran").exists()


@pytest.mark.skipif(shutil.which("curl") is None, reason="the recipe's curl is not installed")
def test_the_readme_webhook_recipe_posts_the_event_line_to_a_local_url(fleet):
    import http.server
    import re
    import threading

    from support import REPO

    received: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the http.server hook's name)
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *arguments):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        readme = (REPO / "README.md").read_text()
        recipe = re.search(r"```kdl\n(catalog \{\n    notify.*?)```", readme, re.S).group(1)
        assert "http://127.0.0.1:8787/st2-events" in recipe
        (fleet.catalog / "catalog.kdl").write_text(
            recipe.replace("http://127.0.0.1:8787/", f"http://127.0.0.1:{server.server_port}/")
                  .replace('command "notify-send', 'command "true notify-send'))  # no desktop here
        assert run_st2("--host", HOST, "validate", env=fleet.env).returncode == 0
        seat = supervised_seat(fleet)
        state(seat, "human")
        [event] = wait_for_events(fleet, 1)
        poll_for(lambda: received, "the webhook's POST")
        assert received == [json.dumps(event, separators=(",", ":")).encode() + b"\n"]
        assert notify_log(fleet) == ""
    finally:
        server.shutdown()
