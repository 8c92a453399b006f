"""``python -m st2.events.apprise_send``: one ``notify { apprise … }`` run, as the hook process
:class:`st2.events.notify.HookRunner` starts (so its ``timeout`` kills it with its process group,
and its stderr tail is the failure line, exactly as an ``argv`` hook's).

Reads the event's JSON line on stdin; the URLs (newline-separated: they may hold tokens, so never
on a command line others can read), the title, the human line and the hook's timeout come in
:data:`URLS`, :data:`TITLE`, :data:`BODY` and :data:`TIMEOUT`. A ``json://`` or ``jsons://`` URL is a machine's: apprise posts
``{"version", "title", "message", "attachments", "type"}`` and the message is the event's JSON
line; every other service gets the human line. Exit 0 when every URL took it, 1 when a service
refused it or could not be reached (apprise's warnings on stderr), 2 when apprise cannot use a
URL (named by its position and scheme, never its text).
"""

from __future__ import annotations

import os
import sys

URLS = "ST2_APPRISE_URLS"
TITLE = "ST2_APPRISE_TITLE"
BODY = "ST2_APPRISE_BODY"
TIMEOUT = "ST2_APPRISE_TIMEOUT"  # the hook's timeout, seconds
MACHINE_SCHEMES = ("json", "jsons")  # apprise's custom JSON poster: the receiver parses the message
EVENT_LINE_LIMIT = 64 * 1024


def main() -> int:
    import logging

    import apprise

    line = sys.stdin.buffer.read(EVENT_LINE_LIMIT).decode("utf-8", "replace").strip()
    urls = [url for url in os.environ.get(URLS, "").split("\n") if url]
    title, body = os.environ.get(TITLE, "st2"), os.environ.get(BODY, line)
    logger = logging.getLogger("apprise")
    logger.setLevel(logging.CRITICAL + 1)  # apprise logs a URL it cannot parse, token and all
    machines, people = apprise.Apprise(), apprise.Apprise()
    for number, url in enumerate(urls, 1):
        scheme = url.split(":", 1)[0].lower()
        if not (machines if scheme in MACHINE_SCHEMES else people).add(url):
            print(f"apprise cannot use URL {number} ({scheme}://…)", file=sys.stderr)
            return 2
    try:
        seconds = float(os.environ.get(TIMEOUT, ""))
    except ValueError:
        seconds = None
    for service in [*machines, *people]:
        if seconds is not None:
            # apprise's own waits (4 s each by default) would cut a run short of the hook's
            # timeout; past that timeout st2 kills this process with its group.
            service.socket_connect_timeout = service.socket_read_timeout = seconds
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # a refusal's reason (apprise names a service by host, not by URL)
    sent = True
    if len(machines):
        sent = bool(machines.notify(body=line, title=title)) and sent
    if len(people):
        sent = bool(people.notify(body=body, title=title)) and sent
    return 0 if sent else 1


if __name__ == "__main__":
    sys.exit(main())
