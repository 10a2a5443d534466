"""One namespace and one-way layers, read from the source with ``ast``.

Every module of the project is named as it is installed (``harness/records.py`` is
``evotree.harness.records``). Imports anywhere in a module count, those inside functions and under
``TYPE_CHECKING`` too: a lazy import is still a dependency, and a circle through one is still a
circle. The layers, bottom to top:

    0 core         evotree.core (errors, refs, git layer, ledger, workspace, config, findings model)
    1 skills       evotree.skills
    2 memory       evotree.memory
    3 harness      evotree.harness
    4 domains      evotree.domains          diagnostics  evotree.diagnostics
    5 gates        evotree.gates
    6 application  evotree.report
    7 verbs        evotree.verbs (every face's verbs; every policy applied once)
    8              evotree.demo, evotree.api (the Python API), evotree.server (MCP)
    9              evotree.cli
   10              ``evotree`` itself (its lazy attributes are the API) and ``python -m evotree``

A module may import its own package and any package of a lower layer, nothing else.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: repository folder -> installed package (setup.cfg's package_dir)
FOLDERS = {
    "evotree": "evotree",
    "harness": "evotree.harness",
    "diagnostics": "evotree.diagnostics",
    "skills": "evotree.skills",
    "memory": "evotree.memory",
    "gates": "evotree.gates",
    "domains": "evotree.domains",
}
LAYERS = {
    "evotree.core": 0,
    "evotree.skills": 1,
    "evotree.memory": 2,
    "evotree.harness": 3,
    "evotree.domains": 4,
    "evotree.diagnostics": 4,
    "evotree.gates": 5,
    "evotree.report": 6,
    "evotree.verbs": 7,
    "evotree.demo": 8,
    "evotree.api": 8,
    "evotree.server": 8,
    "evotree.cli": 9,
    "evotree.__main__": 10,
    "evotree": 10,
}
TOP_LEVEL_NAMES = {"harness", "diagnostics", "skills", "memory", "gates", "domains"}


def project_modules() -> dict[str, Path]:
    """Installed module name -> source file, for every module of the project."""
    modules: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if folder == "evotree" and parts and parts[0] in TOP_LEVEL_NAMES:
                raise AssertionError(
                    f"{path}: evotree/{parts[0]} would clash with the mapped folder"
                )
            modules[name] = path
    return modules


def imported_names(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module name an import statement of ``path`` names (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, node.lineno))
            found.extend((f"{module}.{alias.name}", node.lineno) for alias in node.names)
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {project module it imports: line}."""
    modules = project_modules()
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in modules.items():
        for target, line in imported_names(name, path):
            if target in modules and target != name:
                graph[name].setdefault(target, line)
    return graph


def layer_of(module: str) -> tuple[str, int]:
    """The layer group a module belongs to (the longest prefix in LAYERS) and its rank."""
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        prefix = ".".join(parts[:k])
        if prefix in LAYERS:
            return prefix, LAYERS[prefix]
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS")


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    nodes = set(graph) | {t for targets in graph.values() for t in targets}
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_anywhere() -> None:
    circles = strongly_connected(import_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, targets in import_graph().items():
        group, rank = layer_of(module)
        for target, line in targets.items():
            target_group, target_rank = layer_of(target)
            if target_group != group and target_rank >= rank:
                wrong.append(
                    f"{project_modules()[module].relative_to(ROOT)}:{line}: {module} "
                    f"(layer {rank}) imports {target} (layer {target_rank})"
                )
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(sorted(wrong))


@pytest.mark.parametrize(
    "folder",
    ["evotree", "harness", "diagnostics", "skills", "memory", "gates", "domains", "tests", "bench"],
)
def test_nothing_imports_a_bare_top_level_name(folder: str) -> None:
    """``import harness`` works only by accident inside the checkout; code uses ``evotree.harness``."""
    bare = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for target, line in imported_names("x.y", path):
            if target.split(".")[0] in TOP_LEVEL_NAMES:
                bare.append(f"{path.relative_to(ROOT)}:{line}: {target}")
    assert not bare, "\n".join(bare)


def test_setup_cfg_lists_every_package() -> None:
    """setup.cfg names its packages one by one (package_dir mapping); a new folder must be added."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = {line.strip() for line in cfg["options"]["packages"].splitlines() if line.strip()}
    packages = {name for name, path in project_modules().items() if path.name == "__init__.py"}
    assert listed == packages
    mapping = {
        line.split("=")[0].strip(): line.split("=")[1].strip()
        for line in cfg["options"]["package_dir"].splitlines()
        if "=" in line
    }
    assert mapping == {package: folder for folder, package in FOLDERS.items()}
