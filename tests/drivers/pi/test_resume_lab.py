"""Lab tier, issue 24: the real pi (0.73.1) and omp (18.2.3) TUIs run by `st2 up` survive a
simulated reboot with their conversations. Two seats share ONE workspace (one session directory);
each converses; every tmux server and pane process group the test started is SIGKILLed and the
runtime scope removed; `st2 up` runs again and the next request the fake model receives from each
seat carries its own earlier conversation — pi `--session <file>`, omp `--resume=<file>`, the file
st2's channel extension named. `resume "never"` starts fresh; a session file deleted from the
harness's store falls back once, loudly, and is never retried."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from support_channel import REPO

for directory in (REPO / "tests" / "lab", REPO / "tests" / "ding"):  # capture_omp_screens: tests/ding
    if str(directory) not in sys.path:
        sys.path.append(str(directory))

from fake_model import FakeModel  # noqa: E402
from harnesses import environment_path  # noqa: E402
from lab_config import Lab, configure_pi  # noqa: E402
from lab_support import require_harness  # noqa: E402
from resume_fleet import (Fleets, ResumeFleet, declare, never_starts_fresh, refused_falls_back_once,  # noqa: E402
                          two_seats_resume_their_own)
from st2_seat import UpSeat, fake_model  # noqa: E402,F401 (fake_model: the fixture)

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"


def fleet_of(name: str, tmp_path: Path, fake: FakeModel, policies: dict[str, str]) -> ResumeFleet:
    harness = require_harness(name)
    lab = Lab.create(tmp_path / "lab")
    env = configure_pi(lab, harness, fake)
    arguments = '        args "--offline"\n' if name == "pi" else ""
    if name == "omp":
        from capture_omp_screens import OMP_OFFLINE_SETTINGS

        config = lab.home / ".omp" / "agent" / "config.yml"
        config.write_text(config.read_text() + OMP_OFFLINE_SETTINGS)
        env["OMP_SKIP_SETUP"] = "1"
    state_home = Path(tempfile.mkdtemp(prefix="st2rp-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{environment_path(harness)}"}
    block = (f'    {name} {{\n        executable "{harness.executable}"\n        provider "fake-anthropic"\n'
             f'        model "fake-claude"\n{arguments}    }}\n')
    seats = declare(tmp_path / "catalog", state_home, env, HOST, lab.workspace, policies, block)

    def ready(seat: UpSeat) -> bool:
        state = seat.record("harness-state") or {}
        return state.get("state") == "idle" and "fake-claude" in seat.screen()

    return ResumeFleet(seats, state_home, ready)


@pytest.fixture(params=["pi", "omp"])
def make_fleet(request, tmp_path: Path, fake_model: FakeModel):
    def build(policies: dict[str, str]) -> ResumeFleet:
        fleet = fleet_of(request.param, tmp_path, fake_model, policies)
        fleet.harness = request.param
        return fleet

    fleets = Fleets(build)
    yield fleets
    fleets.close()


def test_two_seats_each_resume_their_own_conversation_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    fleet = make_fleet(alpha="", beta="")
    two_seats_resume_their_own(fleet, fake_model, fleet.harness)


def test_a_seat_declaring_resume_never_starts_fresh_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    never_starts_fresh(make_fleet(gamma="never"), fake_model)


def test_a_deleted_session_file_falls_back_once_loudly_and_is_never_retried(make_fleet, fake_model) -> None:
    fleet = make_fleet(delta="")
    refused_falls_back_once(fleet, fake_model, fleet.harness, lambda session_file: Path(session_file).unlink())
