"""opencode serve against the fake model (Chat Completions wire, @ai-sdk/openai-compatible).

Pinned fact (docs/lab.md §opencode, 1.18.33): an assistant message's ``tokens.input``
excludes cache reads (prompt 9900 with 1200 cached -> input 8700, cache.read 1200), and
``tokens.total`` is prompt + completion.
"""

from __future__ import annotations

import pytest

from lab_config import configure_opencode
from lab_drivers import OpencodeServer
from lab_support import measured_builds, require_harness
from support import compact

pytestmark = pytest.mark.lab
BUILDS = [None, *measured_builds("opencode")]  # the pin, then each measured build (its own test id)

MODEL = {"providerID": "fake", "modelID": "fake-model"}


@pytest.mark.parametrize("build", BUILDS, ids=lambda build: build or "pin")
def test_assistant_tokens_input_excludes_cache_reads(lab, fake_model, build) -> None:
    """The numbers the opencode context producer joins (an assistant message's ``tokens.total``
    over the providers' ``limit.context``), on the pin and on each measured build (the same
    numbers as its capture, captures/opencode/<build>/lab/)."""
    harness = require_harness("opencode", build)
    env = configure_opencode(lab, harness, fake_model)
    server = OpencodeServer(harness.executable, lab, env)
    try:
        providers = server.get("/config/providers")
        session = server.post("/session", {})
        reply = server.post(f"/session/{session['id']}/message",
                            {"model": MODEL, "parts": [{"type": "text", "text": "hi"}]})
        fake_model.set_usage(input=50000, cache_read=20000, output=10)
        second = server.post(f"/session/{session['id']}/message",
                             {"model": MODEL, "parts": [{"type": "text", "text": "again"}]})
        # The reply can come back before the event of the finished message reaches the stream.
        finished = server.wait_event(
            lambda event: event.get("type") == "message.updated"
            and event["properties"]["info"]["id"] == second["info"]["id"]
            and event["properties"]["info"].get("time", {}).get("completed") is not None,
            30, "message.updated of the finished second reply")
    finally:
        server.close()
    fake = next(provider for provider in providers["providers"] if provider["id"] == "fake")
    assert fake["models"]["fake-model"]["limit"]["context"] == 200000
    # The POST reply orders cache {write, read}; the stored message (GET) orders {read, write}.
    assert compact(reply["info"]["tokens"]) == (
        '{"total":9942,"input":8700,"output":42,"reasoning":0,"cache":{"write":0,"read":1200}}')
    assert compact(second["info"]["tokens"]) == (
        '{"total":50010,"input":30000,"output":10,"reasoning":0,"cache":{"write":0,"read":20000}}')
    assert finished["properties"]["info"]["tokens"] == second["info"]["tokens"]
    assert all(entry["wire"] == "chat" for entry in fake_model.model_requests())
