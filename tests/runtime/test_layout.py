"""The host-local layout table (st2.runtime.layout): it names every path under the runtime
scope and the session store, the names on disk are the ones an existing host already has, and
no other module in st2/ spells one of them."""

from __future__ import annotations

import ast
from pathlib import Path

from st2.runtime.runtime_home import scope_directory
from st2.delivery.ledger import ledger_location
from st2.runtime import layout
from st2.runtime.resumable_session import SessionStore
from st2.runtime.scope import RuntimeScope

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "st2" / "runtime" / "layout.py"
FILE_NAMED = frozenset(name for name in layout.NAMES if "." in name)
# A module-level constant with one of these words in its name holds a path part.
PATH_CONSTANT_WORDS = frozenset(("DIRECTORY", "DIR", "NAME", "LOCK", "LOCKS", "PATH", "STORE", "FILE", "SOCKET"))
# The same words naming another program's files, not st2's: pi's and omp's session directories,
# and the stand-in ``codex`` program the codex rehearsal writes into its scratch directory.
FOREIGN = frozenset({("st2/drivers/session_ids.py", "sessions"), ("st2/drivers/codex/rehearsal.py", "codex"),
                     ("st2/accounts/carry.py", "sessions")})
# The one name the table imports rather than spells: st2.process reads it and sits below the table.
BELOW = frozenset({("st2/process/proc_stat.py", ".st2-boot-time")})


def violations(source: str) -> list[str]:
    """Each place ``source`` spells a layout name as a path: an operand of ``/``, an argument of
    ``os.path.join``, a module-level path constant, or anywhere for a name with a dot (a file
    name such as ``supervisor.json``). The same word as a CLI verb or a harness name is not a
    path and is not reported; docstrings are prose."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []

    def named(node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in layout.NAMES:
            return node.value
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            found += [f"{node.lineno}: / {name!r}" for name in map(named, (node.left, node.right)) if name]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.join":
            found += [f"{node.lineno}: join {name!r}" for name in map(named, node.args) if name]
        elif isinstance(node, ast.Constant) and node.value in FILE_NAMED and id(node) not in docstrings:
            found.append(f"{node.lineno}: {node.value!r}")
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and named(statement.value):
            for target in statement.targets:
                if isinstance(target, ast.Name) and PATH_CONSTANT_WORDS & set(target.id.split("_")):
                    found.append(f"{statement.lineno}: {target.id} = {statement.value.value!r}")
    return sorted(found, key=lambda where: int(where.split(':')[0]))


def test_no_module_but_the_layout_spells_a_host_local_path() -> None:
    offenders = []
    for path in sorted((ROOT / "st2").rglob("*.py")):
        if path == LAYOUT:
            continue
        relative = str(path.relative_to(ROOT))
        offenders += [f"{relative}:{where}" for where in violations(path.read_text())
                      if (relative, where.split("'")[1]) not in FOREIGN | BELOW]
    assert offenders == []


def test_the_scan_fires_on_each_way_of_spelling_a_path() -> None:
    sample = (
        'import os\n'
        'DIRECTORY_NAME = "delivery"\n'
        'def holds(scope):\n'
        '    return scope.directory / "holds"\n'
        'def record(scope):\n'
        '    return os.path.join(scope, "ding", "x.json")\n'
        'NAME = scope_record = "supervisor.json"\n'
    )
    assert violations(sample) == ["2: DIRECTORY_NAME = 'delivery'", "4: / 'holds'", "6: join 'ding'",
                                  "7: 'supervisor.json'", "7: NAME = 'supervisor.json'"]


def test_the_scan_leaves_the_same_words_alone_where_they_are_not_paths() -> None:
    sample = (
        '"""The scope\'s supervisor.json names the supervisor."""\n'
        'DING_TASK = "ding"\n'
        'HARNESS = "codex"\n'
        'VERBS = {"events": "st2.cli.events:events", "unpark": "st2.cli.unpark:unpark"}\n'
        'def state(stat):\n'
        '    return "stopped" if stat else "running"\n'
    )
    assert violations(sample) == []


def test_the_names_on_disk_are_the_ones_an_existing_host_has(tmp_path: Path) -> None:
    state = tmp_path / "state" / "st2"
    scope = state / "scopes" / "0123abcd" / "h"
    store = state / "sessions" / "0123abcd" / "h"
    assert layout.scopes(state) == state / "scopes"
    assert layout.session_store(scope) == store
    assert layout.declaration_cache(state, "0123abcd") == state / "cache" / "declarations.0123abcd.json"
    assert layout.channel_log(state, "h.a") == state / "channel" / "h.a.log"
    assert layout.seat_index(str(state), "0123abcd") == f"{state}/cache/seats.0123abcd.json"
    expected = {
        layout.scope_record(scope): "scope.json",
        layout.tasks(scope): "tasks",
        layout.parks(scope): "parks",
        layout.unpark_requests(scope): "unpark",
        layout.sockets(scope): "s",
        layout.staging(scope): "staging",
        layout.stopped(scope, "h.a"): "stopped/h.a",
        layout.holds(scope): "holds",
        layout.supervisor_record(scope): "supervisor.json",
        layout.ding_ownership(scope): "ding",
        layout.events(scope): "events",
        layout.seat_host_socket(scope): "seat-host.sock",
        layout.seat_host_lock(scope): "seat-host.lock",
        layout.ding_service_socket(scope): "ding-service.sock",
        layout.ding_service_lock(scope): "ding-service.lock",
        layout.ding_service_start_lock(scope): "ding-service.start.lock",
        layout.ding_service_killed(scope): "ding-service.killed",
        layout.ding_service_seat_lock(scope, "h.a"): "ding-service/h.a.lock",
        layout.opencode_server_record(scope, "h.a"): "opencode/h.a/server.json",
        layout.opencode_serve_log(layout.opencode_server_record(scope, "h.a")): "opencode/h.a/serve.log",
        layout.codex_control_record(scope, "h.a"): "codex/h.a/control-state.json",
        layout.codex_app_server_stderr(layout.codex_control_record(scope, "h.a")): "codex/h.a/app-server.stderr",
        layout.delivery_ledger(scope, "h.a"): "delivery/h.a/delivery-ledger.json",
    }
    assert [str(path.relative_to(scope)) for path in expected] == list(expected.values())
    assert [str(path.relative_to(store)) for path in (
        layout.session_record(store, "h.a"), layout.session_stop_marker(store, "h.a"), layout.session_lock(store, "h.a"),
        layout.staging(store), layout.delivery_ledger(store, "h.a"))] == [
        "h.a.json", "h.a.down", ".h.a.json.lock", "staging", "delivery/h.a/delivery-ledger.json"]
    assert (layout.EVENTS_CURRENT, layout.EVENTS_PREVIOUS) == ("journal", "journal.1")
    assert (layout.EVENTS_STATE, layout.EVENTS_NOTIFY_LOG) == ("state.json", "notify.log")


def test_the_scope_the_session_store_and_the_ledger_agree_with_the_table(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    scope = RuntimeScope(catalog, "h", tmp_path / "state")
    assert scope.directory == scope_directory(catalog, "h", tmp_path / "state")
    assert scope.directory.parent.parent == tmp_path / "state" / "scopes"
    assert (scope.tasks, scope.parks, scope.unpark_requests, scope.sockets, scope.staging) == (
        layout.tasks(scope.directory), layout.parks(scope.directory), layout.unpark_requests(scope.directory),
        layout.sockets(scope.directory), layout.staging(scope.directory))
    store = SessionStore.beside(scope.directory)
    assert store.directory == layout.session_store(scope.directory)
    assert ledger_location(scope.directory, "h.a") == (layout.delivery_ledger(store.directory, "h.a"), store.staging)
