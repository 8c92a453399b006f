"""Binding an opencode seat to its session (issue 24): the session to resume is kept when the
server holds it; a definite "not here" (404, or an id that is not ``ses_…``) falls back to one new
session; no answer (a timeout, a 5xx) never replaces the conversation — the wrapper asks again and
delivery holds meanwhile. Driven through :meth:`OpencodeSession.bind` against a scripted client."""

from __future__ import annotations

import io
from pathlib import Path

from opencode_support import make_seat

from st2.base.clock import FakeClock
from st2.drivers.opencode.api import ApiError
from st2.drivers.opencode.session import OpencodeSession
from st2.drivers.seat import Seat
from st2.records import driver_diagnostic, harness_context

OLD = "ses_dce8fcb34ffePeUUB0gxTbQvZC"
NEW = "ses_dce8fcb34ffeNEWSESSION00000"


class Server:
    """GET /session/{id} answers as scripted (a dict, or an ApiError raised); POST /session makes NEW."""

    host, port, headers = "127.0.0.1", 1, {}

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str]] = []

    def get(self, path: str, timeout=None):
        self.calls.append(("GET", path))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, ApiError):
            raise answer
        return answer

    def post(self, path: str, body, timeout=None):
        self.calls.append(("POST", path))
        return {"id": NEW}


def session(catalog: Path, tmp_path: Path, server: Server, resume: str | None = OLD) -> OpencodeSession:
    directory = make_seat(catalog)
    clock = FakeClock()
    made = OpencodeSession(Seat(directory, "h.oc"), "h.oc", ["opencode", "serve"], clock, catalog,
                           model="fake/fake-model", state_dir=tmp_path / "state", stdin_fd=None, stream=io.StringIO())
    made.diagnostics = driver_diagnostic.Publisher(directory, "opencode", clock, producer_version="1.18.33",
                                                   support="supported")
    made.records.claim()
    made.context_writer = harness_context.Writer(directory, "h.oc", "opencode", made.records.token, clock)
    made.client = server
    made.session_id = resume
    made._wait = lambda seconds: (clock.sleep(seconds), True)[1]
    return made


def creations(server: Server) -> int:
    return server.calls.count(("POST", "/session"))


def test_a_held_session_is_resumed_and_nothing_new_is_created(catalog, tmp_path) -> None:
    server = Server({"id": OLD})
    made = session(catalog, tmp_path, server)
    assert made.bind(made.clock.monotonic() + 60) is True
    assert (made.session_id, made.bound, creations(server)) == (OLD, True, 0)


def test_a_404_falls_back_to_one_new_session(catalog, tmp_path) -> None:
    server = Server(ApiError("GET: HTTP 404", 404))
    made = session(catalog, tmp_path, server)
    refused = []
    made.resume_refused = refused.append
    assert made.bind(made.clock.monotonic() + 60) is True
    assert (made.session_id, refused, creations(server)) == (NEW, [OLD], 1)
    assert server.calls.count(("GET", f"/session/{OLD}")) == 1   # asked once, never in a loop


def test_an_id_that_is_not_an_opencode_session_id_is_never_asked_and_falls_back(catalog, tmp_path) -> None:
    server = Server({"id": "../etc"})
    made = session(catalog, tmp_path, server, resume="../etc")
    refused = []
    made.resume_refused = refused.append
    assert made.bind(made.clock.monotonic() + 60) is True
    assert (made.session_id, refused, server.calls) == (NEW, ["../etc"], [("POST", "/session")])


def test_no_answer_never_replaces_the_conversation_and_a_later_answer_resumes_it(catalog, tmp_path) -> None:
    server = Server(ApiError("GET: timed out"), ApiError("GET: HTTP 503", 503), ApiError("GET: timed out"))
    made = session(catalog, tmp_path, server)
    refused = []
    made.resume_refused = refused.append
    assert made.bind(made.clock.monotonic() + 5) is False
    assert (made.session_id, made.bound, refused, creations(server)) == (OLD, False, [], 0)
    assert len(server.calls) >= 2   # asked again within the deadline
    made.deliver()   # delivery holds while unbound; nothing is created either
    assert creations(server) == 0
    server.answers = [{"id": OLD}]
    made.clock.advance(31)
    made.deliver()   # the loop's re-ask, on its cadence
    assert (made.session_id, made.bound, creations(server)) == (OLD, True, 0)
