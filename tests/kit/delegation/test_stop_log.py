"""The stop log's grammar: the field table zipped against values (arity), parse by key."""

from __future__ import annotations

import pytest

from st2.kit.delegation import stop_log

ROW = ["SubagentStop", "s-1", "yes", "red", "-", "1", "producer", "refuse", "a,b"]


def test_the_field_table_is_the_seeds_order() -> None:
    assert stop_log.FIELDS == ("event", "session", "live", "verdict", "spawn", "records", "runs", "decision", "keys")


def test_the_line_zips_every_field_against_its_value() -> None:
    line = stop_log.render_line("2026-09-01T12:00:00Z", ROW)
    assert line == (
        "2026-09-01T12:00:00Z  event=SubagentStop  session=s-1  live=yes  verdict=red  spawn=-"
        "  records=1  runs=producer  decision=refuse  keys=a,b\n"
    )
    assert len(line.rstrip("\n").split("  ")) == 1 + len(stop_log.FIELDS)


@pytest.mark.parametrize("values", [ROW[:-1], ROW + ["extra"]], ids=["short", "long"])
def test_an_arity_mismatch_raises_instead_of_truncating(values) -> None:
    with pytest.raises(ValueError, match="zips 9 fields against"):
        stop_log.render_line("2026-09-01T12:00:00Z", values)


def test_a_reader_parses_by_key_and_tolerates_added_fields() -> None:
    line = stop_log.render_line("2026-09-01T12:00:00Z", ROW).rstrip("\n") + "  owner=x=y\n"
    stamp, fields = stop_log.parse_line(line)
    assert stamp == "2026-09-01T12:00:00Z"
    assert fields == dict(zip(stop_log.FIELDS, ROW)) | {"owner": "x=y"}


def test_values_are_one_token_and_empty_is_a_dash() -> None:
    assert stop_log.sanitize("a b\tc\nd\x1b") == "a_b_c_d_"
    assert stop_log.sanitize("") == "-"
    assert stop_log.sanitize("Text file busy (os error 26)") == "Text_file_busy_(os_error_26)"


def test_the_stamp_is_utc_iso_8601() -> None:
    assert stop_log.utc_stamp(1_788_000_000_999) == "2026-08-29T10:40:00Z"


def test_append_creates_the_directory_and_an_unwritable_log_is_ignored(tmp_path) -> None:
    stop_log.append(str(tmp_path / "deep" / "log"), "one\n")
    stop_log.append(str(tmp_path / "deep" / "log"), "two\n")
    assert (tmp_path / "deep" / "log").read_text() == "one\ntwo\n"
    (tmp_path / "file").write_text("")
    stop_log.append(str(tmp_path / "file" / "log"), "lost\n")  # must not raise
