"""The unit renderer: one template set, placeholders substituted, bad values refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.service.units import TEMPLATE_DIRECTORY, UnitSettingError, UnitSettings, render, render_all, unit_names

REPO = Path(__file__).resolve().parents[2]
SETTINGS = UnitSettings(st2="/opt/st2/bin/st2", catalog="/srv/catalog", host="box1")


def test_the_templates_are_the_repository_units_directory() -> None:
    assert TEMPLATE_DIRECTORY.resolve() == (REPO / "units").resolve()
    assert unit_names() == sorted(
        path.name for path in (REPO / "units").iterdir() if path.suffix in (".service", ".timer")
    )


def test_every_shipped_unit_is_rendered() -> None:
    assert set(render_all(SETTINGS)) >= {
        "st2.service", "st2-ding@.service", "st2-usage-poll.service", "st2-usage-poll.timer",
    }


def test_no_placeholder_survives_rendering() -> None:
    for name, text in render_all(SETTINGS).items():
        assert "@st2@" not in text and "@locationArguments@" not in text, name
        assert "@memoryMax@" not in text and "@pollInterval@" not in text, name


def test_the_supervisor_unit_carries_the_survival_and_watchdog_settings() -> None:
    lines = render_all(SETTINGS)["st2.service"].splitlines()
    for line in (
        "Type=notify",
        "KillMode=process",
        "Restart=on-failure",
        "WatchdogSec=60s",
        "MemoryMax=512M",
        "ExecStart=/opt/st2/bin/st2 --catalog /srv/catalog --host box1 up",
    ):
        assert line in lines


def test_location_arguments_are_omitted_when_unset() -> None:
    text = render_all(UnitSettings(st2="/opt/st2/bin/st2"))["st2.service"]
    assert "ExecStart=/opt/st2/bin/st2 up" in text.splitlines()


def test_the_ding_template_runs_ding_for_its_instance() -> None:
    assert "ExecStart=/opt/st2/bin/st2 --catalog /srv/catalog --host box1 ding %i" in render_all(SETTINGS)["st2-ding@.service"].splitlines()


def test_memory_and_poll_interval_are_substituted() -> None:
    rendered = render_all(UnitSettings(st2="/x/st2", memory_max="2G", poll_interval="*:0/10"))
    assert "MemoryMax=2G" in rendered["st2.service"].splitlines()
    assert "OnCalendar=*:0/10" in rendered["st2-usage-poll.timer"].splitlines()


@pytest.mark.parametrize(
    "settings",
    [
        UnitSettings(st2="relative/st2"),
        UnitSettings(st2="/x/st2", catalog="/with space/catalog"),
        UnitSettings(st2="/x/st2", catalog="/percent%i"),
        UnitSettings(st2="/x/st2", catalog="/dollar$HOME"),
        UnitSettings(st2="/x/st2", host="-flag"),
        UnitSettings(st2="/x/st2", memory_max="lots"),
        UnitSettings(st2="/x/st2", poll_interval="*:0/5\nExecStart=/bin/evil"),
    ],
)
def test_a_value_systemd_would_misread_is_refused(settings: UnitSettings) -> None:
    with pytest.raises(UnitSettingError):
        render_all(settings)


def test_an_unknown_placeholder_is_refused_not_left_in_the_unit() -> None:
    with pytest.raises(UnitSettingError, match="@surprise@"):
        render("[Service]\nExecStart=@st2@ @surprise@\n", SETTINGS)


def test_a_known_placeholder_renders() -> None:
    assert render("ExecStart=@st2@@locationArguments@ up\n", SETTINGS) == "ExecStart=/opt/st2/bin/st2 --catalog /srv/catalog --host box1 up\n"
