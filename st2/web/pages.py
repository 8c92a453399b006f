"""The web face's HTML: small server-rendered pages that read on a phone, each built from the
live fleet (:class:`st2.top.live.LiveFleet`) and the same readers `st2 top` uses — the roster's
cells (:meth:`st2.top.model.SeatView.cells`), the detail lines
(:func:`st2.top.actions.detail_lines`), the usage header's reading and the events' human form.

Every value that came from a file — names, descriptions, subjects, bodies, diagnostics, event
text — reaches the page only through :func:`h` (HTML-escaped, quotes included), and the pages
carry no inline script or style: the server's Content-Security-Policy admits only
``/static/*`` (:mod:`st2.web.app`), so markup planted in a record stays text.
"""

from __future__ import annotations

import html
import json
from urllib.parse import urlencode

from st2.declarations.model import DESIRED_STATES
from st2.top.model import COLUMNS, Filters, SeatView

TITLE = "st2"
CSRF_FIELD = "csrf"


def h(value) -> str:
    """Text for HTML: escaped, quotes included."""
    return html.escape("" if value is None else str(value), quote=True)


def layout(title: str, body: str, *, page: str, seat: str = "") -> str:
    """A whole page: the manifest, the stylesheet, the one script, and ``body``."""
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{h(title)}</title>"
        "<link rel=\"manifest\" href=\"/manifest.webmanifest\" crossorigin=\"use-credentials\">"
        "<link rel=\"stylesheet\" href=\"/static/st2.css\">"
        "<script src=\"/static/st2.js\" defer></script>"
        f"</head><body data-page=\"{h(page)}\" data-seat=\"{h(seat)}\">"
        "<nav><a href=\"/\">fleet</a> <a href=\"/events\">events</a></nav>"
        f"{body}</body></html>\n"
    )


def usage_header(usage) -> str:
    """Both usage windows and the verdict word, as the `st2 top` header reads them, and one line
    per declared account (its name, verdict word and windows) inside the same element."""
    def window(label: str, percent: float | None) -> str:
        if percent is None:
            return f"<span class=\"window\">{label} -</span>"
        return (f"<span class=\"window\">{label} <meter min=\"0\" max=\"100\" value=\"{percent:.0f}\"></meter> "
                f"{percent:.0f}%</span>")

    accounts = "".join(f"<div class=\"account verdict-{h(account.verdict_word.lower())}\">account {h(account.name)} "
                       f"<b>{h(account.verdict_word)}</b> {window('5h', account.five_hour_pct)} "
                       f"{window('7d', account.seven_day_pct)}</div>" for account in getattr(usage, "accounts", ()))
    return (f"<div id=\"usage\" class=\"verdict-{h(usage.verdict_word.lower())}\">usage "
            f"<b>{h(usage.verdict_word)}</b> {window('5h', usage.five_hour_pct)} "
            f"{window('7d', usage.seven_day_pct)}{accounts}</div>")


def context_cell(seat: SeatView, text: str) -> str:
    context = seat.row.context
    percent = context.used_percent if context is not None else None
    if percent is None:
        return f"<td>{h(text)}</td>"
    return (f"<td><meter min=\"0\" max=\"100\" value=\"{min(100.0, float(percent)):.0f}\"></meter> "
            f"{h(text)}</td>")


def seat_row(seat: SeatView, now_ms: int) -> str:
    """One fleet table row; its id is ``seat-<runtime id>`` (the live script replaces it whole)."""
    cells = seat.cells(now_ms)
    runtime_id = seat.identity
    classes = "blocked" if seat.blocked_on_human else ""
    rendered = []
    for column, text in zip(COLUMNS, cells):
        if column == "AGENT":
            rendered.append(f"<td><a href=\"/seat/{h(runtime_id)}\">{h(text)}</a>"
                            + (f"<small>{h(seat.row.name)}</small>" if seat.row.name else "") + "</td>")
        elif column == "CONTEXT":
            rendered.append(context_cell(seat, text))
        else:
            rendered.append(f"<td>{h(text)}</td>")
    return f"<tr id=\"seat-{h(runtime_id)}\" class=\"{classes}\">{''.join(rendered)}</tr>"


def fleet_rows(seats: list[SeatView], now_ms: int) -> str:
    return "".join(seat_row(seat, now_ms) for seat in seats)


def filter_query(filters: Filters, sort: str | None) -> str:
    pairs = [(key, getattr(filters, key)) for key in ("host", "harness", "state", "text") if getattr(filters, key)]
    return urlencode(pairs + ([("sort", sort)] if sort else []))


def notify_control(issue) -> str:
    """The kinds to push and the "notify me" button (shown by the script where the browser has
    PushManager); the button carries a one-use CSRF token."""
    from st2.declarations.event_kinds import KINDS
    from st2.web.push import DEFAULT_KINDS

    boxes = "".join(f"<label><input type=\"checkbox\" name=\"kind\" value=\"{h(kind)}\""
                    f"{' checked' if kind in DEFAULT_KINDS else ''}>{h(kind)}</label>" for kind in KINDS)
    return (f"<fieldset id=\"notify-kinds\" hidden><legend>push to this browser</legend>{boxes}"
            f"<button type=\"button\" id=\"notify\" data-csrf=\"{h(issue())}\">notify me</button></fieldset>")


def fleet_page(live, filters: Filters, sort: str | None, now_ms: int, issue=None) -> str:
    """The fleet: seats blocked on a human first (or by ``sort``), the usage windows, the filter
    form as `st2 top`'s, and the counts."""
    fleet = live.fleet
    seats = fleet.visible(filters, now_ms, sort)
    blocked = sum(seat.blocked_on_human for seat in fleet.seats.values())
    head = "".join(f"<th>{h(column)}</th>" for column in COLUMNS)
    form = "".join(
        f"<input name=\"{key}\" placeholder=\"{key}\" value=\"{h(getattr(filters, key) or '')}\">"
        for key in ("host", "harness", "state", "text"))
    problems = "".join(f"<li>{h(problem)}</li>" for problem in fleet.problems + fleet.inventory_errors)
    body = (
        f"{usage_header(live.usage)}"
        f"<p id=\"counts\">{len(seats)}/<span id=\"total\">{len(fleet.seats)}</span> seats, "
        f"<b id=\"blocked\">{blocked}</b> blocked on a human</p>"
        f"<form id=\"filters\" method=\"get\" action=\"/\">{form}<button>filter</button></form>"
        + (f"<ul class=\"problems\">{problems}</ul>" if problems else "")
        + (notify_control(issue) if issue is not None else "")
        + f"<div class=\"scroll\"><table id=\"fleet\" data-query=\"{h(filter_query(filters, sort))}\">"
        f"<thead><tr>{head}</tr></thead><tbody id=\"rows\">{fleet_rows(seats, now_ms)}</tbody></table></div>"
    )
    return layout(f"{TITLE}: fleet", body, page="fleet")


def blocked_section(runtime_id: str, blocked, issue) -> str:
    """What the seat is blocked on (:class:`st2.web.asks.Blocked`): each pending ask with its
    answers, or the captured pane and the `st2 attach` to run."""
    if blocked is None:
        return ""
    parts = ["<section id=\"blocked-on\"><h2>blocked on you</h2>"]
    if blocked.channel and blocked.asks:
        for ask in blocked.asks:
            question = ask.get("kind") == "question"
            verbs = (("answer", "answer"), ("decline", "decline")) if question else (("approve", "approve"),
                                                                                       ("decline", "decline"))
            parts.append(
                f"<form class=\"ask\" method=\"post\" action=\"/seat/{h(runtime_id)}/answer\">"
                f"<p><b>{h(ask.get('kind'))}</b>: {h(ask.get('text'))}</p>"
                f"<input type=\"hidden\" name=\"{CSRF_FIELD}\" value=\"{h(issue())}\">"
                f"<input type=\"hidden\" name=\"digest\" value=\"{h(ask.get('digest'))}\">"
                f"<input type=\"hidden\" name=\"incarnation\" value=\"{h(blocked.incarnation)}\">"
                f"<input type=\"hidden\" name=\"channel\" value=\"{h(blocked.channel)}\">"
                + ("<input name=\"text\" placeholder=\"your answer\">" if question else "")
                + "".join(f"<button name=\"verb\" value=\"{verb}\">{label}</button>" for verb, label in verbs)
                + "</form>")
    elif blocked.channel:
        parts.append("<p>its harness reports no pending ask right now (answered meanwhile, or not yet shown)</p>")
    else:
        parts.append("<p>st2 cannot answer this ask from here; its screen:</p>"
                     + (f"<pre id=\"pane\">{h(blocked.pane)}</pre>" if blocked.pane is not None
                        else "<p>(no terminal answered)</p>"))
    parts.append(f"<p>at the host: <code id=\"attach\">{h(blocked.attach)}</code></p></section>")
    return "".join(parts)


def seat_page(live, seat: SeatView, detail: list[str], issue, outcome: str | None, now_ms: int,
              blocked=None) -> str:
    """A seat: its row, what it is blocked on (``blocked``, for a seat blocked on a human), its
    detail lines (records, session, diagnostic, tasks, last messages, doctor), and the actions as
    forms, each with its own one-use CSRF token from ``issue()``."""
    runtime_id = seat.identity
    action = f"/seat/{h(runtime_id)}"
    head = "".join(f"<th>{h(column)}</th>" for column in COLUMNS)

    def form(verb: str, fields: str, button: str) -> str:
        return (f"<form method=\"post\" action=\"{action}/{verb}\" id=\"{verb}\">"
                f"<input type=\"hidden\" name=\"{CSRF_FIELD}\" value=\"{h(issue())}\">{fields}"
                f"<button>{button}</button></form>")

    body = (
        f"<h1>{h(runtime_id)}</h1>"
        + (f"<p id=\"outcome\">{h(outcome)}</p>" if outcome else "")
        + f"<table id=\"fleet\"><thead><tr>{head}</tr></thead><tbody id=\"rows\">{seat_row(seat, now_ms)}</tbody></table>"
        + f"<div id=\"blocked-slot\">{blocked_section(runtime_id, blocked, issue)}</div>"
        + f"<pre id=\"detail\">{h(chr(10).join(detail))}</pre>"
        + form("message", "<input name=\"subject\" placeholder=\"subject (optional)\">"
                          "<textarea name=\"body\" placeholder=\"message\" required></textarea>", "send")
        + form("unpark", "", "unpark its tasks")
        + form("desired", "<select name=\"state\">" + "".join(f"<option>{state}</option>" for state in DESIRED_STATES)
                          + "</select>"
                          "<input name=\"reason\" placeholder=\"reason (optional)\">", "set desired state")
    )
    return layout(f"{TITLE}: {runtime_id}", body, page="seat", seat=runtime_id)


def events_page(lines: list[str]) -> str:
    items = "".join(f"<li>{h(line)}</li>" for line in reversed(lines))
    return layout(f"{TITLE}: events", f"<h1>events</h1><ul id=\"events\">{items}</ul>", page="events")


def message_page(title: str, text: str) -> str:
    """A refusal or notice, as a whole page (401, 403, 404, 429)."""
    return layout(f"{TITLE}: {title}", f"<h1>{h(title)}</h1><p>{h(text)}</p>", page="message")


def ask_event(runtime_id: str, digest: str | None) -> str:
    """The stream's ``ask`` event data: the seat and the digest of its open Claude ask (or null)."""
    return json.dumps({"id": runtime_id, "digest": digest})


def seat_event(seat: SeatView, now_ms: int) -> str:
    """The stream's ``seat`` event data: the runtime id, whether it is blocked, and its row."""
    return json.dumps({"id": seat.identity, "blocked": seat.blocked_on_human, "html": seat_row(seat, now_ms)})
