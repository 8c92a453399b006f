"""The acceptance core's edges (st2.resources.acceptance): one test per row of its table, each
with the case beside it that must not take that edge."""

from __future__ import annotations

from st2.resources import acceptance, state
from st2.resources.acceptance import Outcome

BINDING = acceptance.Binding("h.w", "doc", "file:///d")
FACTS = {"exists": True, "content": "a"}


def published(current, generation=1, facts=FACTS, now=100):
    return acceptance.accept(current, BINDING, generation, "Published", facts, None, now)


def test_a_first_publication_is_revision_one_with_the_hosts_digest() -> None:
    accepted = published(None)
    assert accepted.outcome is Outcome.CHANGED
    assert (accepted.state.revision, accepted.state.host_digest, accepted.state.host_observed_at_ms) == (
        1, state.digest_facts(FACTS), 100)


def test_the_same_facts_again_are_no_transition_and_different_facts_are() -> None:
    first = published(None).state
    same = published(first, now=200)
    assert (same.outcome, same.state) == (Outcome.SAME, None)        # healthy and fresh: no write
    heartbeat = published(first, now=100 + acceptance.HEARTBEAT_MS)
    assert (heartbeat.outcome, heartbeat.state.revision, heartbeat.state.host_observed_at_ms) == (
        Outcome.SAME, 1, 100 + acceptance.HEARTBEAT_MS)
    changed = published(first, facts={"exists": True, "content": "b"}, now=300)
    assert (changed.outcome, changed.state.revision) == (Outcome.CHANGED, 2)


def test_unchanged_is_accepted_only_from_a_generation_that_published() -> None:
    first = published(None, generation=2).state
    assert acceptance.accept(first, BINDING, 2, "Unchanged", None, None, 500).outcome is Outcome.SAME
    assert acceptance.accept(first, BINDING, 2, "Unchanged", None, None, 10**6).state.host_observed_at_ms == 10**6
    fabricated = acceptance.accept(first, BINDING, 3, "Unchanged", None, None, 500)
    assert fabricated.outcome is Outcome.REFUSED
    assert fabricated.state.last_failure.kind == "refused-output"
    assert fabricated.state.facts == FACTS and fabricated.state.revision == 1  # what was known stays
    assert acceptance.accept(None, BINDING, 1, "Unchanged", None, None, 500).outcome is Outcome.REFUSED


def test_a_lower_generation_is_fenced_and_an_equal_or_higher_one_is_not() -> None:
    current = published(None, generation=3).state
    assert published(current, generation=2, facts={"x": 1}).outcome is Outcome.FENCED
    assert published(current, generation=2, facts={"x": 1}).state is None
    assert acceptance.failed(current, BINDING, 2, "timeout", "late", 9).outcome is Outcome.FENCED
    assert published(current, generation=4, facts={"x": 1}).outcome is Outcome.CHANGED


def test_failed_keeps_the_facts_and_a_later_success_clears_the_failure() -> None:
    current = published(None).state
    failing = acceptance.accept(current, BINDING, 1, "Failed", None, "gone", 400)
    assert failing.outcome is Outcome.FAILED
    assert (failing.state.facts, failing.state.revision, failing.state.last_failure) == (
        FACTS, 1, state.Failure("provider-failed", "gone", 400))
    assert published(failing.state, now=500).state.last_failure is None


def test_facts_out_of_bounds_are_refused_not_published() -> None:
    refused = published(None, facts={"nested": {"a": 1}})
    assert refused.outcome is Outcome.REFUSED
    assert (refused.state.revision, refused.state.host_digest, refused.state.facts) == (0, None, {})
    assert "not a string" in refused.state.last_failure.message


def test_a_failure_after_the_uri_changed_never_relabels_the_old_facts() -> None:
    current = published(None).state
    moved = acceptance.Binding("h.w", "doc", "file:///elsewhere")
    failing = acceptance.failed(current, moved, 1, "provider-failed", "missing", 5)
    assert (failing.state.uri, failing.state.facts) == ("file:///d", FACTS)
    republished = acceptance.accept(failing.state, moved, 1, "Published", {"exists": False}, None, 6)
    assert (republished.outcome, republished.state.uri, republished.state.revision) == (
        Outcome.CHANGED, "file:///elsewhere", 2)
