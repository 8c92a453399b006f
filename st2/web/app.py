"""`st2 web`'s application: a Starlette app over one :class:`st2.top.live.LiveFleet`.

Routes (every one but ``/pair`` needs a session cookie, else 401; ``/metrics`` also takes
``Authorization: Bearer <st2 web token metrics>``)::

    GET  /pair?token=T               spend a pairing link, set the session cookie
    GET  /                           the fleet (filters host, harness, state, text; sort)
    GET  /fragment/rows              the fleet table's rows for the same filters
    GET  /seat/<runtime-id>          a seat's detail and its actions
    GET  /fragment/detail/<id>       a seat's detail lines
    GET  /fragment/blocked/<id>      what the seat is blocked on, with fresh answer forms
    POST /seat/<runtime-id>/message  send (subject, body) as this host's operator principal
    POST /seat/<runtime-id>/unpark   unpark the seat's parked tasks
    POST /seat/<runtime-id>/desired  set its desired state (state, reason)
    POST /seat/<runtime-id>/answer   answer a pending ask (incarnation, digest, verb, text) through
                                     the seat's answer channel (:mod:`st2.web.asks`)
    GET  /events                     the fleet events log
    GET  /stream                     server-sent events: seat, fleet, ask, usage, counts, event
    GET  /api/fleet                  the roster rows as `st2 agents --json --enrich` writes them
    GET  /metrics                    Prometheus text format (:mod:`st2.web.metrics`)
    GET  /push/key                   the host's VAPID public key and the default event kinds
    POST /push/subscribe             a browser's push subscription and its kinds (JSON, with csrf)
    POST /push/unsubscribe           drop a subscription by its endpoint (JSON, with csrf)
    GET  /static/…, /manifest.webmanifest, /sw.js   the script, style sheet and PWA files

Live: the fleet's watch descriptor is read by the event loop; a change is re-read at most
:data:`FLUSHES_PER_SECOND` times a second, once for every client, and fanned out to each open
stream's queue. A client whose queue is full is told to reload and dropped. Every POST spends a
one-use CSRF token (403 otherwise); every answer carries a Content-Security-Policy that admits
no inline script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from st2.top.model import SORT_KEYS, Filters
from st2.web import pages
from st2.web.access import COOKIE, SESSION_SECONDS, Access, Throttle

FLUSHES_PER_SECOND = 20
QUEUE_LIMIT = 256
KEEPALIVE_SECONDS = 15.0
FORM_LIMIT = 64 * 1024
OUTCOME_SECONDS = 10.0
STATIC = Path(__file__).parent / "static"
STATIC_FILES = {  # url path -> (file, media type)
    "/static/st2.js": ("st2.js", "text/javascript"),
    "/static/st2.css": ("st2.css", "text/css"),
    "/sw.js": ("sw.js", "text/javascript"),
    "/manifest.webmanifest": ("manifest.webmanifest", "application/manifest+json"),
    "/static/icon.svg": ("icon.svg", "image/svg+xml"),
}
RUNTIME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "connect-src 'self'; manifest-src 'self'; worker-src 'self'; form-action 'self'; "
                                "base-uri 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class Hub:
    """The live fleet and the open streams it feeds."""

    def __init__(self, live) -> None:
        self.live = live
        self.queues: set[asyncio.Queue] = set()
        self.scheduled = False
        self.last_flush = 0.0
        self.flushes = 0
        self.pusher = None  # st2.web.push.Pusher: each new fleet event, to the subscribed browsers

    def start(self) -> None:
        self.live.load()
        if self.live.start_watch():
            asyncio.get_running_loop().add_reader(self.live.fileno(), self._readable)

    def stop(self) -> None:
        if self.live.watching:
            asyncio.get_running_loop().remove_reader(self.live.fileno())
            self.live.close()

    def _readable(self) -> None:
        if self.live.drain() and not self.scheduled:
            self.scheduled = True
            delay = max(0.0, self.last_flush + 1.0 / FLUSHES_PER_SECOND - time.monotonic())
            asyncio.get_running_loop().call_later(delay, self.flush)

    def flush(self) -> None:
        """Re-read what changed once and send each stream what it needs."""
        self.scheduled = False
        self.last_flush = time.monotonic()
        self.flushes += 1
        changes = self.live.apply()
        now_ms = self.live.clock.wall_ms()
        fleet = self.live.fleet
        messages = []
        if changes.catalog or changes.tasks:
            messages.append(("fleet", "changed"))
        if not changes.catalog:
            for runtime_id in sorted(changes.seats):
                seat = fleet.seats.get(runtime_id)
                messages.append(("seat", pages.seat_event(seat, now_ms)) if seat is not None else ("fleet", "changed"))
        messages += [("ask", pages.ask_event(runtime_id, self.open_ask(runtime_id))) for runtime_id in sorted(changes.asks)]
        if changes.usage:
            messages.append(("usage", pages.usage_header(self.live.usage)))
        if changes.events:
            messages += [("event", item.human()) for item in self.live.events.fresh]
            if self.pusher is not None:
                self.pusher.submit(self.live.events.fresh)  # only enqueues: one worker thread sends
        if changes.seats or changes.catalog:
            blocked = sum(seat.blocked_on_human for seat in fleet.seats.values())
            messages.append(("counts", json.dumps({"seats": len(fleet.seats), "blocked": blocked})))
        self.publish(messages)

    def open_ask(self, runtime_id: str) -> str | None:
        """The digest of the seat's open Claude permission ask, if its hook still waits."""
        from st2.drivers.claude import permission
        from st2.runtime.scope import RuntimeScope

        ask = permission.read_ask(RuntimeScope(self.live.location.root, self.live.location.host).directory, runtime_id)
        return ask["digest"] if ask is not None else None

    def publish(self, messages: list[tuple[str, str]]) -> None:
        if not messages:
            return
        for queue in list(self.queues):
            try:
                for message in messages:
                    queue.put_nowait(message)
            except asyncio.QueueFull:  # a reader that fell behind: its stream ends with a reload
                self.queues.discard(queue)
                queue.dropped = True

    async def stream(self, request: Request):
        queue: asyncio.Queue = asyncio.Queue(QUEUE_LIMIT)
        queue.dropped = False
        self.queues.add(queue)
        try:
            yield ": st2\n\n"
            while True:
                if queue.dropped and queue.empty():
                    yield "event: fleet\ndata: reload\n\n"
                    return
                try:
                    kind, data = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except asyncio.TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                yield f"event: {kind}\ndata: {data}\n\n"
        finally:
            self.queues.discard(queue)


def build_app(live, store: Path, *, secure: bool = False) -> Starlette:
    """The application over ``live`` (a :class:`st2.top.live.LiveFleet`), with the access
    secret of the session store ``store``; ``secure`` when served over TLS (the cookie's
    ``Secure`` attribute)."""
    access = Access(store)
    throttle = Throttle()
    hub = Hub(live)
    from st2.web.push import Pusher

    pusher = hub.pusher = Pusher(store, live.location.host)
    outcomes: dict[str, tuple[float, str]] = {}   # session id -> (when, the last action's outcome)
    location = live.location

    def page(text: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(text, status, headers=SECURITY_HEADERS)

    def refused(status: int, title: str, text: str) -> HTMLResponse:
        return page(pages.message_page(title, text), status)

    def session_of(request: Request) -> str | None:
        return access.session_id(request.cookies.get(COOKIE))

    def guarded(handler):
        async def endpoint(request: Request):
            sid = session_of(request)
            if sid is None:
                return refused(401, "not signed in", "open a pairing link from `st2 web pair` on the host")
            return await handler(request, sid)
        return endpoint

    def recent_outcome(sid: str) -> str | None:
        """The session's last action outcome while it is recent (a page the live stream reloads
        right after the action still shows it)."""
        when, text = outcomes.get(sid, (0.0, None))
        return text if time.monotonic() - when < OUTCOME_SECONDS else None

    def seat_of(request: Request):
        runtime_id = request.path_params["runtime_id"]
        if not RUNTIME_ID.fullmatch(runtime_id):
            return None
        return live.fleet.seats.get(runtime_id)

    def filters_of(request: Request) -> tuple[Filters, str | None]:
        query = request.query_params
        sort = query.get("sort")
        return (Filters(host=query.get("host") or None, harness=query.get("harness") or None,
                        state=query.get("state") or None, text=query.get("text") or ""),
                sort if sort in SORT_KEYS else None)

    async def pair(request: Request):
        client = request.client.host if request.client else "?"
        if not throttle.admits(client):
            return refused(429, "too many attempts", "wait a minute, then open a new pairing link")
        cookie = access.redeem(request.query_params.get("token", ""))
        if cookie is None:
            throttle.failed(client)
            return refused(401, "pairing link refused", "the link is wrong, expired or already used: "
                                                       "run `st2 web pair` for a new one")
        response = page(pages.layout("st2: paired", "<p>paired: <a href=\"/\">open the fleet</a></p>"
                                     "<meta http-equiv=\"refresh\" content=\"0; url=/\">", page="message"))
        response.set_cookie(COOKIE, cookie, max_age=SESSION_SECONDS, httponly=True, samesite="strict",
                            secure=secure, path="/")
        return response

    async def fleet_page(request: Request, sid: str):
        filters, sort = filters_of(request)
        return page(pages.fleet_page(live, filters, sort, live.clock.wall_ms(), lambda: access.csrf.issue(sid)))

    async def rows(request: Request, sid: str):
        filters, sort = filters_of(request)
        now_ms = live.clock.wall_ms()
        return page(pages.fleet_rows(live.fleet.visible(filters, now_ms, sort), now_ms))

    async def detail_lines(seat) -> list[str]:
        from st2.top.actions import detail_lines as lines

        return await run_in_threadpool(lines, location, seat, live.clock.wall_ms())

    async def blocked_of(seat):
        if not seat.blocked_on_human:
            return None
        from st2.web import asks

        return await run_in_threadpool(asks.read, location, seat.identity)

    async def blocked_fragment(request: Request, sid: str):
        seat = seat_of(request)
        if seat is None:
            return refused(404, "no such seat", "no seat of that runtime id in this catalog")
        return page(pages.blocked_section(seat.identity, await blocked_of(seat), lambda: access.csrf.issue(sid)))

    async def seat_page(request: Request, sid: str):
        seat = seat_of(request)
        if seat is None:
            return refused(404, "no such seat", "no seat of that runtime id in this catalog")
        detail = await detail_lines(seat)
        blocked = await blocked_of(seat)
        return page(pages.seat_page(live, seat, detail, lambda: access.csrf.issue(sid), recent_outcome(sid),
                                    live.clock.wall_ms(), blocked))

    async def detail(request: Request, sid: str):
        seat = seat_of(request)
        if seat is None:
            return refused(404, "no such seat", "no seat of that runtime id in this catalog")
        return page(pages.h("\n".join(await detail_lines(seat))))

    def action(run):
        async def handler(request: Request, sid: str):
            seat = seat_of(request)
            if seat is None:
                return refused(404, "no such seat", "no seat of that runtime id in this catalog")
            body = await request.body()
            if len(body) > FORM_LIMIT:
                return refused(413, "too large", f"a form is at most {FORM_LIMIT} bytes")
            form = {key: values[0] for key, values in parse_qs(body.decode("utf-8", "replace")).items()}
            if not access.csrf.spend(sid, form.get(pages.CSRF_FIELD)):
                return refused(403, "refused", "the form's token is wrong or already used: reload the page")
            outcomes[sid] = (time.monotonic(), await run_in_threadpool(run, seat, form))
            return Response(status_code=303, headers={**SECURITY_HEADERS, "location": f"/seat/{seat.identity}"})
        return handler

    def send(seat, form) -> str:
        from st2.top.actions import send_message

        return send_message(location, seat, form.get("body", ""), form.get("subject") or None)

    def unpark(seat, form) -> str:
        from st2.top.actions import unpark_tasks

        return unpark_tasks(location, seat)

    def desired(seat, form) -> str:
        from st2.top.actions import set_desired

        return set_desired(location, seat, f"{form.get('state', '')} {form.get('reason', '')}".strip())

    def answer(seat, form) -> str:
        from st2.web import asks

        return asks.answer(location, seat.identity, form)

    async def events_page(request: Request, sid: str):
        return page(pages.events_page([item.human() for item in live.events.events]))

    async def stream(request: Request, sid: str):
        return StreamingResponse(hub.stream(request), media_type="text/event-stream",
                                 headers={**SECURITY_HEADERS, "x-accel-buffering": "no"})

    async def api_fleet(request: Request, sid: str):
        from st2.roster.wire import row_object

        rows = [row_object(seat.row, True) for seat in sorted(live.fleet.seats.values(), key=lambda s: s.identity)]
        return JSONResponse(rows, headers=SECURITY_HEADERS)

    async def metrics(request: Request):
        authorization = request.headers.get("authorization", "")
        bearer = authorization[7:] if authorization.lower().startswith("bearer ") else None
        if session_of(request) is None and not access.bearer_valid("metrics", bearer):
            return refused(401, "not signed in", "send `Authorization: Bearer` with `st2 web token metrics`")
        from prometheus_client import CONTENT_TYPE_LATEST

        from st2.web.metrics import render

        return Response(render(live), headers={**SECURITY_HEADERS, "content-type": CONTENT_TYPE_LATEST})

    def static(path: str):
        name, media = STATIC_FILES[path]
        data = (STATIC / name).read_bytes()

        async def serve(request: Request, sid: str):
            headers = {**SECURITY_HEADERS, "content-type": media}
            if path == "/sw.js":
                headers["service-worker-allowed"] = "/"
            return Response(data, headers=headers)
        return serve

    async def push_key(request: Request, sid: str):
        from st2.web.push import DEFAULT_KINDS, VapidUnreadable, application_server_key

        try:
            key = await run_in_threadpool(application_server_key, store)
        except VapidUnreadable as error:
            return JSONResponse({"error": str(error)}, 500, headers=SECURITY_HEADERS)
        return JSONResponse({"key": key, "kinds": list(DEFAULT_KINDS)}, headers=SECURITY_HEADERS)

    async def push_request(request: Request, sid: str):
        """The JSON body of a push POST once its one-use CSRF token is spent: (body, None), or
        (None, the refusal)."""
        body = await request.body()
        if len(body) > FORM_LIMIT:
            return None, JSONResponse({"error": f"at most {FORM_LIMIT} bytes"}, 413, headers=SECURITY_HEADERS)
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not access.csrf.spend(sid, data.get(pages.CSRF_FIELD)):
            return None, JSONResponse({"error": "the token is wrong or already used: reload the page"}, 403,
                                      headers=SECURITY_HEADERS)
        return data, None

    async def push_subscribe(request: Request, sid: str):
        from st2.web.push import SubscriptionRefused

        data, refusal = await push_request(request, sid)
        if refusal is not None:
            return refusal
        try:
            entry = await run_in_threadpool(pusher.subscribe, data.get("subscription"), data.get("kinds"))
        except SubscriptionRefused as error:
            return JSONResponse({"error": str(error), "csrf": access.csrf.issue(sid)}, 400, headers=SECURITY_HEADERS)
        return JSONResponse({"kinds": list(entry.kinds), "csrf": access.csrf.issue(sid)}, headers=SECURITY_HEADERS)

    async def push_unsubscribe(request: Request, sid: str):
        data, refusal = await push_request(request, sid)
        if refusal is not None:
            return refusal
        endpoint = data.get("endpoint")
        if not isinstance(endpoint, str):
            return JSONResponse({"error": "`endpoint` is not a string", "csrf": access.csrf.issue(sid)}, 400,
                                headers=SECURITY_HEADERS)
        found = await run_in_threadpool(pusher.unsubscribe, endpoint)
        return JSONResponse({"unsubscribed": found, "csrf": access.csrf.issue(sid)}, headers=SECURITY_HEADERS)

    routes = [
        Route("/pair", pair),
        Route("/", guarded(fleet_page)),
        Route("/fragment/rows", guarded(rows)),
        Route("/fragment/detail/{runtime_id}", guarded(detail)),
        Route("/fragment/blocked/{runtime_id}", guarded(blocked_fragment)),
        Route("/seat/{runtime_id}", guarded(seat_page)),
        Route("/seat/{runtime_id}/message", guarded(action(send)), methods=["POST"]),
        Route("/seat/{runtime_id}/unpark", guarded(action(unpark)), methods=["POST"]),
        Route("/seat/{runtime_id}/desired", guarded(action(desired)), methods=["POST"]),
        Route("/seat/{runtime_id}/answer", guarded(action(answer)), methods=["POST"]),
        Route("/events", guarded(events_page)),
        Route("/stream", guarded(stream)),
        Route("/api/fleet", guarded(api_fleet)),
        Route("/metrics", metrics),
        Route("/push/key", guarded(push_key)),
        Route("/push/subscribe", guarded(push_subscribe), methods=["POST"]),
        Route("/push/unsubscribe", guarded(push_unsubscribe), methods=["POST"]),
    ] + [Route(path, guarded(static(path))) for path in STATIC_FILES]

    async def not_found(request: Request, exc):
        if session_of(request) is None:
            return refused(401, "not signed in", "open a pairing link from `st2 web pair` on the host")
        return refused(exc.status_code, "not found" if exc.status_code == 404 else "refused", "no such page")

    @contextlib.asynccontextmanager
    async def lifespan(app):
        hub.start()
        try:
            yield
        finally:
            hub.stop()
            await run_in_threadpool(pusher.stop)

    async def refused_by_host(request: Request, error: OSError):
        """The machine refused a write or read (a full or read-only disk, a file where a directory
        belongs): one line in the server's output and on the page, no traceback."""
        from st2.fs.errors import os_error_line

        line = os_error_line(["web"], error)
        print(f"{line} ({request.method} {request.url.path})", file=sys.stderr, flush=True)
        return refused(503, "the host refused", line)

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={404: not_found, 405: not_found, OSError: refused_by_host})
    app.state.hub, app.state.access = hub, access
    return app
