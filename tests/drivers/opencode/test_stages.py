"""The opencode wrapper's driver-diagnostic stages (docs/records.md
§Driver diagnostic), driven through the session's own event and delivery paths against a
scripted client: each failing stage is published, the earliest failing stage is the record, and
a recovery clears only its own stage."""

from __future__ import annotations

import io
import json
from pathlib import Path

from opencode_support import make_seat, write_message

from st2.base.clock import Clock
from st2.drivers.opencode.api import ApiError
from st2.drivers.opencode import read_back
from st2.drivers.opencode.session import OpencodeSession
from st2.drivers.seat import Seat
from st2.records import driver_diagnostic, harness_context

SESSION = "ses_test"


class ScriptedClient:
    host, port, headers = "127.0.0.1", 1, {}

    def __init__(self) -> None:
        self.failing: dict[str, ApiError] = {}
        self.messages: list = []
        self.posts: list = []

    def get(self, path: str, timeout=None):
        if path in self.failing:
            raise self.failing[path]
        return {"/session/status": {}, "/permission": [], "/question": []}.get(path, self.messages)

    def post(self, path: str, body, timeout=None):
        if path in self.failing:
            raise self.failing[path]
        self.posts.append((path, body))
        return None


def session(catalog: Path, tmp_path: Path) -> tuple[OpencodeSession, ScriptedClient]:
    directory = make_seat(catalog)
    made = OpencodeSession(Seat(directory, "h.oc"), "h.oc", ["opencode", "serve"], Clock(), catalog,
                           model="fake/fake-model", state_dir=tmp_path / "state", stdin_fd=None, stream=io.StringIO())
    made.diagnostics = driver_diagnostic.Publisher(directory, "opencode", Clock(), producer_version="1.18.33",
                                                   support="supported")
    made.records.claim()
    made.context_writer = harness_context.Writer(directory, "h.oc", "opencode", made.records.token, Clock())
    made.client = ScriptedClient()
    made.session_id = SESSION
    made.bound = True
    return made, made.client


def stage(directory: Path):
    try:
        record = json.loads((directory / "driver-diagnostic").read_text())
    except FileNotFoundError:
        return None
    return record["stage"], record["reason"], record["source"]


def assistant(error=None) -> tuple:
    info = {"id": "msg_1", "sessionID": SESSION, "role": "assistant", "providerID": "fake", "modelID": "fake-model",
            "finish": "stop", "time": {"created": 1, "completed": 2}, "error": error,
            "tokens": {"total": 10, "input": 5, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}}
    return ("event", {"type": "message.updated", "properties": {"sessionID": SESSION, "info": info}})


def test_each_stage_clears_only_on_its_own_recovery(catalog, tmp_path) -> None:
    made, client = session(catalog, tmp_path)
    seat = made.seat.directory
    made.on_item(("down", "sseConnectFailed"))
    assert stage(seat) == ("sse", "sseConnectFailed", "eventStream")
    made.on_item(assistant({"name": "ProviderAuthError", "data": {"providerID": "fake", "message": "bad key"}}))
    assert stage(seat)[0] == "sse"                      # the earliest failing stage is the record
    client.failing["/permission"] = ApiError("GET /permission: HTTP 500", 500)
    made.on_item(("connected",))                        # sse recovers; the seed fails
    assert stage(seat) == ("seed", "permissionUnavailable", "permissionSnapshot")
    del client.failing["/permission"]
    made.on_item(("down", "sseDisconnected"))
    made.on_item(("connected",))                        # both recover; providerAuth stands
    assert stage(seat) == ("providerAuth", "providerAuthRejected", "turnResult")
    made.on_item(("event", {"type": "message.updated", "properties": {"info": {
        "id": "m", "role": "assistant", "error": {"name": "UnknownError", "data": {"message": "401 unauthorized"}}}}}))
    assert stage(seat)[0] == "providerAuth"             # prose is never auth, and never a recovery
    made.on_item(assistant())
    assert stage(seat) is None


def test_delivery_and_read_back_stages(catalog, tmp_path) -> None:
    made, client = session(catalog, tmp_path)
    seat = made.seat.directory
    made.on_item(("connected",))
    name = write_message(seat, "one", body="hello")
    client.failing[f"/session/{SESSION}/prompt_async"] = ApiError("POST: timed out")
    made.deliver()
    assert stage(seat) == ("delivery", "deliveryUnavailable", "promptTransport")
    assert made.pump.phase_of(name).name == "ATTEMPTED"     # no answer: it holds, never re-sent
    del client.failing[f"/session/{SESSION}/prompt_async"]
    client.failing[f"/session/{SESSION}/message"] = ApiError("GET: HTTP 500", 500)
    made._next_read_back = 0.0
    made.deliver()                                          # the ambiguous attempt is read back, not sent
    assert client.posts == [] and stage(seat)[0] == "delivery"
    assert made.diagnostics.failures["readBack"]["reason"] == "readBackUnavailable"
    del client.failing[f"/session/{SESSION}/message"]
    made._next_read_back = 0.0
    made.deliver()                                          # this server may still take it: it holds
    assert made.pump.ledger.get(name).negative is None and client.posts == []
    made._sent_at -= read_back.QUIET_SECONDS
    made._next_read_back = 0.0
    made.deliver()                                          # idle and quiet: absent, one retry
    assert made.pump.ledger.get(name).negative.value == "absent"
    assert made.diagnostics.failures["readBack"]["reason"] == "notDurable"
    made.inbox_dirty = True
    made.deliver()                                          # the one retry, accepted
    assert len(client.posts) == 1 and "delivery" not in made.diagnostics.failures
    text = client.posts[0][1]["parts"][0]["text"]
    assert client.posts[0][1]["model"] == {"providerID": "fake", "modelID": "fake-model"}
    client.messages = [{"info": {"role": "user", "sessionID": SESSION}, "parts": [{"type": "text", "text": text}]}]
    made._next_read_back = 0.0
    made.deliver()
    assert made.pump.phase_of(name).name == "PERSISTED" and stage(seat) is None
