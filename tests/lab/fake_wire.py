"""Wire shapes of the fake model (standard library only): reading a request, writing an answer.

Each writer returns the complete response body. Streams are sent whole with a Content-Length —
the harnesses parse server-sent events from the body either way, and a fixed body keeps the
fake free of timing.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_model import RateLimits, Usage

TEXT_ANSWER = "Hello from the fake model."
# Text is streamed in these pieces so harnesses see several deltas, as from a real model.
TEXT_PIECES = ("Hello ", "from ", "the ", "fake ", "model.")


@dataclass(frozen=True)
class Conversation:
    """What the fake needs to know about a request to choose its answer."""

    last_user_text: str
    last_is_tool_result: bool
    tool_names: tuple[str, ...]
    message_count: int


def _identifier(prefix: str) -> str:
    return f"{prefix}_fake_{uuid.uuid4().hex[:16]}"


def _sse(event: str | None, data: Any) -> str:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n"


# ---------------------------------------------------------------------------------- reading
def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") == "tool_result":
                texts.append(_text_of(part.get("content")))
        return "\n".join(texts)
    return ""


def _tool_names(tools: Any) -> tuple[str, ...]:
    names = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return tuple(names)


def read_conversation(wire: str, body: dict[str, Any]) -> Conversation:
    """Project a request body of ``wire`` (anthropic/responses/chat) onto a Conversation."""
    tools = _tool_names(body.get("tools"))
    if wire == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return Conversation(items, False, tools, 1)
        items = items if isinstance(items, list) else []
        last = items[-1] if items else {}
        is_result = last.get("type") in ("function_call_output", "custom_tool_call_output")
        text = _text_of(last.get("output")) if is_result else _text_of(last.get("content"))
        return Conversation(text, is_result, tools, len(items))
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    last = messages[-1] if messages else {}
    content = last.get("content")
    if wire == "anthropic":
        is_result = isinstance(content, list) and any(
            isinstance(part, dict) and part.get("type") == "tool_result" for part in content)
    else:
        is_result = last.get("role") == "tool"
    return Conversation(_text_of(content), is_result, tools, len(messages))


# ------------------------------------------------------------------------------- Anthropic
def _anthropic_usage(usage: "Usage", output: int) -> dict[str, int]:
    return {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_creation,
            "cache_read_input_tokens": usage.cache_read, "output_tokens": output}


def _anthropic_blocks(answer: dict[str, Any]) -> list[dict[str, Any]]:
    if answer["kind"] == "tool":
        calls = answer.get("batch") or [{"name": answer["name"], "arguments": answer["arguments"]}]
        return [{"type": "tool_use", "id": f"toolu_fake_{answer['call_id']}" + (f"_{index}" if index else ""),
                 "name": call["name"], "input": call["arguments"]} for index, call in enumerate(calls)]
    return [{"type": "text", "text": TEXT_ANSWER}]


def anthropic_message(model: str, answer: dict[str, Any], usage: "Usage") -> bytes:
    """A non-streaming Messages response."""
    message = {"id": _identifier("msg"), "type": "message", "role": "assistant", "model": model,
               "content": _anthropic_blocks(answer),
               "stop_reason": "tool_use" if answer["kind"] == "tool" else "end_turn",
               "stop_sequence": None, "usage": _anthropic_usage(usage, usage.output)}
    return json.dumps(message).encode()


def anthropic_stream(model: str, answer: dict[str, Any], usage: "Usage") -> bytes:
    """A streaming Messages response: message_start … message_stop."""
    events = [_sse("message_start", {"type": "message_start", "message": {
        "id": _identifier("msg"), "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": _anthropic_usage(usage, 1)}})]
    for index, block in enumerate(_anthropic_blocks(answer)):
        if block["type"] == "text":
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
            for piece in TEXT_PIECES:
                events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                           "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": block | {"input": {}}}))
            events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(_sse("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use" if answer["kind"] == "tool" else "end_turn", "stop_sequence": None},
        "usage": _anthropic_usage(usage, usage.output)}))
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return "".join(events).encode()


# ------------------------------------------------------------------------- OpenAI Responses
def _responses_usage(usage: "Usage") -> dict[str, Any]:
    return {"input_tokens": usage.input, "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning},
            "total_tokens": usage.input + usage.output}


def responses_stream(model: str, answer: dict[str, Any], usage: "Usage") -> bytes:
    """A streaming Responses answer: created … completed, a message or a function_call item."""
    response = {"id": _identifier("resp"), "object": "response", "created_at": int(time.time()),
                "status": "in_progress", "model": model, "output": [], "usage": None}
    sequence = iter(range(1_000_000))
    events = []

    def emit(kind: str, **fields: Any) -> None:
        events.append(_sse(kind, {"type": kind, "sequence_number": next(sequence), **fields}))

    emit("response.created", response=response)
    emit("response.in_progress", response=response)
    if answer["kind"] == "tool":
        arguments = json.dumps(answer["arguments"])
        item = {"id": _identifier("fc"), "type": "function_call", "status": "in_progress",
                "call_id": f"call_fake_{answer['call_id']}", "name": answer["name"], "arguments": ""}
        emit("response.output_item.added", output_index=0, item=item)
        emit("response.function_call_arguments.delta", item_id=item["id"], output_index=0, delta=arguments)
        emit("response.function_call_arguments.done", item_id=item["id"], output_index=0, arguments=arguments)
        item = item | {"status": "completed", "arguments": arguments}
    else:
        item = {"id": _identifier("msg"), "type": "message", "status": "in_progress", "role": "assistant",
                "content": []}
        emit("response.output_item.added", output_index=0, item=item)
        emit("response.content_part.added", item_id=item["id"], output_index=0, content_index=0,
             part={"type": "output_text", "text": "", "annotations": []})
        for piece in TEXT_PIECES:
            emit("response.output_text.delta", item_id=item["id"], output_index=0, content_index=0, delta=piece)
        emit("response.output_text.done", item_id=item["id"], output_index=0, content_index=0, text=TEXT_ANSWER)
        part = {"type": "output_text", "text": TEXT_ANSWER, "annotations": []}
        emit("response.content_part.done", item_id=item["id"], output_index=0, content_index=0, part=part)
        item = item | {"status": "completed", "content": [part]}
    emit("response.output_item.done", output_index=0, item=item)
    emit("response.completed", response=response | {"status": "completed", "output": [item],
                                                     "usage": _responses_usage(usage)})
    return "".join(events).encode()


def codex_rate_limit_headers(limits: "RateLimits", now: float) -> dict[str, str]:
    """The ``x-codex-*`` headers Codex reads its rate-limit windows from."""
    return {
        "x-codex-primary-used-percent": f"{limits.primary_used_percent}",
        "x-codex-primary-window-minutes": f"{limits.primary_window_minutes}",
        "x-codex-primary-reset-at": f"{int(now) + limits.primary_resets_in_seconds}",
        "x-codex-secondary-used-percent": f"{limits.secondary_used_percent}",
        "x-codex-secondary-window-minutes": f"{limits.secondary_window_minutes}",
        "x-codex-secondary-reset-at": f"{int(now) + limits.secondary_resets_in_seconds}",
    }


# -------------------------------------------------------------------- OpenAI Chat Completions
def _chat_usage(usage: "Usage") -> dict[str, Any]:
    return {"prompt_tokens": usage.input, "completion_tokens": usage.output,
            "total_tokens": usage.input + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read},
            "completion_tokens_details": {"reasoning_tokens": usage.reasoning}}


def _chat_tool_call(answer: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_fake_{answer['call_id']}", "type": "function",
            "function": {"name": answer["name"], "arguments": json.dumps(answer["arguments"])}}


def chat_completion(model: str, answer: dict[str, Any], usage: "Usage") -> bytes:
    """A non-streaming Chat Completions response."""
    message: dict[str, Any] = {"role": "assistant", "content": None if answer["kind"] == "tool" else TEXT_ANSWER}
    if answer["kind"] == "tool":
        message["tool_calls"] = [_chat_tool_call(answer)]
    body = {"id": _identifier("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if answer["kind"] == "tool" else "stop"}],
            "usage": _chat_usage(usage)}
    return json.dumps(body).encode()


def chat_stream(model: str, answer: dict[str, Any], usage: "Usage") -> bytes:
    """A streaming Chat Completions answer ending in a ``choices: []`` usage chunk and [DONE]."""
    identifier, created = _identifier("chatcmpl"), int(time.time())

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
        return _sse(None, {"id": identifier, "object": "chat.completion.chunk", "created": created,
                           "model": model, "choices": choices, **extra})

    chunks = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    if answer["kind"] == "tool":
        call = _chat_tool_call(answer)
        chunks.append(chunk([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": call["id"], "type": "function",
             "function": {"name": call["function"]["name"], "arguments": ""}}]}, "finish_reason": None}]))
        chunks.append(chunk([{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": call["function"]["arguments"]}}]}, "finish_reason": None}]))
        finish = "tool_calls"
    else:
        for piece in TEXT_PIECES:
            chunks.append(chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
        finish = "stop"
    chunks.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    chunks.append(chunk([], usage=_chat_usage(usage)))
    chunks.append(_sse(None, "[DONE]"))
    return "".join(chunks).encode()
