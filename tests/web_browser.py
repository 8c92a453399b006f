"""A real Chromium for `st2 web`'s tests: Debian's build, driven by Playwright for Python with no
browser download, flags that keep it off every network but loopback, a phone-sized page."""

from __future__ import annotations

import contextlib
import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 412, "height": 860}


@contextlib.contextmanager
def browser_page(server, dialogs: list | None = None):
    """A page signed in to ``server`` (a :class:`web_support.WebServer`) through its pairing link;
    any dialog a page opens is dismissed and its message appended to ``dialogs``."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"no Chromium at {CHROMIUM}: scripts/dev test installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport=PHONE)
            page.on("dialog", lambda dialog: ((dialogs.append(dialog.message) if dialogs is not None else None),
                                              dialog.dismiss()))
            page.goto(server.pair_link())
            page.wait_for_url(server.url + "/")
            yield page
        finally:
            browser.close()
