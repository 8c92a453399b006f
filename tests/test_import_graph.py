"""st2's import graph reads as the architecture: the packages under ``st2/`` form a DAG, and no
module reaches one of st2's own packages through an ``except ImportError`` fallback or an
importlib string, except the lazy dispatch tables docs/architecture.md §Hot paths names
(``st2.entry.HOT_PATHS``, the hot paths of the front door's table ``st2.front.table.ROUTES``,
and ``st2.cli.VERBS``), the seat host's preload manifests (``st2.seathost.preload``, data a test
checks against a traced run of the forked entries) and the driver table's lookups
(``st2.drivers``, over the rows of ``st2.base.harnesses``).

Every import statement counts, including the ones inside functions: a lazy import is still a
dependency. A node is a top-level part of ``st2`` (``st2.catalog``, ``st2.drivers``,
``st2.base``); the per-harness driver packages are one node with the driver table. Inside
``st2.drivers`` the modules form a DAG too, a shared module there (``st2/drivers/*.py``, a shared
package such as ``st2/drivers/channel/``) reaches a driver package (``st2/drivers/<harness>/``)
only through the table's lookups, and no driver package imports another's.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

PACKAGE = REPO / "st2"
LAZY_DISPATCH_TABLES = {"st2/front/table.py", "st2/cli/__init__.py", "st2/seathost/preload.py", "st2/drivers/__init__.py"}


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def imported_modules(path: Path, root: Path) -> list[tuple[str, int]]:
    """Every ``st2…`` module ``path`` imports, with the line, resolving relative imports."""
    name, is_package = module_name(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            found.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
    return [(target, line) for target, line in found if target == root.name or target.startswith(root.name + ".")]


def part_of(module: str) -> str:
    """The graph node a module belongs to: ``st2.<first component>``."""
    parts = module.split(".")
    return ".".join(parts[:2])


def package_graph(root: Path) -> dict[str, dict[str, str]]:
    """``{node: {imported node: "file:line" of one import that makes the edge}}``."""
    graph: dict[str, dict[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        source = part_of(module_name(path, root)[0])
        edges = graph.setdefault(source, {})
        for target, line in imported_modules(path, root):
            node = part_of(target)
            on_disk = root.parent / node.replace(".", "/")
            if node != source and (on_disk.is_dir() or on_disk.with_suffix(".py").is_file()):
                edges.setdefault(node, f"{path.relative_to(root.parent)}:{line}")
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """One cycle (as a closed path of nodes) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, {})):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [closed_path(graph, component) for component in components]


def closed_path(graph: dict[str, dict[str, str]], component: list[str]) -> list[str]:
    """A shortest cycle through the first node of ``component`` (breadth-first inside it)."""
    start = component[0]
    members = set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, {})):
                if target not in members:
                    continue
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return component


def describe(graph: dict[str, dict[str, str]], cycle: list[str]) -> str:
    return " -> ".join(cycle) + "  (" + "; ".join(
        f"{a} -> {b} at {graph[a][b]}" for a, b in zip(cycle, cycle[1:])) + ")"


def test_the_st2_package_graph_has_no_cycle() -> None:
    graph = package_graph(PACKAGE)
    assert "st2.supervisor" in graph and "st2.catalog" in graph  # the walk saw the tree
    assert [describe(graph, cycle) for cycle in cycles(graph)] == []


def test_the_cycle_check_names_a_cycle_it_is_shown(tmp_path: Path) -> None:
    root = tmp_path / "st2"
    for package, source in {"low": "from st2.high import thing\n", "high": "def f():\n    import st2.low.x\n",
                            "side": "from st2.low import y\n"}.items():
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
        (root / package / "x.py").write_text(source)
    graph = package_graph(root)
    assert cycles(graph) == [["st2.high", "st2.low", "st2.high"]]
    assert describe(graph, cycles(graph)[0]) == (
        "st2.high -> st2.low -> st2.high  (st2.high -> st2.low at st2/high/x.py:2; "
        "st2.low -> st2.high at st2/low/x.py:1)")
    (root / "low" / "x.py").write_text("")
    assert cycles(package_graph(root)) == []


def module_graph(root: Path, inside: str) -> dict[str, dict[str, str]]:
    """The module-level graph inside package ``inside`` (``st2.drivers``): ``{module: {imported
    module: "file:line"}}``. ``from P import X`` is an edge to ``P.X`` when that is a module of the
    tree, else to ``P``; importing a module's own ancestor package is no edge (Python runs a
    package's ``__init__`` before any of its modules)."""
    modules = {module_name(path, root)[0]: path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, dict[str, str]] = {}
    for source, path in modules.items():
        if source != inside and not source.startswith(inside + "."):
            continue
        edges = graph.setdefault(source, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        name, is_package = module_name(path, root)
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    parent = ".".join(base + ([node.module] if node.module else []))
                else:
                    parent = node.module or ""
                targets = [f"{parent}.{alias.name}" if f"{parent}.{alias.name}" in modules else parent
                           for alias in node.names]
            for target in targets:
                if target not in modules or not (target == inside or target.startswith(inside + ".")):
                    continue
                if target == source or source.startswith(target + "."):
                    continue
                edges.setdefault(target, f"{path.relative_to(root.parent)}:{node.lineno}")
    return graph


def test_the_modules_inside_st2_drivers_have_no_cycle() -> None:
    graph = module_graph(PACKAGE, "st2.drivers")
    assert "st2.drivers.session_route" in graph and "st2.drivers.opencode.session" in graph
    assert [describe(graph, cycle) for cycle in cycles(graph)] == []


def test_the_module_cycle_check_names_a_cycle_inside_a_package(tmp_path: Path) -> None:
    root = tmp_path / "st2"
    (root / "drivers" / "h").mkdir(parents=True)
    for relative, source in {"__init__.py": "", "drivers/__init__.py": "", "drivers/h/__init__.py": "",
                             "drivers/shared.py": "def f():\n    from st2.drivers.h.anchor import A\n",
                             "drivers/h/anchor.py": "from st2.drivers.shared import f\nfrom st2.drivers import h\n"
                             }.items():
        (root / relative).write_text(source)
    graph = module_graph(root, "st2.drivers")
    assert [describe(graph, cycle) for cycle in cycles(graph)] == [
        "st2.drivers.h.anchor -> st2.drivers.shared -> st2.drivers.h.anchor  "
        "(st2.drivers.h.anchor -> st2.drivers.shared at st2/drivers/h/anchor.py:1; "
        "st2.drivers.shared -> st2.drivers.h.anchor at st2/drivers/shared.py:2)"]
    (root / "drivers" / "shared.py").write_text("")
    assert cycles(module_graph(root, "st2.drivers")) == []


def driver_of(module: str, drivers: tuple[str, ...]) -> str | None:
    """The harness whose driver package ``module`` is in (``st2.drivers.<harness>…``), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in drivers else None


def reaches_into_a_driver(root: Path, drivers: tuple[str, ...]) -> list[str]:
    """Imports of a driver package (``st2/drivers/<harness>/``, ``drivers`` naming the harnesses)
    from a shared driver module (``st2/drivers/*.py`` or a shared package) but the table
    (``st2/drivers/__init__.py``), and from another driver's package."""
    graph = module_graph(root, "st2.drivers")
    problems = []
    for source, edges in sorted(graph.items()):
        if source == "st2.drivers":
            continue  # the table
        own = driver_of(source, drivers)
        problems.extend(f"{source} -> {target} at {where}" for target, where in sorted(edges.items())
                        if driver_of(target, drivers) not in (None, own))
    return problems


def test_a_shared_driver_module_reaches_a_driver_package_only_through_the_table() -> None:
    from st2.base.harnesses import names

    assert reaches_into_a_driver(PACKAGE, names()) == []


def test_the_reach_check_fires(tmp_path: Path) -> None:
    root = tmp_path / "st2"
    (root / "drivers" / "h").mkdir(parents=True)
    for relative, source in {"__init__.py": "", "drivers/__init__.py": "def p():\n    import st2.drivers.h\n",
                             "drivers/h/__init__.py": "", "drivers/h/session.py": "",
                             "drivers/route.py": "def f():\n    from st2.drivers.h.session import run\n",
                             "drivers/lifecycle.py": "from st2.drivers import route\n",
                             "drivers/g/__init__.py": "", "drivers/g/session.py": "from st2.drivers.h import session\n",
                             "drivers/h/expansion.py": "from st2.drivers.h import session\nimport st2.drivers.lifecycle\n",
                             }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(source)
    assert reaches_into_a_driver(root, ("g", "h")) == [
        "st2.drivers.g.session -> st2.drivers.h.session at st2/drivers/g/session.py:1",
        "st2.drivers.route -> st2.drivers.h.session at st2/drivers/route.py:2"]


def own_package_fallbacks(path: Path, root: Path = REPO) -> list[str]:
    """``try: import st2…`` guarded by ``except ImportError`` / ``ModuleNotFoundError``, and
    importlib calls: ways of depending on st2's own packages that the graph above cannot see."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            guarded = any(isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError")
                          for handler in node.handlers)
            imports_own = any(isinstance(inner, (ast.Import, ast.ImportFrom)) and
                              any(name.startswith("st2") for name in _names(inner))
                              for statement in node.body for inner in ast.walk(statement))
            if guarded and imports_own:
                problems.append(f"{path.relative_to(root)}:{node.lineno}: except ImportError around an st2 import")
        if isinstance(node, ast.Attribute) and node.attr == "import_module":
            problems.append(f"{path.relative_to(root)}:{node.lineno}: importlib.import_module")
        if isinstance(node, ast.Name) and node.id == "__import__":
            problems.append(f"{path.relative_to(root)}:{node.lineno}: __import__")
    return problems


def _names(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or ("." * node.level)] if node.level == 0 else ["st2"]


def test_no_fallback_or_string_registry_reaches_st2_s_own_packages() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if str(path.relative_to(REPO)) not in LAZY_DISPATCH_TABLES:
            problems.extend(own_package_fallbacks(path))
    assert problems == []


def test_the_fallback_check_fires(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import importlib\ntry:\n    from st2.bus import send\nexcept ImportError:\n    send = None\n"
                      "x = importlib.import_module('st2.bus')\ny = __import__('st2.bus')\n")
    assert own_package_fallbacks(sample, tmp_path) == [
        "sample.py:2: except ImportError around an st2 import", "sample.py:6: importlib.import_module",
        "sample.py:7: __import__"]
    sample.write_text("try:\n    import inotify_simple\nexcept ImportError:\n    inotify_simple = None\n")
    assert own_package_fallbacks(sample, tmp_path) == []  # a third-party guard is not st2's own
