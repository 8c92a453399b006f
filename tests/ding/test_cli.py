"""`st2 ding` argument handling through the real CLI (the delivery itself is proved elsewhere)."""

from __future__ import annotations

import pytest

from ding_support import make_seat

pytestmark = pytest.mark.process


def test_exactly_one_target_form_is_required(st2, catalog):
    neither = st2("ding", "--host", "h", catalog=catalog)
    both = st2("ding", "h.builder", "--identity", "builder", "--host", "h", catalog=catalog)
    assert (neither.returncode, both.returncode) == (2, 2)
    assert "give exactly one of RUNTIME_ID or --identity" in neither.stderr
    assert "give exactly one of RUNTIME_ID or --identity" in both.stderr


def test_an_unknown_seat_or_malformed_target_is_refused(st2, catalog):
    make_seat(catalog, "builder")
    missing = st2("ding", "--identity", "nobody", "--host", "h", catalog=catalog)
    malformed = st2("ding", "nodot", "--host", "h", catalog=catalog)
    assert missing.returncode == 1 and f"no seat {catalog}/agents/h/nobody" in missing.stderr
    assert malformed.returncode == 1 and "'nodot' is not a runtime id <host>.<identity>" in malformed.stderr
