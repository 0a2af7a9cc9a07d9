"""The package's import graph: its folders are its layers, imports flow one way, no cycles, and
nothing below ``page`` needs plotting, widgets or the book's tooling.

Read with the standard library's ``ast`` from the source, not by importing: every ``import``
and ``from ... import`` anywhere in a module counts — at the top, inside a function, under
``if TYPE_CHECKING`` — because an import hidden in a function still makes a cycle, only a
later one. Relative imports are resolved against the importing module's package, and
``from package import name`` counts as importing the submodule ``package.name`` when there
is one. Importing ``a.b.c`` is an edge to ``a.b.c`` only (Python also runs the packages'
``__init__`` files, but a package importing its own submodules is not a cycle).

The same reading checks the package's names: each public name is *defined* (a class, a
function, an assigned module-level name) in one module only, so that a maintainer who meets
a name can tell which definition is meant. Importing a name to re-export it is not a
definition, and ``INTERFACES`` lists the few names a family of modules defines on purpose
for one reader.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatch
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "depthnotes"
#: The layers, bottom first: a module may import its own layer and the layers below it, never
#: one above. No exceptions: a module that needs a higher layer belongs in it (or is split).
LAYERS = ("core", "data", "training", "measure", "bench", "experiments", "verdicts", "page",
          "course", "cli", "tools")
#: The package's top: ``depthnotes`` itself re-exports the core; ``__main__`` runs the CLI.
TOP = {"depthnotes": "core", "depthnotes.__main__": "cli"}
#: Needed only by the pages (``page``) and the book's build (``tools``), never below them.
FORBIDDEN = ("matplotlib", "ipywidgets", "myst_nb", "depthnotes.page", "depthnotes.course",
             "depthnotes.tools")


def module_names(package: Path) -> dict[str, Path]:
    """``depthnotes.x.y`` -> its file, for every module and package under ``package``."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path) -> set[str]:
    """Every module ``name`` (in file ``path``) imports anywhere, as absolute dotted names."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]   # the importing package
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                if node.level - 1 > len(here) - 1:
                    raise ImportError(f"{path}: relative import beyond the top package")
                parent = ".".join(base + ([node.module] if node.module else []))
            else:
                parent = node.module
            if node.module or not node.level:
                found.add(parent)
            # `from . import fastpath` names a sibling module, not the package's __init__
            found.update(f"{parent}.{alias.name}" for alias in node.names)   # maybe modules
    return found


def import_graph(package: Path = PACKAGE) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(edges between the package's own modules, every imported name of each module)."""
    modules = module_names(package)
    everything = {name: imports_of(name, path) for name, path in modules.items()}
    internal = {name: {m for m in imported if m in modules and m != name}
                for name, imported in everything.items()}
    return internal, everything


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None if the graph has none
    (depth-first search; a node seen again while still on the path closes a cycle)."""
    state: dict[str, str] = {}          # "open" while on the path, "done" after
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def forbidden_chain(start: str, graph: dict[str, set[str]], imported: dict[str, set[str]],
                    forbidden=FORBIDDEN) -> list[str] | None:
    """An import chain from ``start`` to a forbidden module (directly or through the
    package's own modules), e.g. ``[a, b, "matplotlib.pyplot"]``; None if there is none."""
    def bad(name: str) -> bool:
        return any(name == f or name.startswith(f + ".") for f in forbidden)

    seen, queue = {start}, [[start]]
    while queue:
        chain = queue.pop(0)
        hits = sorted(m for m in imported.get(chain[-1], ()) if bad(m))
        if hits:
            return chain + [hits[0]]
        for nxt in sorted(graph.get(chain[-1], ())):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(chain + [nxt])
    return None


# -- the checks themselves, on tiny fake graphs: they can fail ------------------------------
def test_find_cycle_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"a"}, "a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None     # a diamond
    assert find_cycle({}) is None


def test_forbidden_chain_follows_internal_imports():
    graph = {"core": {"helper"}, "helper": set(), "clean": set()}
    imported = {"core": {"helper", "numpy"}, "helper": {"matplotlib.pyplot"}, "clean": {"torch"}}
    assert forbidden_chain("core", graph, imported) == ["core", "helper", "matplotlib.pyplot"]
    assert forbidden_chain("clean", graph, imported) is None
    assert forbidden_chain("clean", graph, {"clean": {"depthnotes.tools.build"}}) == \
        ["clean", "depthnotes.tools.build"]


def test_imports_are_read_at_every_level_and_resolved(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    import json\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\nfrom pkg.sub import c\n")
    (pkg / "sub" / "c.py").write_text("")
    graph, imported = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub", "pkg.sub.b"}          # found inside a function
    assert graph["pkg.sub.b"] == {"pkg.a", "pkg.sub", "pkg.sub.c"}   # `from .. import a`
    assert "json" in imported["pkg.a"]
    cycle = find_cycle(graph)
    assert cycle[0] == cycle[-1] and set(cycle) == {"pkg.a", "pkg.sub.b"}


# -- the package ----------------------------------------------------------------------------
def test_the_package_has_no_import_cycle():
    graph, _ = import_graph()
    assert len(graph) > 20 and "depthnotes.tools.build" in graph    # the whole package read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def layer_of(name: str) -> str:
    """The layer a module of the package belongs to: its folder (``depthnotes.core.model`` ->
    ``core``), or ``TOP``'s entry for the package's own two files."""
    if name in TOP:
        return TOP[name]
    layer = name.split(".")[1]
    if layer not in LAYERS:
        raise AssertionError(f"{name} is in no layer: put it in one of {LAYERS}")
    return layer


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every edge from a module to one in a higher layer, as ``"a (layer) -> b (layer)"``."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return sorted(f"{a} ({layer_of(a)}) -> {b} ({layer_of(b)})"
                  for a, targets in graph.items() for b in targets
                  if rank[layer_of(b)] > rank[layer_of(a)])


def test_upward_imports_are_found_on_a_fake_graph():
    graph = {"depthnotes.core.model": {"depthnotes.page.plots"},
             "depthnotes.page.plots": {"depthnotes.core.model"}}
    assert upward_imports(graph) == [
        "depthnotes.core.model (core) -> depthnotes.page.plots (page)"]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("depthnotes.helpers")


def test_every_module_is_in_a_layer_and_imports_flow_down():
    graph, _ = import_graph()
    assert {layer_of(name) for name in graph} == set(LAYERS)   # every layer has a module
    assert upward_imports(graph) == []


LOW_LAYERS = LAYERS[:LAYERS.index("page")]


@pytest.mark.parametrize("layer", LOW_LAYERS)
def test_below_the_page_nothing_needs_plotting_widgets_or_tooling(layer):
    graph, imported = import_graph()
    modules = [name for name in graph if layer_of(name) == layer and name not in TOP]
    assert modules
    for name in modules:
        chain = forbidden_chain(name, graph, imported)
        assert chain is None, f"{name} imports " + " -> ".join(chain)


# -- one definition per public name ---------------------------------------------------------
#: Names that a family of modules each define on purpose, because one reader looks the name up
#: on each of them: an interface, not a collision. name -> (the modules that may define it, as
#: ``fnmatch`` patterns; who reads it). Any other public name is defined in one module only.
_CLI = (("depthnotes.cli.*",), "depthnotes.__main__ builds a subcommand from each cli module")
_HOOK = (("depthnotes.tools.pytest_plugin", "depthnotes.tools.status"),
         "pytest calls its hooks by name in each plugin")
INTERFACES = {
    "main": (("depthnotes.__main__", "depthnotes.tools.*"), "`python -m` runs a module's main"),
    "DESCRIPTION": _CLI, "add_arguments": _CLI, "run": _CLI,
    "pytest_configure": _HOOK, "pytest_collection_modifyitems": _HOOK,
    "ANSWERS": (("depthnotes.course.answers", "depthnotes.course.answers.ch*"),
                "each chapter's table, gathered under the same name by course.answers"),
    "WRITTEN": (("depthnotes.course.answers", "depthnotes.course.answers.ch*"),
                "each chapter's table, gathered under the same name by course.answers"),
    "SUBQUESTIONS": (("depthnotes.course.answers", "depthnotes.course.answers.ch*"),
                     "each chapter's table, gathered under the same name by course.answers"),
    "RUNS": (("depthnotes.course.runs", "depthnotes.course.runs.ch*"),
             "each chapter's table, gathered under the same name by course.runs"),
    "UNRECORDED": (("depthnotes.experiments.registry", "depthnotes.experiments.ch*"),
                   "each chapter's list, gathered under the same name by experiments.registry"),
}


def defined_names(path: Path) -> dict[str, int]:
    """The public names a module *defines* at module level, with their line: classes,
    functions and assigned names (also under a module-level ``if``/``try``/``with``), never
    a name brought in by ``import`` (a re-export) nor one with a leading underscore."""
    found: dict[str, int] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
            for name in names:
                if not name.startswith("_"):
                    found.setdefault(name, node.lineno)

    visit(ast.parse(path.read_text(), filename=str(path)).body)
    return found


def name_collisions(package: Path = PACKAGE, interfaces: dict = INTERFACES) -> list[str]:
    """Every public name defined in more than one module of ``package`` (outside its
    ``interfaces`` entry), as ``"NAME: module:line, module:line"``."""
    where: dict[str, list[str]] = {}
    for module, path in module_names(package).items():
        for name, line in defined_names(path).items():
            where.setdefault(name, []).append(f"{module}:{line}")
    out = []
    for name, places in sorted(where.items()):
        if len(places) < 2:
            continue
        allowed = interfaces.get(name, ((),))[0]
        if not all(any(fnmatch(p.split(":")[0], pat) for pat in allowed) for p in places):
            out.append(f"{name}: {', '.join(places)}")
    return out


def test_name_collisions_are_found_on_a_fake_package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "cmd").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import Shape\n")          # a re-export: fine
    (pkg / "a.py").write_text("class Shape: ...\nMARGIN = 0.05\n_x = 1\ndef run(): ...\n")
    (pkg / "b.py").write_text("from pkg.a import Shape\n_x = 2\n"       # import, private: fine
                              "if True:\n    MARGIN = 0.25\n"           # a second definition
                              "def f():\n    Shape = 1\n")              # a local: fine
    (pkg / "cmd" / "__init__.py").write_text("")
    (pkg / "cmd" / "go.py").write_text("def run(): ...\n")
    assert defined_names(pkg / "b.py") == {"MARGIN": 4, "f": 5}
    assert name_collisions(pkg, {}) == ["MARGIN: pkg.a:2, pkg.b:4", "run: pkg.a:4, pkg.cmd.go:1"]
    # an interface excuses only the modules it names
    assert name_collisions(pkg, {"run": (("pkg.cmd.*",), "")}) == [
        "MARGIN: pkg.a:2, pkg.b:4", "run: pkg.a:4, pkg.cmd.go:1"]
    assert name_collisions(pkg, {"run": (("pkg.cmd.*", "pkg.a"), "")}) == [
        "MARGIN: pkg.a:2, pkg.b:4"]


def test_every_public_name_is_defined_in_one_module():
    """A maintainer reading a name must be able to tell which definition is meant: each
    public name of the package is defined in one module (re-exports by import are
    fine), except the interfaces that ``INTERFACES`` lists with their reader."""
    assert name_collisions() == []


def test_every_interface_is_one_still():
    """``INTERFACES`` lists no name that is defined in fewer than two modules: the list
    cannot keep an entry that no longer excuses anything."""
    where: dict[str, int] = {}
    for path in module_names(PACKAGE).values():
        for name in defined_names(path):
            where[name] = where.get(name, 0) + 1
    assert [n for n in INTERFACES if where.get(n, 0) < 2] == []
