"""The fake model server, driven by a standard-library client (no harness needed)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from fake_model import FakeModel, NonLoopbackAddress, RateLimits, Usage, require_loopback
from support import compact


def post(fake: FakeModel, path: str, body: dict) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, dict(response.headers.items()), response.read()


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of a server-sent-event body."""
    events = []
    for block in body.decode().split("\n\n"):
        if not block.strip():
            continue
        name = next((line[7:] for line in block.splitlines() if line.startswith("event: ")), None)
        data = next(line[6:] for line in block.splitlines() if line.startswith("data: "))
        events.append((name, data))
    return events


def anthropic_request(text: str, tools: tuple[str, ...] = ("Bash", "Agent"), stream: bool = True) -> dict:
    return {"model": "claude-sonnet-4-5", "stream": stream, "max_tokens": 100,
            "tools": [{"name": name, "input_schema": {}} for name in tools],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}


@pytest.fixture
def fake():
    with FakeModel(usage=Usage(input=9900, output=42, cache_read=1200, cache_creation=300, reasoning=7)) as server:
        yield server


# ---------------------------------------------------------------------------------- loopback
@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "192.168.0.1", "example.com", "::"])
def test_the_fake_refuses_to_start_on_a_non_loopback_address(host: str) -> None:
    with pytest.raises(NonLoopbackAddress):
        FakeModel(host)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_addresses_are_accepted(host: str) -> None:
    require_loopback(host)


def test_the_fake_listens_on_loopback_at_a_random_port() -> None:
    with FakeModel() as first, FakeModel() as second:
        assert first.base_url.startswith("http://127.0.0.1:")
        assert first.port != second.port


# -------------------------------------------------------------------------------- Anthropic
def test_head_root_answers_200_and_is_logged(fake: FakeModel) -> None:
    request = urllib.request.Request(fake.base_url + "/", method="HEAD")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        assert response.read() == b""
    assert [(entry["method"], entry["path"]) for entry in fake.requests] == [("HEAD", "/")]


def test_anthropic_stream_carries_the_set_usage_in_start_and_delta(fake: FakeModel) -> None:
    status, headers, body = post(fake, "/v1/messages?beta=true", anthropic_request("hi"))
    events = sse_events(body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", *["content_block_delta"] * 5, "content_block_stop",
        "message_delta", "message_stop"]
    start = json.loads(events[0][1])
    assert compact(start["message"]["usage"]) == (
        '{"input_tokens":9900,"cache_creation_input_tokens":300,"cache_read_input_tokens":1200,"output_tokens":1}')
    assert events[8][1] == (
        '{"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": '
        '{"input_tokens": 9900, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 1200, "output_tokens": 42}}')
    text = "".join(json.loads(data)["delta"]["text"] for name, data in events if name == "content_block_delta")
    assert text == "Hello from the fake model."


def test_anthropic_non_streaming_message(fake: FakeModel) -> None:
    _, headers, body = post(fake, "/v1/messages", anthropic_request("hi", stream=False))
    message = json.loads(body)
    assert headers["Content-Type"] == "application/json"
    message["id"] = "ID"
    assert compact(message) == (
        '{"id":"ID","type":"message","role":"assistant","model":"claude-sonnet-4-5",'
        '"content":[{"type":"text","text":"Hello from the fake model."}],"stop_reason":"end_turn",'
        '"stop_sequence":null,"usage":{"input_tokens":9900,"cache_creation_input_tokens":300,'
        '"cache_read_input_tokens":1200,"output_tokens":42}}')


def test_a_tool_marker_line_makes_a_bash_tool_use(fake: FakeModel) -> None:
    _, _, body = post(fake, "/v1/messages", anthropic_request("FAKE_TOOL: echo ok"))
    events = sse_events(body)
    block = json.loads(events[1][1])["content_block"]
    assert (block["type"], block["name"], block["input"]) == ("tool_use", "Bash", {})
    assert json.loads(json.loads(events[2][1])["delta"]["partial_json"]) == {
        "command": "echo ok", "description": "Run a marker command"}
    assert json.loads(events[4][1])["delta"]["stop_reason"] == "tool_use"


def test_a_subagent_marker_makes_an_agent_call_whose_prompt_has_no_marker(fake: FakeModel) -> None:
    _, _, body = post(fake, "/v1/messages", anthropic_request("FAKE_SUBAGENT go", stream=False))
    block = json.loads(body)["content"][0]
    assert compact(block["input"]) == '{"description":"Say hello","prompt":"Say hello.","subagent_type":"general-purpose"}'
    assert block["name"] == "Agent"


@pytest.mark.parametrize("text, tools", [
    ("please FAKE_TOOL: echo ok", ("Bash",)),           # the marker must start a line
    ("[User]: FAKE_TOOL: echo ok", ("Bash",)),          # a summary quoting an earlier turn
    ("FAKE_TOOL: echo ok", ()),                         # no tool offered (title generation)
    ("FAKE_SUBAGENT go", ("Bash",)),                    # no sub-agent tool offered
])
def test_without_a_usable_marker_the_answer_is_text(fake: FakeModel, text: str, tools: tuple[str, ...]) -> None:
    _, _, body = post(fake, "/v1/messages", anthropic_request(text, tools, stream=False))
    assert json.loads(body)["content"][0]["type"] == "text"


def test_a_tool_result_is_answered_with_text(fake: FakeModel) -> None:
    request = anthropic_request("FAKE_TOOL: echo ok", stream=False)
    request["messages"].append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "FAKE_TOOL: echo ok"}]})
    _, _, body = post(fake, "/v1/messages", request)
    assert json.loads(body)["content"][0]["type"] == "text"


# ------------------------------------------------------------------------- OpenAI Responses
def responses_request(text: str, tools: tuple[str, ...] = ("exec_command",)) -> dict:
    return {"model": "gpt-5.1-codex", "stream": True, "tools": [{"type": "function", "name": n} for n in tools],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}]}


def test_responses_stream_events_usage_and_codex_rate_limit_headers(fake: FakeModel) -> None:
    _, headers, body = post(fake, "/v1/responses", responses_request("hi"))
    events = sse_events(body)
    assert [name for name, _ in events] == [
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        *["response.output_text.delta"] * 5, "response.output_text.done", "response.content_part.done",
        "response.output_item.done", "response.completed"]
    completed = json.loads(events[-1][1])["response"]
    assert compact(completed["usage"]) == (
        '{"input_tokens":9900,"input_tokens_details":{"cached_tokens":1200},"output_tokens":42,'
        '"output_tokens_details":{"reasoning_tokens":7},"total_tokens":9942}')
    assert headers["x-codex-primary-used-percent"] == "12.5"
    assert headers["x-codex-primary-window-minutes"] == "300"
    assert headers["x-codex-secondary-used-percent"] == "34.0"
    assert headers["x-codex-secondary-window-minutes"] == "10080"
    assert int(headers["x-codex-secondary-reset-at"]) - int(headers["x-codex-primary-reset-at"]) == 86400 - 3600


def test_responses_function_call_item_for_exec_command(fake: FakeModel) -> None:
    _, _, body = post(fake, "/v1/responses", responses_request("FAKE_TOOL: echo codex-ok"))
    events = sse_events(body)
    done = json.loads(events[-2][1])["item"]
    assert (done["type"], done["name"], json.loads(done["arguments"])) == (
        "function_call", "exec_command", {"cmd": "echo codex-ok"})
    assert "response.function_call_arguments.delta" in [name for name, _ in events]


def test_responses_function_call_output_is_answered_with_text(fake: FakeModel) -> None:
    request = responses_request("FAKE_TOOL: echo codex-ok")
    request["input"].append({"type": "function_call_output", "call_id": "call_1", "output": "codex-ok"})
    _, _, body = post(fake, "/v1/responses", request)
    assert json.loads(sse_events(body)[-1][1])["response"]["output"][0]["type"] == "message"


def test_rate_limit_headers_follow_the_configured_limits() -> None:
    with FakeModel(rate_limits=RateLimits(primary_used_percent=99.0)) as fake:
        _, headers, _ = post(fake, "/v1/responses", responses_request("hi"))
    assert headers["x-codex-primary-used-percent"] == "99.0"


# ------------------------------------------------------------------- OpenAI Chat Completions
def chat_request(text: str, tools: tuple[str, ...] = ("bash",), stream: bool = True) -> dict:
    return {"model": "fake-chat", "stream": stream, "stream_options": {"include_usage": True},
            "tools": [{"type": "function", "function": {"name": n}} for n in tools],
            "messages": [{"role": "user", "content": text}]}


def test_chat_stream_ends_with_a_usage_chunk_then_done(fake: FakeModel) -> None:
    _, _, body = post(fake, "/v1/chat/completions", chat_request("hi"))
    events = sse_events(body)
    assert events[-1] == (None, "[DONE]")
    final = json.loads(events[-2][1])
    assert final["choices"] == []
    assert compact(final["usage"]) == (
        '{"prompt_tokens":9900,"completion_tokens":42,"total_tokens":9942,'
        '"prompt_tokens_details":{"cached_tokens":1200},"completion_tokens_details":{"reasoning_tokens":7}}')
    assert json.loads(events[-3][1])["choices"][0]["finish_reason"] == "stop"


def test_chat_stream_tool_call(fake: FakeModel) -> None:
    _, _, body = post(fake, "/v1/chat/completions", chat_request("FAKE_TOOL: echo pi-ok"))
    chunks = [json.loads(data) for _, data in sse_events(body)[:-1]]
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert calls[0]["function"]["name"] == "bash"
    assert json.loads(calls[1]["function"]["arguments"]) == {"command": "echo pi-ok", "description": "Run a marker command"}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"


def test_chat_tool_result_is_answered_with_text(fake: FakeModel) -> None:
    request = chat_request("FAKE_TOOL: echo pi-ok", stream=False)
    request["messages"].append({"role": "tool", "tool_call_id": "call_1", "content": "pi-ok"})
    _, _, body = post(fake, "/v1/chat/completions", request)
    assert json.loads(body)["choices"][0]["message"]["content"] == "Hello from the fake model."


def test_models_list(fake: FakeModel) -> None:
    with urllib.request.urlopen(fake.base_url + "/v1/models", timeout=10) as response:
        assert compact(json.loads(response.read())) == (
            '{"object":"list","data":[{"id":"fake-model","object":"model","created":0,"owned_by":"fake"}]}')


# ------------------------------------------------------------------------ usage and the log
def test_usage_changes_between_turns(fake: FakeModel) -> None:
    post(fake, "/v1/messages", anthropic_request("one", stream=False))
    fake.set_usage(input=99000)
    _, _, body = post(fake, "/v1/messages", anthropic_request("two", stream=False))
    assert json.loads(body)["usage"]["input_tokens"] == 99000
    assert [entry["usage"]["input"] for entry in fake.model_requests()] == [9900, 99000]
    assert fake.usage == Usage(input=99000, output=42, cache_read=1200, cache_creation=300, reasoning=7)


def test_the_request_log_records_what_was_asked_and_answered(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with FakeModel(log_path=log) as fake:
        post(fake, "/v1/messages?beta=true", anthropic_request("FAKE_TOOL: true", stream=False))
        post(fake, "/v1/chat/completions", chat_request("hi", stream=False))
        entries = fake.wait_for(lambda requests: len(requests) == 2, timeout=5)
    first = entries[0]
    assert (first["seq"], first["method"], first["path"], first["wire"]) == (1, "POST", "/v1/messages?beta=true", "anthropic")
    assert compact(first["summary"]) == (
        '{"last_user_text":"FAKE_TOOL: true","last_is_tool_result":false,"tool_names":["Bash","Agent"],'
        '"message_count":1,"model":"claude-sonnet-4-5","stream":false}')
    assert (first["answer"]["kind"], first["answer"]["name"]) == ("tool", "Bash")
    assert entries[1]["answer"]["kind"] == "text"
    assert [json.loads(line)["seq"] for line in log.read_text().splitlines()] == [1, 2]


def test_wait_for_times_out_naming_the_log(fake: FakeModel) -> None:
    with pytest.raises(TimeoutError, match="0 requests logged"):
        fake.wait_for(lambda requests: len(requests) > 0, timeout=0.2)


def test_an_unknown_path_is_404_and_logged(fake: FakeModel) -> None:
    with pytest.raises(urllib.error.HTTPError) as error:
        post(fake, "/v1/unknown", {})
    assert error.value.code == 404
    assert fake.requests[-1]["path"] == "/v1/unknown"


def test_a_batch_marker_makes_several_tool_uses_in_one_anthropic_turn():
    import fake_wire
    from fake_model import Usage, choose_answer as answer_for

    conversation = fake_wire.Conversation("FAKE_TOOLS: echo a ;; touch b", False, ("Bash",), 1)
    answer = answer_for(conversation) | {"call_id": "c0ffee000001"}
    message = json.loads(fake_wire.anthropic_message("m", answer, Usage()))
    assert [(block["type"], block["id"], block["input"]["command"]) for block in message["content"]] == [
        ("tool_use", "toolu_fake_c0ffee000001", "echo a"), ("tool_use", "toolu_fake_c0ffee000001_1", "touch b")]
    stream = fake_wire.anthropic_stream("m", answer, Usage()).decode()
    assert stream.count("event: content_block_start") == 2 and stream.count("event: content_block_stop") == 2
    # The twin: a single FAKE_TOOL line stays one call.
    single = answer_for(fake_wire.Conversation("FAKE_TOOL: echo a", False, ("Bash",), 1)) | {"call_id": "c0ffee000002"}
    assert len(json.loads(fake_wire.anthropic_message("m", single, Usage()))["content"]) == 1
