"""st2-usage-poll.timer under a real (private) user manager fires `st2 usage poll`, which
writes the usage snapshot through the file:// endpoint seam; a timer whose schedule has not
come does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deployment import Deployment
from support import poll_for

pytestmark = [pytest.mark.systemd, pytest.mark.process]

REPO = Path(__file__).resolve().parents[2]
RESPONSE = REPO / "captures" / "anthropic-oauth-usage" / "response.better-ccflare-changelog.2025-11-25.json"
ACCOUNT = "11111111-2222-3333-4444-555555555555"


def deploy(manager, schedule: str) -> tuple[Deployment, Path]:
    deployment = Deployment(manager)
    deployment.install("--poll-interval", schedule)
    knobs = manager.base / "usage"
    knobs.mkdir()
    (knobs / "credentials.json").write_text(json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-tier", "subscriptionType": "max"}}))
    (knobs / "claude.json").write_text(json.dumps({"oauthAccount": {"accountUuid": ACCOUNT}}))
    usage_file = knobs / "usage.txt"
    manager.drop_in("st2-usage-poll.service", "knobs", (
        "[Service]\n"
        f"Environment=DELEGATION_KIT_USAGE_ENDPOINT={RESPONSE.as_uri()}\n"
        f"Environment=DELEGATION_KIT_CRED_FILE={knobs / 'credentials.json'}\n"
        f"Environment=DELEGATION_KIT_ACCOUNT_CONFIG={knobs / 'claude.json'}\n"
        f"Environment=DELEGATION_KIT_USAGE_FILE={usage_file}\n"
    ))
    # The shipped 30 s randomized delay would only slow the test down.
    manager.drop_in("st2-usage-poll.timer", "prompt", "[Timer]\nRandomizedDelaySec=0\nAccuracySec=100ms\n")
    deployment.reload()
    manager.systemctl("start", "st2-usage-poll.timer")
    return deployment, usage_file


def test_the_usage_timer_fires_st2_usage_poll(manager) -> None:
    deployment, usage_file = deploy(manager, "*:*:0/2")  # every 2 seconds
    assert poll_for(usage_file.exists, timeout=30, step=0.2), deployment.log("st2-usage-poll.service") + manager.manager_log()
    lines = usage_file.read_text().splitlines()
    assert lines[:2] == ["five_hour_used_pct=19.0", "five_hour_resets_at=1764108000"]
    assert f"account={ACCOUNT}" in lines
    shown = manager.show("st2-usage-poll.service", "Result", "ExecMainStatus")
    assert shown == {"Result": "success", "ExecMainStatus": "0"}
    command = manager.show("st2-usage-poll.service", "ExecStart")["ExecStart"]
    assert f"argv[]={deployment_st2()} usage poll ;" in command


def test_a_timer_whose_time_has_not_come_does_not_poll(manager) -> None:
    deployment, usage_file = deploy(manager, "2099-01-01")
    assert manager.show("st2-usage-poll.timer", "ActiveState")["ActiveState"] == "active"
    assert not poll_for(usage_file.exists, timeout=6, step=0.2)
    assert manager.show("st2-usage-poll.service", "ExecMainStartTimestampMonotonic")["ExecMainStartTimestampMonotonic"] == "0"


def deployment_st2() -> str:
    from deployment import ST2

    return ST2
