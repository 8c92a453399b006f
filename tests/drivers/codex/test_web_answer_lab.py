"""Lab tier: a real ``codex app-server`` 0.171.0 seat under ``st2 up``, blocked on an approval,
answered from `st2 web`'s seat page in a real Chromium through the wrapper's answer channel; an
answer naming a changed ask, another incarnation, or an ask already answered is refused and
changes nothing."""

from __future__ import annotations

import html
import re
import shutil

import pytest
from codex_support import write_message
from test_lab import HOST, make_seat

from st2_seat import fake_model, poll  # noqa: F401 (fake_model: the fixture)
from web_browser import browser_page
from web_support import WebServer

pytestmark = pytest.mark.lab


def test_a_codex_approval_is_answered_from_the_page_and_a_stale_answer_is_refused(tmp_path, fake_model) -> None:
    seat = make_seat(tmp_path, fake_model)
    server = None
    try:
        seat.up()
        poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
        server = WebServer(seat.catalog, HOST, seat.env)
        with browser_page(server) as page:
            target = seat.lab.workspace / "made-from-the-page.txt"
            write_message(seat.directory, "tool", body=f"FAKE_ESCALATE: touch {target}")
            poll(lambda: seat.state()[1] == "human", "blockedOn human", describe=seat.screen)
            page.goto(f"{server.url}/seat/{HOST}.coder")
            # The server may render the page before its own watch has re-read the record the
            # test saw; the page then reloads itself when the seat's row turns blocked.
            page.wait_for_selector("#blocked-on form.ask")
            form = page.locator("#blocked-on form.ask")
            assert form.count() == 1, page.content()
            assert "touch" in form.locator("p").inner_text()          # what Codex asks, in words
            digest = form.locator("input[name=digest]").get_attribute("value")
            incarnation = form.locator("input[name=incarnation]").get_attribute("value")

            def post(**fields) -> str:
                """Answer with the browser's session and a fresh token; the outcome the page shows."""
                page.goto(f"{server.url}/seat/{HOST}.coder")
                token = page.locator("#message input[name=csrf]").get_attribute("value")
                answer = page.request.post(f"{server.url}/seat/{HOST}.coder/answer",
                                           form={"csrf": token, "verb": "approve", **fields})
                assert answer.ok, answer.status
                shown = re.search(r'<p id="outcome">([^<]*)</p>', answer.text())
                return html.unescape(shown.group(1)) if shown else answer.text()

            changed = ("0" if digest[0] != "0" else "1") + digest[1:]
            assert post(digest=changed, incarnation=incarnation).startswith("refused: that ask is no longer pending")
            assert post(digest=digest, incarnation="another").startswith("refused: the seat's harness was restarted")
            assert seat.state()[1] == "human" and not target.exists()   # nothing applied

            page.goto(f"{server.url}/seat/{HOST}.coder")
            with page.expect_navigation():
                page.locator("#blocked-on form.ask button[value=approve]").click()
            assert page.locator("#outcome").inner_text() == "approved"
            poll(lambda: target.exists() and seat.state()[:2] == ("idle", "none"), "approved, run and idle",
                 describe=seat.screen)
            assert post(digest=digest, incarnation=incarnation).startswith("refused: that ask is no longer pending")
    finally:
        if server is not None:
            server.stop()
        seat.kill_pty()
        shutil.rmtree(seat.state_home, ignore_errors=True)
