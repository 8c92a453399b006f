"""Atomic proposals to a file: binding: the compare-and-swap, a SIGKILL after each step leaving
exactly the old or the new state, the retry's durable receipt, fail-closed divergence and its
recovery, and 16 concurrent proposers on one prior yielding one winner."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from st2.resources import proposal, registry, state
from st2.resources.observers import observe_file
from st2.runtime import layout
from support import REPO

AGENT, BINDING = "h.w", "now"


class Binding:
    def __init__(self, base: Path) -> None:
        self.seat = base / "c" / "agents" / "h" / "w"
        self.seat.mkdir(parents=True)
        self.scope = base / "scope"
        (self.scope / "staging").mkdir(parents=True)
        self.document = base / "docs" / "now.md"
        self.document.parent.mkdir()
        self.document.write_text("old\n")
        self.uri = f"file://{self.document}"
        facts = observe_file({"path": str(self.document)})
        state.update(self.seat, AGENT, BINDING, lambda current: state.State(
            AGENT, BINDING, self.uri, 1, 1, state.digest_facts(facts), 1, facts, None, 0), 1)

    def propose(self, data: bytes, revision: int = 1, on_step=lambda step: None) -> dict:
        return proposal.propose(self.scope, str(self.seat), AGENT, BINDING, self.uri, data, revision,
                                lambda: 1000, on_step)

    def record(self) -> state.State:
        return state.read_file(self.seat, AGENT, BINDING)

    def in_child(self, data: bytes, kill_after: str | None = None) -> subprocess.CompletedProcess:
        """The proposal in its own process, SIGKILLed right after step ``kill_after``."""
        script = (
            "import os, signal, sys\n"
            "from st2.resources import proposal\n"
            "def step(name):\n"
            f"    if name == {kill_after!r}: os.kill(os.getpid(), signal.SIGKILL)\n"
            "try:\n"
            f"    r = proposal.propose({str(self.scope)!r}, {str(self.seat)!r}, {AGENT!r}, {BINDING!r}, "
            f"{self.uri!r}, sys.stdin.buffer.read(), 1, lambda: 1000, step)\n"
            "    print('won', r['revision'])\n"
            "except proposal.ProposalRefused as refusal:\n"
            "    print('refused', refusal.code)\n")
        return subprocess.run([sys.executable, "-c", script], input=data, capture_output=True, cwd=REPO, timeout=60)


@pytest.fixture
def binding(tmp_path: Path) -> Binding:
    made = Binding(tmp_path)
    made.scope = Path(str(made.scope))
    return made


def test_a_proposal_swaps_the_carrier_and_catches_the_state_up_once(binding) -> None:
    receipt = binding.propose(b"new\n")
    identity = proposal.proposal_id({"agent": AGENT, "binding": BINDING, "uri": binding.uri, "generation": 1,
                                     "expectedRevision": 1, "newDigest": hashlib.sha256(b"new\n").hexdigest()})
    assert json.dumps(receipt, separators=(",", ":")) == (
        '{"schema":"st2.resource-proposal-receipt.v1","proposal":"' + identity + '","agent":"h.w","binding":"now",'
        '"state":"committed","generation":1,"revision":2,"contentSha256":"'
        + hashlib.sha256(b"new\n").hexdigest() + '","committedAtMs":1000}')
    assert binding.document.read_bytes() == b"new\n"
    assert (binding.record().revision, binding.record().facts["content"]) == (2, "new\n")
    assert binding.propose(b"new\n") == receipt                 # a retry: the same receipt, no transition
    assert binding.record().revision == 2


NEW = hashlib.sha256(b"new\n").hexdigest()
OLD = hashlib.sha256(b"old\n").hexdigest()


def test_the_id_is_derived_from_the_whole_envelope_the_intent_carries(binding) -> None:
    written = []
    binding.propose(b"new\n", on_step=lambda step: step == "intent" and written.append(
        layout.resource_intent(layout.resource_proposals(binding.scope, AGENT, BINDING)).read_text()))
    envelope = {"agent": AGENT, "binding": BINDING, "uri": binding.uri, "generation": 1, "expectedRevision": 1,
                "newDigest": NEW}
    canonical = (f'{{"agent":"h.w","binding":"now","expectedRevision":1,"generation":1,"newDigest":"{NEW}",'
                 f'"uri":"{binding.uri}"}}')
    identity = hashlib.sha256(canonical.encode()).hexdigest()[:32]
    assert proposal.proposal_id(envelope) == identity
    assert written == [f'{{"schema":"st2.resource-intent.v1","proposal":"{identity}","agent":"h.w","binding":"now",'
                       f'"uri":"{binding.uri}","generation":1,"expectedRevision":1,"newDigest":"{NEW}",'
                       f'"priorDigest":"{OLD}"}}\n']
    assert proposal.proposal_id(dict(reversed(list(envelope.items())))) == identity      # the same envelope
    for field, other in (("agent", "h.x"), ("binding", "later"), ("uri", "file:///elsewhere.md"), ("generation", 2),
                         ("expectedRevision", 2), ("newDigest", OLD)):
        assert proposal.proposal_id({**envelope, field: other}) != identity, field


def test_the_same_content_for_another_carrier_is_another_proposal_not_the_old_receipt(binding) -> None:
    receipt = binding.propose(b"new\n")
    elsewhere = binding.document.with_name("elsewhere.md")
    elsewhere.write_text("old\n")
    assert binding.propose(b"new\n") == receipt                            # the same envelope: its receipt
    with pytest.raises(proposal.ProposalRefused) as moved:                  # the binding re-pointed: not committed
        proposal.propose(binding.scope, str(binding.seat), AGENT, BINDING, f"file://{elsewhere}", b"new\n", 1,
                         lambda: 1000)
    assert moved.value.code == "revision-moved"
    assert elsewhere.read_text() == "old\n" and binding.record().revision == 2


def test_an_intent_whose_id_is_not_its_envelope_s_fails_closed(binding) -> None:
    class Crash(Exception):
        pass

    def crash(step):
        if step == "intent":
            raise Crash

    with pytest.raises(Crash):
        binding.propose(b"new\n", on_step=crash)                          # the intent is durable, the carrier old
    intent = layout.resource_intent(layout.resource_proposals(binding.scope, AGENT, BINDING))
    intent.write_text(intent.read_text().replace(f'"newDigest":"{NEW}"', f'"newDigest":"{OLD}"'))
    with pytest.raises(proposal.ProposalRefused, match="its id is not its envelope's") as diverged:
        binding.propose(b"third\n")
    assert diverged.value.code == "diverged"
    assert (binding.document.read_text(), binding.record().revision, intent.exists()) == ("old\n", 1, True)


def test_a_stale_revision_or_an_out_of_band_carrier_is_refused(binding) -> None:
    with pytest.raises(proposal.ProposalRefused, match="at revision 1, not 7") as moved:
        binding.propose(b"new\n", revision=7)
    assert moved.value.code == "revision-moved"
    binding.document.write_text("edited by hand\n")
    with pytest.raises(proposal.ProposalRefused) as carrier:
        binding.propose(b"new\n")
    assert carrier.value.code == "carrier-moved"
    assert binding.document.read_text() == "edited by hand\n" and binding.record().revision == 1
    with pytest.raises(proposal.ProposalRefused) as unsupported:
        proposal.propose(binding.scope, str(binding.seat), AGENT, BINDING, "git:///srv/r", b"x", 1, lambda: 1)
    assert unsupported.value.code == "proposals-unsupported"


@pytest.mark.process
@pytest.mark.parametrize("step", proposal.STEPS)
def test_a_sigkill_after_each_step_leaves_the_old_or_the_new_state_and_a_retry_settles_once(binding, step) -> None:
    killed = binding.in_child(b"new\n", kill_after=step)
    assert killed.returncode == -9, killed
    carrier = binding.document.read_text()
    record = binding.record()
    if step == "intent":
        assert (carrier, record.revision) == ("old\n", 1)      # before the carrier: the old state
    else:
        assert carrier == "new\n"
        assert record.revision == (1 if step == "carrier" else 2)
    retry = binding.in_child(b"new\n")
    assert retry.stdout == b"won 2\n", retry
    assert (binding.document.read_text(), binding.record().revision) == ("new\n", 2)
    assert not layout.resource_intent(layout.resource_proposals(binding.scope, AGENT, BINDING)).exists()


@pytest.mark.process
def test_divergence_after_a_committed_intent_fails_closed_until_recovered(binding) -> None:
    assert binding.in_child(b"new\n", kill_after="carrier").returncode == -9
    binding.document.write_text("someone else\n")
    with pytest.raises(proposal.ProposalRefused) as diverged:
        binding.propose(b"third\n")
    assert diverged.value.code == "diverged"
    with pytest.raises(proposal.ProposalRefused):
        binding.propose(b"third\n")                             # still closed
    adopted = proposal.recover(binding.scope, str(binding.seat), AGENT, BINDING, binding.uri, "h.w.resource-file",
                               lambda: 2000)
    assert (adopted.generation, adopted.revision, adopted.facts["content"]) == (2, 2, "someone else\n")
    assert registry.read(binding.scope, "h.w.resource-file")[1] == 2
    assert binding.propose(b"third\n", revision=2)["revision"] == 3


@pytest.mark.process
def test_sixteen_concurrent_proposers_on_one_prior_yield_one_winner(binding) -> None:
    script_runs = [subprocess.Popen([sys.executable, "-c", (
        "import sys\nfrom st2.resources import proposal\n"
        "try:\n"
        f"    r = proposal.propose({str(binding.scope)!r}, {str(binding.seat)!r}, {AGENT!r}, {BINDING!r}, "
        f"{binding.uri!r}, b'proposer {index}\\n', 1, lambda: 1000)\n"
        "    print('won', r['revision'])\n"
        "except proposal.ProposalRefused as refusal:\n"
        "    print('refused', refusal.code)\n")], stdout=subprocess.PIPE, cwd=REPO) for index in range(16)]
    outcomes = sorted(process.communicate(timeout=120)[0].decode().strip() for process in script_runs)
    assert outcomes == ["refused revision-moved"] * 15 + ["won 2"], outcomes
    assert binding.record().revision == 2
    assert binding.document.read_text() == binding.record().facts["content"]


def _cli_seat(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A catalog with seat h.w binding ``now`` to a file at revision 1 ("old"); the document,
    a proposal input file and the CLI environment."""
    from support import st2_env

    document = tmp_path / "now.md"
    document.write_text("old\n")
    catalog = tmp_path / "c"
    seat = catalog / "agents" / "h" / "w"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text(f'agent "w" {{\n    argv "true"\n    resource "now" uri="file://{document}"\n}}\n')
    facts = observe_file({"path": str(document)})
    state.update(seat, AGENT, BINDING, lambda current: state.State(
        AGENT, BINDING, f"file://{document}", 1, 1, state.digest_facts(facts), 1, facts, None, 0), 1)
    proposed = tmp_path / "proposed.md"
    proposed.write_text("new\n")
    return document, proposed, st2_env(catalog, XDG_STATE_HOME=str(tmp_path / "state"))


def _propose_words(proposed: Path, revision: int) -> tuple[str, ...]:
    return ("agent", "resource", "propose", "w", "now", "--input", str(proposed), "--expect-revision", str(revision),
            "--json", "--host", "h")


@pytest.mark.process
def test_the_cli_prints_the_receipt_and_exits_3_when_the_revision_moved(tmp_path: Path) -> None:
    from support import run_st2

    document, proposed, env = _cli_seat(tmp_path)
    arguments = _propose_words(proposed, 1)
    won = run_st2(*arguments, env=env)
    assert won.returncode == 0 and json.loads(won.stdout)["revision"] == 2, won
    assert document.read_text() == "new\n"
    assert run_st2(*arguments, env=env).stdout == won.stdout       # the retry: the same receipt
    proposed.write_text("newer\n")
    lost = run_st2(*arguments, env=env)
    assert (lost.returncode, lost.stdout) == (3, "")
    assert lost.stderr == "st2 agent resource propose: revision-moved: h.w resource 'now' is at revision 2, not 1\n"


KILLED_AFTER_THE_CARRIER = (
    "import os, signal, sys\n"
    "from st2.resources import proposal\n"
    "real = proposal.propose\n"
    "def killed(*words):\n"
    "    return real(*words, on_step=lambda step: step == 'carrier' and os.kill(os.getpid(), signal.SIGKILL))\n"
    "proposal.propose = killed\n"
    "sys.argv[0] = 'st2'\n"
    "from st2.entry import console\n"
    "console()\n")
"""The real ``st2`` CLI, SIGKILLed right after a proposal's carrier step."""


@pytest.mark.process
def test_a_carrier_deleted_after_a_committed_intent_fails_closed_until_recover_adopts_its_absence(
        tmp_path: Path) -> None:
    from support import run_st2

    document, proposed, env = _cli_seat(tmp_path)
    crashed = subprocess.run([sys.executable, "-c", KILLED_AFTER_THE_CARRIER, *_propose_words(proposed, 1)], env=env,
                             capture_output=True, cwd=REPO, timeout=60)
    assert crashed.returncode == -9, crashed
    (intent,) = (tmp_path / "state").glob(f"**/{layout.RESOURCE_INTENT}")
    old = json.loads(intent.read_text())["proposal"]
    assert document.read_text() == "new\n"
    document.unlink()                                               # out of band, after the committed intent

    for content in ("new\n", "third\n"):                            # the crashed proposal's retry, and another
        proposed.write_text(content)
        refused = run_st2(*_propose_words(proposed, 1), env=env)
        assert (refused.returncode, refused.stdout) == (1, ""), refused
        assert refused.stderr == (f"st2 agent resource propose: diverged: {document} changed out of band after "
                                  f"proposal {old} was committed; every proposal fails closed until "
                                  "`st2 agent resource recover`\n")
        assert not document.exists() and intent.exists()
    record = state.read_file(tmp_path / "c" / "agents" / "h" / "w", AGENT, BINDING)
    assert (record.generation, record.revision, record.facts["content"]) == (1, 1, "old\n")

    recovered = run_st2("agent", "resource", "recover", "w", "now", "--host", "h", env=env)
    assert (recovered.returncode, recovered.stdout) == (0, "h.w resource 'now' re-adopted at revision 2, "
                                                           "generation 2\n"), recovered
    shown = json.loads(run_st2("agent", "resource", "show", "w", "now", "--json", "--host", "h", env=env).stdout)
    assert (shown["state"]["generation"], shown["state"]["revision"]) == (2, 2)
    assert json.dumps(shown["state"]["facts"], separators=(",", ":")) == (
        '{"exists":false,"size":null,"contentSha256":null,"content":null}')
    assert not intent.exists()

    proposed.write_text("new\n")                                    # the fenced proposal, retried from its revision
    fenced = run_st2(*_propose_words(proposed, 1), env=env)
    assert (fenced.returncode, fenced.stderr) == (
        3, "st2 agent resource propose: revision-moved: h.w resource 'now' is at revision 2, not 1\n"), fenced
    assert not document.exists()
    proposed.write_text("third\n")                                  # a proposal from the adopted absence
    created = run_st2(*_propose_words(proposed, 2), env=env)
    assert created.returncode == 0, created
    receipt = json.loads(created.stdout)
    assert (receipt["generation"], receipt["revision"], document.read_text()) == (2, 3, "third\n")
    assert [path.name for path in (tmp_path / "state").glob(f"**/{layout.RESOURCE_RECEIPTS}/*.json")] == [
        f"{receipt['proposal']}.json"]                              # the old intent was never applied
