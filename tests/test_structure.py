"""The shape of the package, read from its source with `ast` (nothing is imported):

- import direction: the core never imports the CLI or the GUI, the CLI never imports the
  GUI, core's leaves never import core/building (ABOVE_BUILDING names the few core
  modules that stand on it), and Qt is imported only under tfwizard/gui (every import,
  also inside functions);
- no import cycles among tfwizard's modules (imports outside functions, TYPE_CHECKING
  ones included, and the package `__init__` an import runs);
- size: no module over MAX_MODULE_LINES lines and no function over MAX_FUNCTION_LINES,
  except the allow-lists below, each entry with its reason; an entry that is no longer
  needed fails, so the lists only shrink (CONTRIBUTING.md, "Size");
- a docstring on every public module, class and function (names without a leading "_").

tests/test_no_qt_in_core.py checks the Qt rule once more by importing the modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tfwizard"
QT_MODULES = ("PySide6", "shiboken6", "qasync")

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

#: modules over MAX_MODULE_LINES: path -> why it may be
LONG_MODULES: dict[str, str] = {
}

#: functions over MAX_FUNCTION_LINES: "path::Qualified.name" -> why it may be
LONG_FUNCTIONS: dict[str, str] = {
}

#: core modules above core/building, which may import it: dotted name (a package covers its
#: modules) -> why. Every other core module is a leaf the building pipeline stands on.
ABOVE_BUILDING: dict[str, str] = {
    "tfwizard.core.testloop": "runs TensorFlow's tests in the warm build container, from "
                              "the build's plan",
    "tfwizard.core.handoff": "after a build: the summary lines of its report and what to "
                             "run on the target",
    "tfwizard.core.session": "the pipeline both front ends call: plans, starts builds and "
                             "what follows them",
    "tfwizard.core.wheelhouse": "publishes what a build made: reads its record (the wheel, "
                                "its plan and check) for the provenance",
}

#: modules whose public names may lack a docstring for now: path -> why
UNDOCUMENTED: dict[str, str] = {
}


@dataclass(frozen=True)
class Module:
    """One module of the package: its dotted name, its file, its syntax tree."""

    name: str
    path: Path
    tree: ast.Module

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def package(self) -> str:
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


@cache
def modules() -> dict[str, Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = Module(name, path, ast.parse(path.read_text("utf-8"), str(path)))
    return out


def targets(module: Module, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names (`from pkg import sub` names pkg.sub when
    that is a module of the package, else pkg)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.package.split(".")
        parts = parts[:len(parts) - (node.level - 1)]
        base = ".".join([*parts, base] if base else parts)
    known = modules()
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def all_imports(module: Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in targets(module, node):
                yield node.lineno, target


def _module_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports outside functions: those that run when the module is imported and those
    under TYPE_CHECKING (a type-only import still ties the two modules' designs)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            yield from _module_imports(node.body)
            yield from _module_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse,
                          node.finalbody):
                yield from _module_imports(block)


def _packages_of(name: str) -> Iterator[str]:
    """The packages above a module, nearest first (a.b.c: a.b, a)."""
    while "." in name:
        name = name.rpartition(".")[0]
        yield name


def module_graph(known: dict[str, Module] | None = None) -> dict[str, set[str]]:
    """Module -> the modules it imports outside functions. Importing a.b.c runs the
    packages a and a.b first, so their `__init__` counts as imported too, except the
    packages the importer itself sits in (those are already being imported)."""
    known = modules() if known is None else known
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, module in known.items():
        own = set(_packages_of(name)) | ({name} if module.path.name == "__init__.py" else set())
        for node in _module_imports(module.tree.body):
            for target in targets(module, node):
                reached = [target, *_packages_of(target)]
                graph[name].update(t for t in reached if t in known and t != name
                                   and (t == target or t not in own))
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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


def functions(module: Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its qualified name (nested ones too)."""
    def walk(body: list[ast.stmt], prefix: str) -> Iterator[
            tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield prefix + node.name, node
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
    return walk(module.tree.body, "")


def undocumented(module: Module) -> list[str]:
    """Public names without a docstring: the module, its public classes and functions, and
    the public methods of its public classes. A camelCase method is a Qt override (the
    package's own names are snake_case) and is exempt; so are nested functions."""
    missing = [] if ast.get_docstring(module.tree) else ["<module>"]

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("_") or (prefix and node.name != node.name.lower()):
                continue
            if ast.get_docstring(node) is None:
                missing.append(prefix + node.name)
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
    walk(module.tree.body, "")
    return missing


# -- the tests ------------------------------------------------------------------------------


def _above_building(name: str) -> bool:
    return name.startswith("tfwizard.core.building") or any(
        name == above or name.startswith(above + ".") for above in ABOVE_BUILDING)


def test_import_direction():
    """core -> neither cli nor gui; core's leaves -> not core/building; cli -> not gui; Qt
    only in gui (imports anywhere in a module, inside functions too)."""
    wrong = []
    for name, module in modules().items():
        layer = name.split(".")[1] if name.count(".") else ""
        for line, target in all_imports(module):
            where = f"{module.rel}:{line} imports {target}"
            if layer == "core" and target.startswith(("tfwizard.cli", "tfwizard.gui")):
                wrong.append(where)
            if (layer == "core" and target.startswith("tfwizard.core.building")
                    and not _above_building(name)):
                wrong.append(where)
            if layer == "cli" and target.startswith("tfwizard.gui"):
                wrong.append(where)
            if target.split(".")[0] in QT_MODULES and layer != "gui":
                wrong.append(where)
    assert wrong == []


def test_the_import_checks_see_imports_inside_functions():
    # the GUI's jobs import the core lazily inside functions: the walk must see those
    lazy = {t for _line, t in all_imports(modules()["tfwizard.gui.jobs"])}
    assert "tfwizard.core.install.requirement" in lazy
    tree = ast.parse("def f():\n    from PySide6 import QtCore\n")
    probe = Module("tfwizard.core.probe", PACKAGE / "core" / "probe.py", tree)
    assert [t for _line, t in all_imports(probe)] == ["PySide6"]


def test_no_import_cycles():
    cycles = strongly_connected(module_graph())
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_the_graph_counts_package_inits_and_type_checking_imports():
    def module(name: str, source: str, init: bool = False) -> Module:
        path = Path(*name.split("."), "__init__.py" if init else "x.py")
        return Module(name, path, ast.parse(source))
    known = {m.name: m for m in (
        # p's __init__ imports q; q imports p.b, which runs p's __init__ first
        module("p", "import q\n", init=True), module("p.b", ""), module("q", "import p.b\n"),
        # a type-only import is an edge too
        module("r", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import s\n"),
        module("s", "import r\n"),
        # a module's own package is already being imported: no edge back to it
        module("t", "import t.u\n", init=True), module("t.u", "import t.v\n"),
        module("t.v", ""))}
    graph = module_graph(known)
    assert graph["q"] == {"p", "p.b"} and graph["r"] == {"s"} and graph["t.u"] == {"t.v"}
    assert strongly_connected(graph) == [["p", "q"], ["r", "s"]]


def test_module_sizes():
    too_long = {m.rel: len(m.path.read_text("utf-8").splitlines())
                for m in modules().values()}
    over = {path: n for path, n in too_long.items() if n > MAX_MODULE_LINES}
    assert sorted(set(over) - set(LONG_MODULES)) == [], over
    stale = sorted(set(LONG_MODULES) - set(over))
    assert stale == [], f"under {MAX_MODULE_LINES} lines now (or gone): drop from LONG_MODULES"


def test_function_sizes():
    over = {}
    for module in modules().values():
        for qualname, node in functions(module):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                over[f"{module.rel}::{qualname}"] = length
    assert sorted(set(over) - set(LONG_FUNCTIONS)) == [], over
    stale = sorted(set(LONG_FUNCTIONS) - set(over))
    assert stale == [], f"under {MAX_FUNCTION_LINES} lines now (or gone): drop from " \
                        "LONG_FUNCTIONS"


def test_docstrings():
    missing = {}
    for module in modules().values():
        names = undocumented(module)
        if names and module.rel not in UNDOCUMENTED:
            missing[module.rel] = names
    assert missing == {}
    stale = sorted(path for path in UNDOCUMENTED
                   if path not in {m.rel for m in modules().values()}
                   or not undocumented(next(m for m in modules().values() if m.rel == path)))
    assert stale == [], "fully documented now (or gone): drop from UNDOCUMENTED"


def test_allow_lists_give_reasons():
    for table in (LONG_MODULES, LONG_FUNCTIONS, UNDOCUMENTED):
        assert all(reason.strip() for reason in table.values())
