"""The seat host's preload manifests (st2/seathost/preload.py) are what its forked processes
import: each forked entry runs for real in a fresh interpreter set up as the seat host's child
(``fork.FORKED``, ``fork.HOST_SCOPE``, the same entry function), and its ``sys.modules`` once it
serves is compared with what the host has imported before it forks (its own modules, the
manifest, the rehearsals). A module of st2 the run imports and the host did not is a miss; a
manifest entry no run imports is dead weight in every host. The firing twins drop a leaf entry
and add one no forked process needs.

DING: a stub in the launched shape (the front door's ``ding`` row) with no seat host, which asks
for a DING service and then serves its seat itself; the DING service (click's ``ding-service``);
a stub in another spelling (click's ``ding``) that the service serves. Resource runtimes: a forked
``st2 resource-runtime`` of each built-in scheme (``file``, ``git``, ``cmd``), in the launched
shape (st2/supervisor/lowering.py), each answering one real ``Observe`` on its socket. Session
wrappers: a forked Codex and a forked opencode wrapper (the front door's session rows) against
their stand-in servers, each delivering one message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, poll_for
from st2.seathost import wire
from st2.seathost.preload import DING, RESOURCE_RUNTIMES, SESSION_WRAPPERS

pytestmark = [pytest.mark.process, pytest.mark.long]

for folder in (REPO / "tests" / "ding", REPO / "tests" / "drivers" / "codex", REPO / "tests" / "drivers" / "opencode"):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

# A forked child's set-up (st2.seathost.fork, st2.cli.seat_host), then its entry; SIGUSR1 writes
# the modules loaded so far (the stubs and wrappers run until stopped).
TRACE = """
import json, os, signal, sys
from pathlib import Path
report, entry, scope, words = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def write(number, frame):
    with open(report + ".tmp", "w") as handle:
        json.dump(sorted(sys.modules), handle)
    os.replace(report + ".tmp", report)
signal.signal(signal.SIGUSR1, write)
from st2.seathost import fork
fork.FORKED = True
fork.HOST_SCOPE = Path(scope)
from st2.cli import seat_host
sys.exit(getattr(seat_host, entry)(words))
"""

# The seat host's own modules (`st2 seat-host` through the entry and click), then its preloads.
PRELOADED = """
import json, sys
import st2.entry, st2.cli, st2.cli.seat_host, st2.seathost.server
from st2.seathost import preload
preload.DING, preload.SESSION_WRAPPERS = tuple(json.loads(sys.argv[1])), tuple(json.loads(sys.argv[2]))
preload.RESOURCE_RUNTIMES = tuple(json.loads(sys.argv[4]))
from st2.cli.seat_host import preload_native_wrappers, preload
preload()
if sys.argv[3] == "sessions":
    preload_native_wrappers()
print(json.dumps(sorted(sys.modules)))
"""


class Traced:
    """One forked entry run in a fresh interpreter, its output in ``log``."""

    def __init__(self, directory: Path, name: str, entry: str, scope: Path, words: list[str], env: dict,
                 stdin=subprocess.DEVNULL) -> None:
        self.report = directory / f"{name}.modules.json"
        self.log = directory / f"{name}.log"
        with open(self.log, "ab") as handle:
            self.process = subprocess.Popen([sys.executable, "-c", TRACE, str(self.report), entry, str(scope), *words],
                                            stdin=stdin, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                            cwd=directory, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def modules(self) -> set[str]:
        assert self.process.poll() is None, self.text()
        self.process.send_signal(signal.SIGUSR1)
        poll_for(self.report.exists, "the traced process's modules", timeout=30)
        return set(json.loads(self.report.read_text()))

    def __enter__(self) -> "Traced":
        return self

    def __exit__(self, *exception) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def preloaded(ding: tuple[str, ...], sessions: tuple[str, ...] | None,
              resources: tuple[str, ...] = RESOURCE_RUNTIMES) -> set[str]:
    """The modules the seat host holds before it forks, with these manifests (and, with
    ``sessions``, after its session wrappers' preload too)."""
    completed = subprocess.run([sys.executable, "-c", PRELOADED, json.dumps(ding), json.dumps(sessions or ()),
                                "sessions" if sessions is not None else "ding", json.dumps(resources)],
                               capture_output=True, text=True, cwd=REPO, timeout=120, check=True)
    return set(json.loads(completed.stdout))


def findings(manifest: tuple[str, ...], runs: list[set[str]], held: set[str]) -> dict[str, list[str]]:
    """``missing``: st2 modules a run imports that the host did not preload; ``unused``:
    manifest entries no run imports."""
    imported = set().union(*runs)
    return {"missing": sorted(name for name in imported - held if name == "st2" or name.startswith("st2.")),
            "unused": [name for name in manifest if name not in imported]}


def environment(tmp_path: Path, catalog: Path, **extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST_AGENT", "ST2_DING"))}
    env.update(CATALOG=str(catalog), XDG_STATE_HOME=str(tmp_path / "state"), **extra)
    return env


@pytest.fixture(scope="module")
def ding_runs(tmp_path_factory) -> list[set[str]]:
    from ding_support import make_seat

    base = tmp_path_factory.mktemp("ding")
    catalog = base / "catalog"
    make_seat(catalog, "ann")
    alone, served = base / "alone", base / "served"
    alone.mkdir()
    served.mkdir()
    env = environment(base, catalog)
    # `st2 ding <agent>` is how the supervisor launches it (st2/supervisor/lowering.py).
    traced = [Traced(base, "stub-alone", "entry", alone,
                     ["ding", "h.ann", "--poll-interval", "0.2", "--trace-progress"], env),
              Traced(base, "service", "entry", served, ["ding-service", "--scope-directory", str(served)], env)]
    try:
        from st2.ding import service_wire

        poll_for(lambda: service_wire.socket_path(served).exists(), "the DING service to listen", timeout=30)
        traced.append(Traced(base, "stub-served", "entry", served,
                             ["ding", "--identity", "ann", "--host", "h", "--poll-interval", "0.2"], env))
        poll_for(lambda: "progress passes=" in traced[0].text(), "the lone stub serving its seat", timeout=30)
        poll_for(lambda: "served by the DING service" in traced[2].text() and "watching" in traced[2].text(),
                 "the service serving the second stub's seat", timeout=30)
        assert "SERVING h.ann MYSELF" in traced[0].text()
        return [run.modules() for run in traced]
    finally:
        for run in reversed(traced):
            run.stop()


def test_the_ding_manifest_is_what_the_forked_ding_processes_import(ding_runs) -> None:
    assert findings(DING, ding_runs, preloaded(DING, None)) == {"missing": [], "unused": []}


def test_the_ding_check_fires_on_a_missing_and_on_an_unused_entry(ding_runs) -> None:
    short = tuple(name for name in DING if name != "st2.cli.ding_service") + ("st2.top",)
    assert findings(short, ding_runs, preloaded(short, None)) == {"missing": ["st2.cli.ding_service"],
                                                                  "unused": ["st2.top"]}


def scoped(tmp_path_factory, name: str) -> Path:
    """A module-wide directory with the ``scope`` a traced child names as its host's."""
    base = tmp_path_factory.mktemp(name)
    (base / "scope").mkdir()
    return base


def runtime_run(base: Path, scheme: str, target: dict, env: dict) -> set[str]:
    """A forked ``st2 resource-runtime <scheme>`` answering one ``Observe`` for ``target``, then
    its modules."""
    import socket as socket_module

    from st2.resources import protocol

    path = base / "sockets" / f"h.w.resource-{scheme}"
    with Traced(base, f"runtime-{scheme}", "entry", base / "scope", ["resource-runtime", scheme],
                {**env, "ST2_RESOURCE_SOCKET": str(path)}) as run:
        poll_for(lambda: "listening on" in run.text(), f"the {scheme} runtime to listen", timeout=30)
        with socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM) as connection:
            connection.settimeout(30)
            connection.connect(str(path))
            reader = connection.makefile("rb")
            hello = protocol.decode_hello(reader.readline())
            connection.sendall(protocol.encode_observe(protocol.Observe(1, "h.w", "b", hello.registration,
                                                                        f"{scheme}:trace", target)))
            result = protocol.decode_result(reader.readline())
        assert result.kind == protocol.PUBLISHED, (result, run.text())
        return run.modules()


@pytest.fixture(scope="module")
def runtime_runs(tmp_path_factory) -> list[set[str]]:
    base = scoped(tmp_path_factory, "runtimes")
    document = base / "now.md"
    document.write_text("working state\n")
    repository = base / "repo"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    env = environment(base, base / "catalog")
    return [runtime_run(base, "file", {"path": str(document)}, env),
            runtime_run(base, "git", {"path": str(repository)}, env),
            runtime_run(base, "cmd", {"argv": ["echo", "ok"], "timeoutSeconds": 10}, env)]


def test_the_resource_runtimes_manifest_is_what_a_forked_runtime_imports(runtime_runs) -> None:
    assert findings(RESOURCE_RUNTIMES, runtime_runs, preloaded(DING, None)) == {"missing": [], "unused": []}


def test_the_resource_runtimes_check_fires_on_a_missing_and_on_an_unused_entry(runtime_runs) -> None:
    short = tuple(name for name in RESOURCE_RUNTIMES if name != "st2.worktree.git") + ("st2.top",)
    assert findings(short, runtime_runs, preloaded(DING, None, short)) == {
        "missing": ["st2.worktree", "st2.worktree.git"], "unused": ["st2.top"]}


def ledger_phase(state: Path, name: str) -> str | None:
    path = next(iter(state.glob("**/delivery/*/delivery-ledger.json")), None)
    entries = json.loads(path.read_text())["entries"] if path is not None else []
    return next((entry["phase"] for entry in entries if entry["filename"] == name), None)


def wrapper_run(base: Path, harness: str, words: list[str], seat: Path, delivered: str) -> set[str]:
    """A forked session wrapper (the seat host's ``run_forked_session``) until one message
    reaches ``delivered``, then its modules."""
    from codex_support import record, write_message

    directory = base / harness
    directory.mkdir()
    (directory / "standin").mkdir()
    env = environment(directory, seat.parent.parent.parent, STANDIN_DIR=str(directory / "standin"))
    with Traced(directory, harness, "run_forked_session", base / "scope",
                ["--catalog", str(seat.parent.parent.parent), "driver", *words], env, stdin=subprocess.PIPE) as run:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", run.text, timeout=60)
        name = write_message(seat, "trace")
        poll_for(lambda: ledger_phase(directory / "state", name) == delivered, run.text, timeout=60)
        return run.modules()


@pytest.fixture(scope="module")
def session_runs(tmp_path_factory) -> list[set[str]]:
    import codex_support
    import opencode_support

    base = scoped(tmp_path_factory, "sessions")
    catalog = base / "catalog"
    codex = codex_support.make_seat(catalog, "coder")
    opencode = opencode_support.make_seat(catalog, "oc")
    host = codex_support.HOST
    (base / "bin").mkdir()
    return [wrapper_run(base, "codex", ["codex-session", "--identity", f"{host}.coder", "--",
                                        str(codex_support.STANDIN), "app-server"], codex, "consumed"),
            wrapper_run(base, "opencode", ["opencode-session", "--identity", f"{host}.oc", "--model", "fake/fake-model",
                                           "--", str(opencode_support.standin_executable(base / "bin")), "serve"],
                        opencode, "persisted")]


def test_the_session_wrappers_manifest_is_what_a_forked_wrapper_imports(session_runs) -> None:
    assert findings(SESSION_WRAPPERS, session_runs, preloaded(DING, SESSION_WRAPPERS)) == {"missing": [], "unused": []}


def test_the_session_wrappers_check_fires_on_a_missing_and_on_an_unused_entry(session_runs) -> None:
    short = tuple(name for name in SESSION_WRAPPERS if name != "st2.drivers.session_route") + ("st2.top",)
    found = findings(short, session_runs, preloaded(DING, short))
    assert "st2.drivers.session_route" in found["missing"] and found["unused"] == ["st2.top"]
