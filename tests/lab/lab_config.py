"""Per-harness configuration in a throwaway lab directory, pointed only at the fake model.

A `Lab` is one temp root holding ``home/`` (HOME and every XDG dir) and ``workspace/`` (the
harness's working directory). Each ``configure_*`` function writes exactly the files
docs/lab.md says each harness needs offline and returns the environment to run it with.
The environment is built from nothing (never from the caller's), so no real ~/.claude,
CODEX_HOME or API key can leak in; only PATH and a locale are carried over.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from fake_model import FakeModel
from harnesses import Harness, environment_path

LAB_DIR = Path(__file__).resolve().parent
TEE = LAB_DIR / "tee_json.py"
EXTENSION = LAB_DIR / "extension" / "context-usage.ts"
DUMMY_KEY = "dummy"
# Hook events the lab records (Claude Code 2.1.x names).
CLAUDE_HOOK_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
    "PermissionRequest", "PermissionDenied", "Notification", "Stop", "SubagentStart",
    "SubagentStop", "PreCompact", "PostCompact", "SessionEnd",
)


# opencode 1.18.33 was seen (strace) opening a TLS connection to the npm registry at start-up
# even with every OPENCODE_DISABLE_* set. A proxy on a closed loopback port makes any such
# attempt fail at once; loopback (the fake model, opencode's own server) bypasses it.
DEAD_PROXY = {name: "http://127.0.0.1:9" for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")} | {
    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


@dataclass(frozen=True)
class Lab:
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @classmethod
    def create(cls, root: Path) -> "Lab":
        lab = cls(root.resolve())
        for directory in (lab.home, lab.workspace, lab.logs):
            directory.mkdir(parents=True, exist_ok=True)
        return lab

    def base_environment(self, harness: Harness) -> dict[str, str]:
        return {
            "PATH": environment_path(harness),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "TMPDIR": str(self.root / "tmp"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "TERM": "xterm-256color",
            "NO_UPDATE_NOTIFIER": "1",
        }


def _tee_command(path: Path, label: str | None = None, printed: str | None = None, stamp: bool = False) -> str:
    words = ([sys.executable, str(TEE), str(path)] + ([label] if label else []) + (["--print", printed] if printed else [])
             + (["--stamp"] if stamp else []))
    return " ".join(f"'{word}'" for word in words)


def configure_claude(lab: Lab, harness: Harness, fake: FakeModel, *, hooks: bool = True,
                     stamp_hooks: bool = False, allow: tuple[str, ...] = ()) -> dict[str, str]:
    """``~/.claude.json`` (onboarding, theme, approved key, trusted workspace) and the workspace
    ``.claude/settings.local.json`` (status line tee to logs/statusline.jsonl, hook tee to
    logs/hooks.jsonl)."""
    (lab.root / "tmp").mkdir(exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [DUMMY_KEY], "rejected": []},
        "projects": {str(lab.workspace): {"hasTrustDialogAccepted": True}},
    }
    (lab.home / ".claude.json").write_text(json.dumps(state, indent=2))
    settings: dict = {"statusLine": {"type": "command",
                                     "command": _tee_command(lab.logs / "statusline.jsonl", printed="st2-lab")}}
    if hooks:
        settings["hooks"] = {
            event: [{"matcher": "*", "hooks": [{"type": "command",
                                                "command": _tee_command(lab.logs / "hooks.jsonl", event,
                                                                        stamp=stamp_hooks)}]}]
            for event in CLAUDE_HOOK_EVENTS
        }
    if allow:
        settings["permissions"] = {"allow": list(allow)}
    (lab.workspace / ".claude").mkdir(exist_ok=True)
    (lab.workspace / ".claude" / "settings.local.json").write_text(json.dumps(settings, indent=2))
    return lab.base_environment(harness) | {
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def configure_codex(lab: Lab, harness: Harness, fake: FakeModel, *, context_window: int | None = None,
                    approval_policy: str = "never", sandbox_mode: str = "danger-full-access") -> dict[str, str]:
    """``$CODEX_HOME/config.toml`` with the fake provider (``wire_api = "responses"``)."""
    codex_home = lab.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (lab.root / "tmp").mkdir(exist_ok=True)
    lines = [
        'model = "gpt-5.1-codex"',
        'model_provider = "fake"',
        f'approval_policy = "{approval_policy}"',
        f'sandbox_mode = "{sandbox_mode}"',
        "check_for_update_on_startup = false",
    ]
    if context_window is not None:
        lines.append(f"model_context_window = {context_window}")
    lines += [
        "",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "{fake.base_url}/v1"',
        'env_key = "FAKE_API_KEY"',
        'wire_api = "responses"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[otel]",
        'exporter = "none"',
        "",
    ]
    (codex_home / "config.toml").write_text("\n".join(lines))
    return lab.base_environment(harness) | {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": DUMMY_KEY}


def configure_opencode(lab: Lab, harness: Harness, fake: FakeModel, *, context: int = 200000,
                       permission: dict | None = None) -> dict[str, str]:
    """The workspace ``opencode.json`` with an ``@ai-sdk/openai-compatible`` provider ``fake``."""
    (lab.root / "tmp").mkdir(exist_ok=True)
    config: dict = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": f"{fake.base_url}/v1", "apiKey": DUMMY_KEY, "includeUsage": True},
            "models": {"fake-model": {"name": "Fake model", "limit": {"context": context, "output": 8192}}},
        }},
        "model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
    }
    if permission is not None:
        config["permission"] = permission
    (lab.workspace / "opencode.json").write_text(json.dumps(config, indent=2))
    return lab.base_environment(harness) | DEAD_PROXY | {
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }


def pi_models(fake: FakeModel, context_window: int = 200000) -> dict:
    """One provider per wire the pi family speaks, each on the fake's loopback address."""
    model = {"contextWindow": context_window, "maxTokens": 8192, "reasoning": False, "input": ["text"],
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    return {"providers": {
        "fake-anthropic": {"baseUrl": fake.base_url, "api": "anthropic-messages", "apiKey": DUMMY_KEY,
                           "models": [model | {"id": "fake-claude"}]},
        "fake-chat": {"baseUrl": f"{fake.base_url}/v1", "api": "openai-completions", "apiKey": DUMMY_KEY,
                      "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                      "models": [model | {"id": "fake-chat"}]},
        "fake-responses": {"baseUrl": f"{fake.base_url}/v1", "api": "openai-responses", "apiKey": DUMMY_KEY,
                           "models": [model | {"id": "fake-resp"}]},
    }}


def configure_pi(lab: Lab, harness: Harness, fake: FakeModel, *, context_window: int = 200000) -> dict[str, str]:
    """``~/.pi/agent/models.json`` (pi) or ``~/.omp/agent/models.yml`` + ``config.yml`` (omp;
    ``compaction.keepRecentTokens: 1`` lets ``compact`` run on a two-message session)."""
    (lab.root / "tmp").mkdir(exist_ok=True)
    models = json.dumps(pi_models(fake, context_window), indent=2)
    if harness.name == "omp":
        agent = lab.home / ".omp" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        (agent / "models.yml").write_text(models)  # JSON is YAML
        (agent / "config.yml").write_text("compaction:\n  keepRecentTokens: 1\n")
    else:
        agent = lab.home / ".pi" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        (agent / "models.json").write_text(models)
    return lab.base_environment(harness) | {"ST2_LAB_EXTENSION_LOG": str(lab.logs / "extension.jsonl")}
