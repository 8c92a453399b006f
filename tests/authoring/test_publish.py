"""`st2 agent digest` / `st2 agent publish`: compare-and-swap publication through the
full-catalog gate, authority read from the incumbent, and prompt convergence."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import REPO, compact, run_st2, st2_env
from supervisor_support import poll_for

pytestmark = pytest.mark.process


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def spec(identity: str = "worker", marker: str | None = None, argv: str = "true", host: str = "h") -> str:
    meta = f'    meta {{ managed-by "{marker}"; }}\n' if marker else ""
    return f'agent "{identity}" {{\n    host "{host}"\n{meta}    argv "{argv}"\n}}\n'


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    root.mkdir()
    return root


def publish(catalog: Path, candidate: Path, *expectation: str, digest: str | None = None, json_: bool = True):
    arguments = ["agent", "publish", "--catalog", str(catalog), "--spec", str(candidate),
                 "--input-sha256", digest or sha(candidate.read_bytes()), *expectation]
    return run_st2(*arguments, *(["--json"] if json_ else []), env=st2_env(catalog))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_spec_create_is_typed_and_a_replay_is_unchanged(catalog, tmp_path):
    candidate = write(tmp_path / "candidate.kdl", spec())
    digest = run_st2("agent", "digest", "--spec", str(candidate))
    assert digest.returncode == 0 and digest.stdout == sha(spec()) + "\n"
    as_json = run_st2("agent", "digest", "--spec", str(candidate), "--json")
    assert as_json.stdout == compact({"schema": "st2.agent-source-digest.v1", "kind": "spec",
                                      "sha256": sha(spec())}) + "\n"
    first = publish(catalog, candidate, "--expect-absent")
    assert first.returncode == 0, first.stderr
    target = catalog / "agents" / "h" / "worker" / "agent.kdl"
    assert first.stdout == compact({
        "schema": "st2.agent-publish.v2", "policyProfile": "st2.core+catalog.v1",
        "agentSpecRevision": "local.unknown", "status": "published", "busId": "h.worker",
        "path": str(target), "inputSha256": sha(spec()), "afterSha256": sha(spec()), "managedBy": None}) + "\n"
    assert target.read_text() == spec()
    assert (catalog / ".st2" / "catalog-generation").read_text() == "1\n"
    second = publish(catalog, candidate, "--expect-absent")
    assert second.returncode == 0 and json.loads(second.stdout)["status"] == "unchanged"
    assert json.loads(second.stdout)["beforeSha256"] == sha(spec())
    assert (catalog / ".st2" / "catalog-generation").read_text() == "1\n"


def test_a_source_changed_after_its_digest_is_refused(catalog, tmp_path):
    candidate = write(tmp_path / "candidate.kdl", spec())
    reserved = sha(spec())
    candidate.write_text(spec(argv="false"))
    refused = publish(catalog, candidate, "--expect-absent", digest=reserved)
    assert refused.returncode == 1
    assert "[input-precondition] publication input precondition failed" in refused.stderr
    assert not (catalog / "agents").exists()


@pytest.mark.parametrize("text, needle", [
    ('agent "worker" {\n', "[invalid-declaration]"),
    ('agent "worker" { argv "true"; }\n', "must declare its host explicitly"),
    ('agent "worker" { host ".st2"; argv "true"; }\n', "[invalid-name] `.st2` is not a usable host name"),
])
def test_a_candidate_that_cannot_be_placed_is_refused(catalog, tmp_path, text, needle):
    candidate = write(tmp_path / "candidate.kdl", text)
    refused = publish(catalog, candidate, "--expect-absent")
    assert refused.returncode == 1 and needle in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (catalog / "agents").exists()


def test_a_lost_compare_and_swap_exits_3_and_prints_the_current_digest(catalog, tmp_path):
    live = write(catalog / "agents" / "h" / "worker" / "agent.kdl", spec())
    candidate = write(tmp_path / "candidate.kdl", spec(argv="false"))
    stale = publish(catalog, candidate, "--expect-sha256", "0" * 64, json_=False)
    assert stale.returncode == 3
    assert stale.stdout == sha(spec()) + "\n"
    assert "[cas-lost]" in stale.stderr
    absent = publish(catalog, candidate, "--expect-absent")
    assert absent.returncode == 3
    assert absent.stdout == compact({"schema": "st2.agent-publish-conflict.v1", "status": "conflict",
                                     "busId": "h.worker", "path": str(live), "expectedSha256": None,
                                     "currentSha256": sha(spec())}) + "\n"
    assert live.read_text() == spec()
    won = publish(catalog, candidate, "--expect-sha256", sha(spec()))
    assert won.returncode == 0, won.stderr
    assert json.loads(won.stdout)["beforeSha256"] == sha(spec())
    assert live.read_text() == spec(argv="false")


def test_sixteen_concurrent_publishers_racing_one_cas_have_exactly_one_winner(catalog, tmp_path):
    candidates = [write(tmp_path / f"c{index}.kdl", spec(argv=f"racer-{index}")) for index in range(16)]
    processes = [subprocess.Popen(
        [sys.executable, "-m", "st2", "agent", "publish", "--catalog", str(catalog), "--spec", str(path),
         "--input-sha256", sha(path.read_bytes()), "--expect-absent"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=st2_env(catalog))
        for path in candidates]
    results = [(process.wait(timeout=60), process.stdout.read(), process.stderr.read()) for process in processes]
    winners = [index for index, (status, _, _) in enumerate(results) if status == 0]
    assert len(winners) == 1, results
    published = (catalog / "agents" / "h" / "worker" / "agent.kdl").read_text()
    assert published == spec(argv=f"racer-{winners[0]}")
    for index, (status, stdout, stderr) in enumerate(results):
        if index != winners[0]:
            assert status == 3, stderr
            assert stdout == sha(published) + "\n"
    assert (catalog / ".st2" / "catalog-generation").read_text() == "1\n"


def test_publication_honours_the_incumbent_ownership_marker(catalog, tmp_path):
    candidate = tmp_path / "candidate.kdl"

    def publish_bytes(text: str, *arguments: str):
        candidate.write_text(text)
        return publish(catalog, candidate, *arguments)

    projected = spec(marker="nix")
    created = publish_bytes(projected, "--expect-absent")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["managedBy"] is None
    # A projector that always asserts its marker may create too: there is no incumbent to protect.
    asserted = publish_bytes(spec("asserted", marker="nix"), "--expect-absent", "--managed-by", "nix")
    assert asserted.returncode == 0 and json.loads(asserted.stdout)["managedBy"] is None, asserted.stderr
    assert json.loads(publish_bytes(projected, "--expect-absent").stdout)["status"] == "unchanged"
    worker = catalog / "agents" / "h" / "worker"
    write(worker / "resources" / "inbox" / "message.md", "keep me")
    rewrite = spec(marker="nix", argv="sleep")
    for assertion, code in (((), "nix-managed-declaration"),
                            (("--managed-by", "agent-spec-authoring"), "managed-by-mismatch"),
                            (("--managed-by", ""), "invalid-managed-by"),
                            (("--managed-by", " nix"), "invalid-managed-by")):
        refused = publish_bytes(rewrite, "--expect-sha256", sha(projected), *assertion)
        assert refused.returncode == 1, refused.stdout
        assert f"[{code}]" in refused.stderr, refused.stderr
        assert (worker / "agent.kdl").read_text() == projected
    admitted = publish_bytes(rewrite, "--expect-sha256", sha(projected), "--managed-by", "nix")
    assert admitted.returncode == 0, admitted.stderr
    assert json.loads(admitted.stdout)["managedBy"] == "nix"
    assert (worker / "agent.kdl").read_text() == rewrite
    assert (worker / "resources" / "inbox" / "message.md").read_text() == "keep me"
    # An assertion an unmarked incumbent cannot confirm refuses; the unasserted path publishes.
    plain = spec("plain")
    write(catalog / "agents" / "h" / "plain" / "agent.kdl", plain)
    claimed = publish_bytes(spec("plain", argv="sleep"), "--expect-sha256", sha(plain), "--managed-by", "nix")
    assert claimed.returncode == 1 and "[managed-by-unmarked]" in claimed.stderr
    assert publish_bytes(spec("plain", argv="sleep"), "--expect-sha256", sha(plain)).returncode == 0
    # Other markers are labels: st2's own authoring marker republishes without an assertion.
    labelled = spec("labelled", marker="agent-spec-authoring")
    write(catalog / "agents" / "h" / "labelled" / "agent.kdl", labelled)
    relabelled = publish_bytes(spec("labelled", marker="agent-spec-authoring", argv="sleep"),
                               "--expect-sha256", sha(labelled))
    assert relabelled.returncode == 0 and json.loads(relabelled.stdout)["managedBy"] is None


def test_publication_refuses_an_unresolvable_owner_and_repairs_unreadable_bytes(catalog, tmp_path):
    live = catalog / "agents" / "h" / "worker" / "agent.kdl"
    contested = ('agent "worker" {\n    host "h"\n    meta { managed-by "nix"; managed-by "catalog"; }\n'
                 '    argv "true"\n}\n')
    write(live, contested)
    candidate = write(tmp_path / "candidate.kdl", spec())
    for assertion, code in (((), "nix-managed-declaration"), (("--managed-by", "nix"), "managed-by-mismatch"),
                            (("--managed-by", "catalog"), "managed-by-mismatch")):
        refused = publish(catalog, candidate, "--expect-sha256", sha(contested), *assertion)
        assert refused.returncode == 1 and f"[{code}]" in refused.stderr, refused.stderr
        assert live.read_text() == contested
    live.write_text('agent "worker" {')
    repaired = publish(catalog, candidate, "--expect-sha256", sha('agent "worker" {'))
    assert repaired.returncode == 0, repaired.stderr
    assert live.read_text() == spec()


def test_the_full_catalog_gate_refuses_a_catalog_the_supervisor_would_reject(catalog, tmp_path):
    candidate = write(tmp_path / "candidate.kdl", spec())
    write(catalog / "agents" / "h" / "worker" / "agent.kdl", spec())
    broken = write(catalog / "agents" / "h" / "broken" / "agent.kdl", 'agent "broken" {')
    unchanged = publish(catalog, candidate, "--expect-absent")
    assert unchanged.returncode == 1
    assert "[full-catalog-validation]" in unchanged.stderr and "agents/h/broken/agent.kdl:1:" in unchanged.stderr
    broken.write_text('agent "broken" {\n    argv "true"\n}\n')
    rendered = write(tmp_path / "rendered.kdl", spec("rendered").replace(
        '    argv "true"', '    workspace "/tmp"\n    render { copy "missing.md" "x.md"; }\n    argv "true"'))
    refused = publish(catalog, rendered, "--expect-absent")
    assert refused.returncode == 1 and "render-invalid" in refused.stderr
    assert not (catalog / "agents" / "h" / "rendered").exists()
    assert not (catalog / ".st2" / "catalog-generation").exists()


def test_a_bundle_is_created_whole_and_only_once(catalog, tmp_path):
    bundle = tmp_path / "bundle"
    write(bundle / "agent.kdl", spec().replace('    argv "true"', '    workspace "/tmp"\n'
                                                 '    render { copy "assets/notes.md" "notes.md"; }\n    argv "true"'))
    write(bundle / "assets" / "notes.md", "notes")
    write(bundle / "resources" / "inbox" / "1750000000000-abc123.md", "---\nfrom: h.x\n---\nkickoff\n")
    digest = run_st2("agent", "digest", "--bundle", str(bundle)).stdout.strip()
    base = ["agent", "publish", "--catalog", str(catalog), "--bundle", str(bundle), "--input-sha256", digest]
    first = run_st2(*base, "--expect-absent", "--json", env=st2_env(catalog))
    assert first.returncode == 0, first.stderr
    seat = catalog / "agents" / "h" / "worker"
    assert (seat / "assets" / "notes.md").read_text() == "notes"
    assert (seat / "resources" / "inbox" / "1750000000000-abc123.md").exists()
    assert not any((catalog / ".st2" / "authoring-staging").iterdir())
    replay = run_st2(*base, "--expect-absent", "--json", env=st2_env(catalog))
    assert replay.returncode == 0 and json.loads(replay.stdout)["status"] == "unchanged"
    update = run_st2(*base, "--expect-sha256", sha((bundle / "agent.kdl").read_bytes()), env=st2_env(catalog))
    assert update.returncode == 1 and "[bundle-create-only]" in update.stderr
    (bundle / "assets" / "notes.md").write_text("changed")
    changed = run_st2("agent", "digest", "--bundle", str(bundle)).stdout.strip()
    assert changed != digest
    stale = run_st2(*base, "--expect-absent", env=st2_env(catalog))
    assert stale.returncode == 1 and "[input-precondition]" in stale.stderr
    (bundle / "link").symlink_to(bundle / "assets" / "notes.md")
    linked = run_st2("agent", "digest", "--bundle", str(bundle))
    assert linked.returncode == 1 and "is a symlink" in linked.stderr


def test_a_published_declaration_is_launched_by_a_running_supervisor_within_a_second(fleet):
    fleet.seat("peer", '    argv "sleep" "600"')
    fleet.up("--interval", "600s")
    assert poll_for(lambda: "h.peer" in fleet.running(), timeout=20), fleet.log()
    candidate = write(fleet.base / "new.kdl", 'agent "fresh" {\n    host "h"\n    argv "sleep" "600"\n}\n')
    result = fleet.st2("agent", "publish", "--spec", str(candidate), "--input-sha256", sha(candidate.read_bytes()),
                       "--expect-absent")
    assert result.returncode == 0, result.stderr
    published = time.monotonic()
    assert poll_for(lambda: "h.fresh" in fleet.running(), timeout=5, step=0.02), fleet.log()
    assert time.monotonic() - published < 1.0, "the publication was not converged within a second"


def test_a_publisher_killed_with_a_staged_bundle_leaves_no_seat_and_no_lasting_debris(catalog, tmp_path):
    bundle = tmp_path / "bundle"
    write(bundle / "agent.kdl", spec())
    write(bundle / "notes.md", "notes")
    digest = run_st2("agent", "digest", "--bundle", str(bundle)).stdout.strip()
    arguments = ["agent", "publish", "--catalog", str(catalog), "--bundle", str(bundle), "--input-sha256", digest,
                 "--expect-absent"]
    killed = run_st2(*arguments, env=st2_env(catalog, ST2_TEST_CRASH_AT="publish-bundle-staged"))
    assert killed.returncode == -9
    staging = catalog / ".st2" / "authoring-staging"
    assert [path.name.startswith("bundle-") for path in staging.iterdir()] == [True]
    assert not (catalog / "agents" / "h" / "worker").exists()
    retried = run_st2(*arguments, env=st2_env(catalog))
    assert retried.returncode == 0, retried.stderr
    assert list(staging.iterdir()) == []
    assert (catalog / "agents" / "h" / "worker" / "notes.md").read_text() == "notes"


def test_an_error_in_another_hosts_subtree_does_not_hold_back_a_publication(catalog, tmp_path):
    # Issue 21: replication delivers host c's broken declaration and a conflict copy of it into
    # this copy; publishing h's seat is this host's work and goes ahead, publishing into c is not.
    broken = write(catalog / "agents" / "c" / "broken" / "agent.kdl", 'agent "broken" {')
    write(catalog / "agents" / "c" / "broken" / "agent.sync-conflict-20261201-120000-ABCDEFG.kdl", 'agent "broken" {\n}\n')
    candidate = write(tmp_path / "candidate.kdl", spec())
    admitted = publish(catalog, candidate, "--expect-absent")
    assert admitted.returncode == 0, admitted.stderr
    assert (catalog / "agents" / "h" / "worker" / "agent.kdl").read_text() == spec()
    other = write(tmp_path / "other.kdl", spec("fresh", host="c"))
    refused = publish(catalog, other, "--expect-absent")
    assert refused.returncode == 1 and "agents/c/broken/agent.kdl:1:" in refused.stderr, refused.stderr
    assert "declaration-conflict-copy" in refused.stderr
    assert not (catalog / "agents" / "c" / "fresh").exists()


def test_a_control_directory_another_author_made_an_instant_ago_is_taken(catalog, monkeypatch):
    """The authoring lock lives in ``.st2``, so ``.st2`` is made before any lock is held: two
    authors of a new catalog can both find it missing (sixteen racing publishers once failed one
    with EEXIST, exit 74). Here it appears between the look and the make."""
    from st2.authoring.transaction import authoring
    from st2.catalog.location import CatalogLocation

    location = CatalogLocation(catalog, "h")
    location.paths.control.mkdir(mode=0o755)
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda path: False if path == location.paths.control else real_exists(path))
    with authoring(location) as transaction:
        assert transaction is not None
