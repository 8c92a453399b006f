"""Every reader, fed arbitrary bytes: never an exception, and garbage never yields a definite
value (no presence word from noise, no observed state, no context numbers, no failure)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from st2.records import driver_diagnostic, harness_context, harness_state, status

NOW = 1_788_000_000_000
SETTINGS = settings(max_examples=200, deadline=None)

# Arbitrary bytes, plus JSON-ish noise that gets past the first parse more often.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=20,
)
noise = st.binary(max_size=300) | json_values.map(lambda value: json.dumps(value).encode())


@SETTINGS
@given(noise, st.integers(min_value=0, max_value=2**63), st.none() | st.integers(min_value=0, max_value=2**63))
def test_status_never_raises_and_noise_is_never_a_settable_word(data: bytes, now: int, mtime: int | None) -> None:
    reading = status.read(data, now, mtime)
    assert reading.presence in status.PRESENCES
    if reading.presence not in ("offline", "unknown"):
        # A definite word only ever comes from bytes that literally carry it.
        assert data.split(b"\n")[0] == reading.presence.encode()


@SETTINGS
@given(noise, st.integers(min_value=0, max_value=2**63))
def test_harness_state_never_raises_and_noise_is_unknown(data: bytes, now: int) -> None:
    observed = harness_state.read(data, now, lambda session: "dead")
    assert observed is not None
    harness_state.to_wire(observed)
    if observed.state != "unknown":
        assert json.loads(data)["schema"] == harness_state.SCHEMA


@SETTINGS
@given(noise, st.integers(min_value=0, max_value=2**63))
def test_harness_context_never_raises_and_noise_is_none(data: bytes, now: int) -> None:
    reading = harness_context.read(data, now)
    if reading is not None:
        assert json.loads(data)["schema"] in harness_context.ACCEPTED_SCHEMAS
    harness_context.to_wire(reading)


@SETTINGS
@given(noise, st.integers(min_value=0, max_value=2**63))
def test_driver_diagnostic_never_raises_and_noise_is_never_a_failure(data: bytes, now: int) -> None:
    diagnostic = driver_diagnostic.read(data, now)
    assert diagnostic.status in ("indeterminate", "failure")
    if diagnostic.status == "failure":
        assert json.loads(data)["schema"] == driver_diagnostic.SCHEMA
    driver_diagnostic.to_wire(diagnostic)


def _valid_state(now: int) -> dict:
    return {"schema": harness_state.SCHEMA, "agent": "h.a", "harness": "claude", "state": "idle", "blockedOn": "none",
            "inputBuffer": "empty", "incarnation": "t", "seq": 1, "sinceMs": now, "writtenAtMs": now, "transitions": 0}


@SETTINGS
@given(st.sampled_from(sorted(_valid_state(0))), json_values)
def test_one_field_replaced_by_noise_never_yields_a_state_the_noise_did_not_name(field: str, value) -> None:
    record = _valid_state(NOW)
    record[field] = value
    observed = harness_state.read(json.dumps(record).encode(), NOW)
    assert observed.state in ("idle", "unknown") or (field == "state" and observed.state == value)
