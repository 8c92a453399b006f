"""`st2 catalog sync-rules`: the replication engine's rules, derived from the pinned replicated
names and pinned here as full strings per format and declaration mode; the rsync and unison
rules are run through the real engines over a catalog holding every kind of file, and exactly the
replicated names cross (nothing host-local: no control plane, lock, staging, log, engine debris).
Doctor advises (never fails) when the catalog's ``.stignore`` disagrees."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from st2.catalog import layout, sync_rules
from support import run_st2, st2_env

SYNCTHING = """\
// st2 catalog sync-rules --format syncthing
// Generated from st2's pinned replicated names; regenerate rather than edit.
// The engines' own files stay where they were made, even inside resources/.
.stfolder
.stversions
(?d).syncthing.*.tmp
(?d)~syncthing~*.tmp
(?d)*.sync-conflict-*
(?d).unison.*
(?d).~tmp~
// Never carried: the control plane, exec logs and the supervisor locks.
/.st2
/logs
/.st2.*.lock
// Carried.
!/agents/*/*/status
!/agents/*/*/harness-state
!/agents/*/*/harness-context
!/agents/*/*/resources
!/agents/*/*/resource-state
!/principals/*/*/resources
// Everything else is host-local.
*
"""

SYNCTHING_WITH_DECLARATIONS = """\
// st2 catalog sync-rules --format syncthing --with-declarations
// Generated from st2's pinned replicated names; regenerate rather than edit.
// The engines' own files stay where they were made, even inside resources/.
.stfolder
.stversions
(?d).syncthing.*.tmp
(?d)~syncthing~*.tmp
(?d)*.sync-conflict-*
(?d).unison.*
(?d).~tmp~
// Never carried: the control plane, exec logs and the supervisor locks.
/.st2
/logs
/.st2.*.lock
// Carried.
!/agents/*/*/status
!/agents/*/*/harness-state
!/agents/*/*/harness-context
!/catalog.kdl
!/agents/*/*/agent.kdl
!/principals/*/*/principal.kdl
!/agents/*/*/resources
!/agents/*/*/resource-state
!/principals/*/*/resources
!/_templates
// Everything else is host-local.
*
"""

RSYNC = """\
# st2 catalog sync-rules --format rsync
# Generated from st2's pinned replicated names; regenerate rather than edit.
- .stfolder
- .stversions
- .syncthing.*.tmp
- ~syncthing~*.tmp
- *.sync-conflict-*
- .unison.*
- .~tmp~
- /.st2/
- /logs/
- /.st2.*.lock
+ /agents/
+ /agents/*/
+ /agents/*/*/
+ /principals/
+ /principals/*/
+ /principals/*/*/
+ /agents/*/*/status
+ /agents/*/*/harness-state
+ /agents/*/*/harness-context
+ /agents/*/*/resources/***
+ /agents/*/*/resource-state/***
+ /principals/*/*/resources/***
- *
"""

RSYNC_WITH_DECLARATIONS = """\
# st2 catalog sync-rules --format rsync --with-declarations
# Generated from st2's pinned replicated names; regenerate rather than edit.
- .stfolder
- .stversions
- .syncthing.*.tmp
- ~syncthing~*.tmp
- *.sync-conflict-*
- .unison.*
- .~tmp~
- /.st2/
- /logs/
- /.st2.*.lock
+ /agents/
+ /agents/*/
+ /agents/*/*/
+ /principals/
+ /principals/*/
+ /principals/*/*/
+ /agents/*/*/status
+ /agents/*/*/harness-state
+ /agents/*/*/harness-context
+ /catalog.kdl
+ /agents/*/*/agent.kdl
+ /principals/*/*/principal.kdl
+ /agents/*/*/resources/***
+ /agents/*/*/resource-state/***
+ /principals/*/*/resources/***
+ /_templates/***
- *
"""

UNISON = """\
# st2 catalog sync-rules --format unison
# Generated from st2's pinned replicated names; regenerate rather than edit.
path = agents
path = principals
ignore = Name .stfolder
ignore = Name .stversions
ignore = Name .syncthing.*.tmp
ignore = Name ~syncthing~*.tmp
ignore = Name *.sync-conflict-*
ignore = Name .unison.*
ignore = Name .~tmp~
ignore = Regex agents/[^/]+/[^/]+
ignore = Regex agents/[^/]+/[^/]+/[^/]+
ignore = Regex principals/[^/]+/[^/]+
ignore = Regex principals/[^/]+/[^/]+/[^/]+
ignorenot = Regex agents/[^/.][^/]*/[^/.][^/]*
ignorenot = Regex principals/[^/.][^/]*/[^/.][^/]*
ignorenot = Path agents/*/*/status
ignorenot = Path agents/*/*/harness-state
ignorenot = Path agents/*/*/harness-context
ignorenot = Path agents/*/*/resources
ignorenot = Path agents/*/*/resource-state
ignorenot = Path principals/*/*/resources
"""

UNISON_WITH_DECLARATIONS = """\
# st2 catalog sync-rules --format unison --with-declarations
# Generated from st2's pinned replicated names; regenerate rather than edit.
path = agents
path = principals
path = catalog.kdl
path = _templates
ignore = Name .stfolder
ignore = Name .stversions
ignore = Name .syncthing.*.tmp
ignore = Name ~syncthing~*.tmp
ignore = Name *.sync-conflict-*
ignore = Name .unison.*
ignore = Name .~tmp~
ignore = Regex agents/[^/]+/[^/]+
ignore = Regex agents/[^/]+/[^/]+/[^/]+
ignore = Regex principals/[^/]+/[^/]+
ignore = Regex principals/[^/]+/[^/]+/[^/]+
ignorenot = Regex agents/[^/.][^/]*/[^/.][^/]*
ignorenot = Regex principals/[^/.][^/]*/[^/.][^/]*
ignorenot = Path agents/*/*/status
ignorenot = Path agents/*/*/harness-state
ignorenot = Path agents/*/*/harness-context
ignorenot = Path agents/*/*/agent.kdl
ignorenot = Path principals/*/*/principal.kdl
ignorenot = Path agents/*/*/resources
ignorenot = Path agents/*/*/resource-state
ignorenot = Path principals/*/*/resources
"""

PINNED = {
    ("syncthing", False): SYNCTHING, ("syncthing", True): SYNCTHING_WITH_DECLARATIONS,
    ("rsync", False): RSYNC, ("rsync", True): RSYNC_WITH_DECLARATIONS,
    ("unison", False): UNISON, ("unison", True): UNISON_WITH_DECLARATIONS,
}

# Every kind of file a catalog holds; the replicated ones without and with declarations.
CARRIED = [
    "agents/b/worker/status",
    "agents/b/worker/harness-state",
    "agents/b/worker/harness-context",
    "agents/b/worker/resources/inbox/1788000000000-abcdef.md",
    "agents/b/worker/resources/archive/1787000000000-fedcba.md",
    "agents/b/worker/resources/message-receipts/0f0f.json",
    "agents/b/worker/resources/sent/1786000000000-aaaaaa.md",
    "agents/b/worker/resources/context/now.md",
    "agents/b/worker/resource-state/now.json",
    "agents/b/worker/resources/context/decisions/0001.md",
    "principals/a/operator/resources/inbox/1788000000001-bbbbbb.md",
    "principals/a/operator/resources/archive/1788000000002-cccccc.md",
]
DECLARATIONS = [
    "catalog.kdl",
    "_templates/base/agent.kdl",
    "agents/b/worker/agent.kdl",
    "principals/a/operator/principal.kdl",
]
HOST_LOCAL = [
    "agents/b/worker/.status.lock",
    "agents/b/worker/.harness-state.lock",
    "agents/b/worker/.harness-context.lock",
    "agents/b/worker/driver-diagnostic",
    "agents/b/worker/stray-notes.txt",
    "agents/b/.harness-context.tmp-41-7",
    ".st2/bus-staging/tmp-1",
    ".st2/harness-context-staging/tmp-2",
    ".st2/resource-state-staging/.b.worker.now.lock",
    ".st2/archive/b/old/resources/inbox/1700000000000-dddddd.md",
    ".st2/archive/b/old.tombstone.json",
    ".st2/sent/a.operator/1788000000001-bbbbbb.md",
    ".st2/catalog-generation",
    ".st2.b.lock",
    "logs/b.worker.log",
    "logs/b.worker.log.1",
    # the engines' own files, even inside the carried trees
    ".stfolder/.keep",
    ".stversions/agents/b/worker/status~20261201-120000",
    "agents/b/worker/resources/inbox/.syncthing.1788000000003-eeeeee.md.tmp",
    "agents/b/worker/resources/inbox/1788000000000-abcdef.sync-conflict-20261201-120000-ABCDEFG.md",
    "agents/b/worker/status.sync-conflict-20261201-120000-ABCDEFG",
    "agents/b/worker/agent.sync-conflict-20261201-120000-ABCDEFG.kdl",
    "agents/b/worker/resources/context/.unison.now.md.0123.unison.tmp",
    "agents/b/worker/resources/.~tmp~/now.md",
]


def test_each_format_prints_exactly_its_pinned_rules() -> None:
    for (engine, with_declarations), text in PINNED.items():
        assert sync_rules.render(engine, with_declarations) == text, (engine, with_declarations)


def test_the_rules_are_derived_from_the_pinned_replicated_names() -> None:
    for (engine, with_declarations), text in PINNED.items():
        for name in layout.REPLICATED_NAMES:
            assert f"agents/*/*/{name}" in text, (engine, name)
        assert ("agent.kdl" in text) is with_declarations


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sync engine 'git'"):
        sync_rules.render("git")


@pytest.mark.process
def test_the_cli_prints_the_rules_and_refuses_an_unknown_format() -> None:
    for (engine, with_declarations), text in PINNED.items():
        result = run_st2("catalog", "sync-rules", "--format", engine,
                         *(["--with-declarations"] if with_declarations else []))
        assert (result.returncode, result.stdout, result.stderr) == (0, text, "")
    refused = run_st2("catalog", "sync-rules", "--format", "git")
    assert refused.returncode == 2 and "Invalid value for '--format'" in refused.stderr
    assert "Traceback" not in refused.stderr


def populate(root: Path) -> None:
    for relative in CARRIED + DECLARATIONS + HOST_LOCAL:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative + "\n")


def files_under(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def expected(with_declarations: bool) -> list[str]:
    return sorted(CARRIED + (DECLARATIONS if with_declarations else []))


def engine(name: str) -> str:
    path = shutil.which(name)
    if path is None and os.environ.get("ST2_MULTIHOST_REQUIRED") == "1":
        pytest.fail(f"ST2_MULTIHOST_REQUIRED=1 (scripts/dev test installs the sync engines) and {name} is not installed",
                    pytrace=False)
    if path is None:
        pytest.skip(f"SKIPPED LOUDLY: {name} is not installed (apt-get install {name}); its rules are still pinned above")
    return path


@pytest.mark.process
@pytest.mark.parametrize("with_declarations", [False, True], ids=["runtime-only", "with-declarations"])
def test_real_rsync_carries_exactly_the_replicated_names(tmp_path: Path, with_declarations: bool) -> None:
    rsync = engine("rsync")
    source, target = tmp_path / "a", tmp_path / "b"
    populate(source)
    target.mkdir()
    rules = tmp_path / "rules"
    rules.write_text(sync_rules.render("rsync", with_declarations))
    subprocess.run([rsync, "-a", f"--filter=merge {rules}", f"{source}/", f"{target}/"], check=True, timeout=60)
    assert files_under(target) == expected(with_declarations)


@pytest.mark.process
@pytest.mark.parametrize("with_declarations", [False, True], ids=["runtime-only", "with-declarations"])
def test_real_unison_carries_exactly_the_replicated_names(tmp_path: Path, with_declarations: bool) -> None:
    unison = engine("unison")
    source, target, home = tmp_path / "a", tmp_path / "b", tmp_path / "unison-home"
    populate(source)
    target.mkdir()
    home.mkdir()
    (home / "st2.prf").write_text(f"root = {source}\nroot = {target}\n" + sync_rules.render("unison", with_declarations))
    subprocess.run([unison, "st2", "-batch", "-auto", "-silent"], check=True, timeout=120,
                   env={**st2_env(), "UNISON": str(home)}, capture_output=True)
    assert files_under(target) == expected(with_declarations)


def doctor_lines(catalog: Path) -> tuple[int, list[str]]:
    result = run_st2("doctor", "--host", "a", env=st2_env(catalog))
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, [line for line in result.stdout.splitlines() if ": sync-rules: " in line]


@pytest.mark.process
def test_doctor_advises_when_the_catalog_stignore_disagrees(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    (catalog / "agents").mkdir(parents=True)
    assert doctor_lines(catalog) == (0, [])  # no .stignore: no engine is configured here
    (catalog / ".stfolder").mkdir()  # ... unless Syncthing shares the folder: then it carries everything
    assert doctor_lines(catalog) == (0, [
        "advisory: catalog: sync-rules: the catalog is a Syncthing folder (.stfolder) without a .stignore, so "
        "Syncthing carries everything, host-local files included; write one with "
        "`st2 catalog sync-rules --format syncthing > .stignore`"])
    stignore = catalog / ".stignore"
    for with_declarations in (False, True):
        stignore.write_text(sync_rules.render("syncthing", with_declarations))
        assert doctor_lines(catalog) == (0, []), with_declarations
    # An operator's include list that predates harness-context silently loses it on every host.
    stignore.write_text(SYNCTHING.replace("!/agents/*/*/harness-context\n", "") + "!/agents/*/*/driver-diagnostic\n")
    assert doctor_lines(catalog) == (0, [
        "advisory: catalog: sync-rules: .stignore disagrees with `st2 catalog sync-rules --format syncthing`: "
        "missing !/agents/*/*/harness-context; extra !/agents/*/*/driver-diagnostic; regenerate it from that command"])
    # Order matters in Syncthing (the first match decides): a catch-all first ignores everything.
    patterns = sync_rules.stignore_patterns(SYNCTHING)
    stignore.write_text("\n".join(["*"] + patterns[:-1]) + "\n")
    assert doctor_lines(catalog)[1] == [
        "advisory: catalog: sync-rules: .stignore disagrees with `st2 catalog sync-rules --format syncthing`: "
        "the same patterns in another order (the first match decides); regenerate it from that command"]


def test_an_included_rules_file_is_read_as_part_of_the_stignore(tmp_path: Path) -> None:
    (tmp_path / ".stglobalignore").write_text(SYNCTHING_WITH_DECLARATIONS)
    (tmp_path / ".stignore").write_text("// shared rules\n#include .stglobalignore\n")
    assert sync_rules.stignore_disagreement(tmp_path) is None
    (tmp_path / ".stignore").write_text("#include ../elsewhere\n")
    assert sync_rules.stignore_disagreement(tmp_path) == (
        ".stignore includes '../elsewhere', which is not a file inside the catalog")


def test_the_test_engine_carries_what_the_real_engines_carry() -> None:
    # tests/replication_engine.py imitates an engine for the cross-host tests; it must carry
    # exactly what real rsync and unison carried above, or those tests prove nothing.
    from replication_engine import carried

    for with_declarations in (False, True):
        assert sorted(path for path in CARRIED + DECLARATIONS + HOST_LOCAL
                      if carried(path, with_declarations)) == expected(with_declarations)
