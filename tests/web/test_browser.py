"""`st2 web` in a real Chromium (Debian's, driven by Playwright): pairing through the printed link,
the fleet of a real `st2 up`, a record's rename reaching the open page without a reload, a message
sent from the page landing once as the operator, hostile markup staying inert, and the service
worker registering.

One `st2 up`, one `st2 web` and one browser for the module (about 4 s on a 2-core machine).
``ST2_WEB_SCREENSHOT=<png>`` saves the fleet page as the README shows it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from roster_fixture import state_record
from supervisor_support import Fleet
from support import poll_for
from web_browser import CHROMIUM, CHROMIUM_FLAGS, PHONE
from web_support import WebServer

pytestmark = [pytest.mark.process, pytest.mark.one_worker]

HOSTILE = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">"
SHELL = 'argv "sh" "-c" "echo ready; while :; do sleep 3600; done"'


@pytest.fixture(scope="module")
def face(tmp_path_factory):
    """A fleet of three shell seats under a real `st2 up`, `st2 web` over it, and a signed-in page."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: scripts/dev test installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    from st2.bus.principals import ensure_operator

    fleet = Fleet(tmp_path_factory.mktemp("web"))
    fleet.seat("worker", f'    name "Works"\n    {SHELL}')
    fleet.seat("helper", f"    {SHELL}")
    fleet.seat("hostile", f'    name "{HOSTILE.replace(chr(34), chr(92) + chr(34))}"\n    {SHELL}')
    ensure_operator(fleet.catalog, fleet.host)
    inbox = fleet.catalog / "agents" / fleet.host / "hostile" / "resources" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    (inbox / f"{int(time.time() * 1000)}-abcdef.md").write_text(
        f"---\nfrom: {fleet.host}.operator\nsubject: {HOSTILE}\n---\n{HOSTILE}\n")
    fleet.up()
    server = None
    playwright = sync_playwright().start()
    try:
        poll_for(lambda: {f"{fleet.host}.{name}" for name in ("worker", "helper", "hostile")} <= set(fleet.running()),
                 "the three seats running under st2 up", timeout=60)
        server = WebServer(fleet.catalog, fleet.host, fleet.env)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport=PHONE)
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(server.pair_link())
        page.wait_for_url(server.url + "/")
        yield fleet, server, page, dialogs
        browser.close()
    finally:
        playwright.stop()
        if server is not None:
            server.stop()
        fleet.cleanup()


def test_pairing_through_the_printed_link_shows_the_fleet_of_a_real_st2_up(face) -> None:
    fleet, server, page, _ = face
    page.goto(server.url + "/")
    for name in ("worker", "helper", "hostile"):
        row = page.locator(f"#seat-{fleet.host}\\.{name}")
        assert row.count() == 1
        assert "agent:running" in row.inner_text() or "ok 1" in row.inner_text()
    assert page.locator("#seat-h\\.worker small").inner_text() == "Works"


def test_a_record_renamed_on_disk_reaches_the_open_page_within_a_second_without_a_reload(face) -> None:
    fleet, server, page, _ = face
    page.goto(server.url + "/")
    page.evaluate("window.__same_page = true")
    seat = fleet.catalog / "agents" / fleet.host / "helper"
    record = state_record("helper", "active", int(time.time() * 1000), blockedOn="human", ask="permission")
    temporary = seat / ".harness-state.tmp"
    temporary.write_text(json.dumps(record) + "\n")
    renamed = time.monotonic()
    os.replace(temporary, seat / "harness-state")
    page.wait_for_selector("#seat-h\\.helper.blocked", timeout=1000)
    took = time.monotonic() - renamed
    assert took < 1.0, took
    assert page.evaluate("window.__same_page") is True          # updated in place, not reloaded
    assert "blocked:human" in page.locator("#seat-h\\.helper").inner_text()
    # The count comes in the same flush as the row, as its own event just after it. (A locator
    # assertion: a polled page function would be evaluated as a string, which the page's CSP refuses.)
    expect(page.locator("#blocked")).to_have_text("1", timeout=1000)
    screenshot = os.environ.get("ST2_WEB_SCREENSHOT")
    if screenshot:
        page.screenshot(path=screenshot, full_page=True)


def test_a_message_sent_from_the_page_lands_once_in_the_inbox_as_the_operator(face) -> None:
    fleet, server, page, _ = face
    page.goto(server.url + "/seat/h.worker")
    body = f"from the phone {time.time_ns()}"
    page.fill("#message textarea[name=body]", body)
    with page.expect_navigation():
        page.click("#message button")
    page.wait_for_selector("#outcome")
    assert page.locator("#outcome").inner_text().startswith("sent ")
    seat = fleet.catalog / "agents" / fleet.host / "worker" / "resources"
    landed = [path for box in ("inbox", "archive") if (seat / box).is_dir() for path in (seat / box).iterdir()
              if body in path.read_text()]
    assert len(landed) == 1, landed
    assert f"from: {fleet.host}.operator\n" in landed[0].read_text()
    page.goto(server.url + "/seat/h.worker")
    token = page.locator("#message input[name=csrf]").get_attribute("value")
    fresh = page.request.post(server.url + "/seat/h.worker/message", form={"csrf": token, "body": body},
                              max_redirects=0)
    replayed = page.request.post(server.url + "/seat/h.worker/message", form={"csrf": token, "body": body},
                                 max_redirects=0)
    assert (fresh.status, replayed.status) == (303, 403)             # the browser's cookie, a spent token
    assert len([path for box in ("inbox", "archive") if (seat / box).is_dir() for path in (seat / box).iterdir()
                if body in path.read_text()]) == 2


def test_markup_in_a_seat_name_and_a_mail_subject_stays_text(face) -> None:
    fleet, server, page, dialogs = face
    for path in ("/", "/seat/h.hostile"):
        page.goto(server.url + path)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("img[src=x]").count() == 0
    assert HOSTILE in page.locator("#detail").inner_text()          # shown, as text
    page.goto(server.url + "/")
    assert HOSTILE in page.locator("#seat-h\\.hostile small").inner_text()
    assert dialogs == []


def test_the_service_worker_registers(face) -> None:
    _, server, page, _ = face
    page.goto(server.url + "/")
    state = page.evaluate("navigator.serviceWorker.ready.then(registration => registration.active.scriptURL)")
    assert state == server.url + "/sw.js"
    # The browser can push: the kinds to pick and the button are shown (defaults ticked).
    assert page.locator("#notify-kinds").is_visible()
    ticked = page.eval_on_selector_all("#notify-kinds input:checked", "boxes => boxes.map(box => box.value)")
    assert sorted(ticked) == ["blocked", "parked", "pause"]
