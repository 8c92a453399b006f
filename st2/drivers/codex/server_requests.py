"""An explicit answer for every server→client request codex-cli 0.171.0 can send (its
``ServerRequest`` schema lists ten methods). An unanswered request stalls the turn, so every method
— and any method this build does not know — gets an answer.

=========================================  ===============  ======================================
method                                     ask              answer
=========================================  ===============  ======================================
item/commandExecution/requestApproval      permission       human: {"decision": "accept"|"decline"}
item/fileChange/requestApproval            permission       human: {"decision": "accept"|"decline"}
item/permissions/requestApproval           permission       human: the requested grants, or none
execCommandApproval (legacy)               permission       human: {"decision": "approved"|{"denied"}}
applyPatchApproval (legacy)                permission       human: {"decision": "approved"|{"denied"}}
item/tool/requestUserInput                 question         human: the typed answer, or no answers
mcpServer/elicitation/request              —                at once: {"action": "decline"}
item/tool/call                             —                at once: success false (st2 registers none)
account/chatgptAuthTokens/refresh          —                at once: error (st2 holds no credential)
attestation/generate                       —                at once: error (st2 cannot attest)
anything else                              —                at once: error -32601
=========================================  ===============  ======================================

A human-resolved request holds the seat ``blockedOn: human`` until it is answered (in the PTY, or
with ``st2 driver codex approve``) and Codex sends ``serverRequest/resolved``.
"""

from __future__ import annotations

from typing import Any

HUMAN_ASKS: dict[str, str] = {
    "item/commandExecution/requestApproval": "permission",
    "item/fileChange/requestApproval": "permission",
    "item/permissions/requestApproval": "permission",
    "execCommandApproval": "permission",
    "applyPatchApproval": "permission",
    "item/tool/requestUserInput": "question",
}
IMMEDIATE: tuple[str, ...] = ("mcpServer/elicitation/request", "item/tool/call",
                              "account/chatgptAuthTokens/refresh", "attestation/generate")
METHODS_0_171_0: tuple[str, ...] = tuple(HUMAN_ASKS) + IMMEDIATE
METHOD_NOT_FOUND = -32601
DECLINED = -32000


def immediate_answer(method: str, params: Any) -> tuple[str, Any]:
    """``("result", dict)`` or ``("error", (code, message))`` for a request no human resolves."""
    if method == "mcpServer/elicitation/request":
        return "result", {"action": "decline", "content": None}
    if method == "item/tool/call":
        return "result", {"contentItems": [{"type": "inputText", "text": "st2 registers no dynamic tools"}],
                          "success": False}
    if method == "account/chatgptAuthTokens/refresh":
        return "error", (DECLINED, "st2 holds no credentials; log in with codex itself")
    if method == "attestation/generate":
        return "error", (DECLINED, "st2 cannot attest this client")
    return "error", (METHOD_NOT_FOUND, f"st2 does not handle {method}")


def human_answer(method: str, params: Any, accept: bool, text: str | None = None) -> dict:
    """The result for a human's decision on a :data:`HUMAN_ASKS` request."""
    params = params if isinstance(params, dict) else {}
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "accept" if accept else "decline"}
    if method == "item/permissions/requestApproval":
        requested = params.get("permissions") if accept and isinstance(params.get("permissions"), dict) else {}
        return {"permissions": requested, "scope": "turn"}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "approved" if accept else {"denied": {"rejection": "declined by the operator"}}}
    if method == "item/tool/requestUserInput":
        questions = params.get("questions") if isinstance(params.get("questions"), list) else []
        if not accept or text is None:
            return {"answers": {}}
        return {"answers": {question["id"]: {"answers": [text]} for question in questions
                            if isinstance(question, dict) and isinstance(question.get("id"), str)}}
    raise ValueError(f"{method} is not resolved by a human")


def describe(method: str, params: Any) -> str:
    """One human-readable line about what is being asked (for the transcript)."""
    params = params if isinstance(params, dict) else {}
    if "command" in params:
        command = params["command"]
        command = " ".join(str(part) for part in command) if isinstance(command, list) else str(command)
        return f"run `{command}`" + (f" ({params['reason']})" if params.get("reason") else "")
    if method == "item/tool/requestUserInput":
        raw = params.get("questions") if isinstance(params.get("questions"), list) else []
        return "answer: " + " / ".join(str(q.get("question", "")) for q in raw if isinstance(q, dict))
    if method in ("item/fileChange/requestApproval", "applyPatchApproval"):
        return "apply a file change" + (f" ({params['reason']})" if params.get("reason") else "")
    return method
