"""The pipeline runs one way: catalog → reading → engines → table → analysis → rules → renderers → the API →
the command line. Scenario: someone adds a convenient import from a lower layer of a higher one (the
scanner reaching into a renderer for a helper, an analyzer importing the CLI's options). These tests read
every module's imports, including those inside functions and under ``TYPE_CHECKING``, and fail on any that
points up the pipeline, and on any import cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support import ROOT

PACKAGE = "rebalance_doctor"
# Lowest first. A module may import its own layer and those before it.
LAYERS = (
    ("collector", "durations", "near_misses", "times"),  # foundations: no imports from the package at all
    ("catalog",),
    ("reading",),
    ("engines",),
    ("table",),
    ("analysis",),
    ("rules",),
    ("renderers",),
    ("", "loaded"),  # the package's __init__: the library API (load, analyze, render, tables), and what load returns
    ("cli", "__main__"),
)


def layer_of(module: str) -> int:
    """The rank of ``rebalance_doctor.X.Y`` by its first part X ("" for the package itself)."""
    first = module.removeprefix(PACKAGE).lstrip(".").split(".")[0]
    for rank, names in enumerate(LAYERS):
        if first in names:
            return rank
    raise AssertionError(f"{module} belongs to no layer: add its folder to LAYERS")


def module_name(path: Path, package_dir: Path) -> str:
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package_dir: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, only for type checking) for every import of the package in ``path``."""
    name = module_name(path, package_dir)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
                   for node in ast.walk(block)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from . import x` imports the submodule x when there is one
            targets = [f"{base}.{alias.name}" if (package_dir.parent / f"{base}.{alias.name}".replace(".", "/")).exists()
                       or (package_dir.parent / (f"{base}.{alias.name}".replace(".", "/") + ".py")).exists() else base
                       for alias in node.names]
        else:
            continue
        found += [(target, node.lineno, id(node) in typing_only) for target in targets if target.split(".")[0] == PACKAGE]
    return found


def upward_imports(package_dir: Path) -> list[str]:
    problems = []
    for path in sorted(package_dir.rglob("*.py")):
        importer = module_name(path, package_dir)
        for imported, line, _ in imports_of(path, package_dir):
            if layer_of(imported) > layer_of(importer):
                problems.append(f"{path.relative_to(package_dir.parent)}:{line}: {importer} imports {imported} (a higher layer)")
    return problems


def import_cycles(package_dir: Path) -> list[list[str]]:
    """Cycles among the imports that run (type-checking imports excluded); a package counts as its __init__,
    which may import its own modules (they are then run from inside it, which is no cycle)."""
    graph: dict[str, set[str]] = {}
    for path in package_dir.rglob("*.py"):
        graph[module_name(path, package_dir)] = {imported for imported, _, typing in imports_of(path, package_dir) if not typing}
    cycles, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if imported == module or module.startswith(imported + "."):  # a module importing from its own package
                continue
            if state.get(imported) == "open":
                cycles.append([*trail[trail.index(imported):], imported] if imported in trail else [module, imported])
            elif imported not in state:
                visit(imported, [*trail, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_module_imports_a_higher_layer():
    assert upward_imports(ROOT / PACKAGE) == []


def test_no_import_cycles():
    assert import_cycles(ROOT / PACKAGE) == []


def test_every_folder_of_the_package_is_a_layer():
    folders = sorted(p.name for p in (ROOT / PACKAGE).iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert all(any(folder in names for names in LAYERS) for folder in folders), folders


@pytest.fixture
def fake_package(tmp_path: Path) -> Path:
    """A small copy of the package's shape: an analyzer and a renderer."""
    package = tmp_path / PACKAGE
    for folder in ("analysis", "renderers"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "renderers" / "words.py").write_text("from ..analysis import model\n")
    (package / "analysis" / "model.py").write_text("def label():\n    from ..renderers.words import plural\n")
    return package


def test_an_analyzer_importing_a_renderer_inside_a_function_is_caught(fake_package: Path):
    assert upward_imports(fake_package) == [
        f"{PACKAGE}/analysis/model.py:2: {PACKAGE}.analysis.model imports {PACKAGE}.renderers.words (a higher layer)"
    ]
    assert import_cycles(fake_package) != []
