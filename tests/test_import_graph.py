"""The static import graph of ``ldpgraph``: no cycles, no private names across subpackages.

Every ``.py`` file under ``ldpgraph/`` is parsed with :mod:`ast` (nothing is imported), and every
``import`` / ``from ... import`` statement anywhere in it counts: at module level, inside
functions and methods, inside ``try``/``if`` blocks. The one exclusion is the body of an
``if TYPE_CHECKING:`` block, which never runs: those imports exist for the type checker only and
cannot take part in an import-time cycle. (Dynamic imports, ``importlib.import_module`` with a
computed name, are not seen; the package has none.)

How a statement becomes edges of the graph, whose nodes are the modules of ``ldpgraph`` (a package
is the node of its ``__init__.py``, named after the package: ``ldpgraph.protocols``):

* ``import a.b.c`` is an edge to ``a.b.c``;
* ``from a.b import x`` is an edge to ``a.b.x`` when that is a module or package of ``ldpgraph``
  (``from . import triangles``), else an edge to ``a.b`` (the module, or the package's
  ``__init__``, that defines or re-exports ``x``);
* relative imports are resolved against the importing module's package first;
* an import also runs the ``__init__`` of each package above its target that does not contain
  the importing module: ``from .experiments.runner import x`` in ``ldpgraph.notes`` is an
  edge to ``ldpgraph.experiments.runner`` *and* to ``ldpgraph.experiments`` (whose
  ``__init__`` runs too: an import there can close a real cycle). The packages that
  contain the importing module are not edges: they are being initialised already when it runs
  (``ldpgraph/__init__`` for every module), and counting them would make the whole package one
  cycle through ``ldpgraph/__init__``, which imports the subpackages.

The price of that last rule is the rule tested by
:func:`test_no_module_imports_its_own_package_init`: a module never imports a name through the
``__init__`` of a package that contains it (``from ldpgraph import __version__``, ``from . import
_read_graph`` in a submodule); it imports the module that defines the name. Through an ancestor's
``__init__`` a module would run, or see half-initialised, the very package it is imported for.

With that rule, an edge to a package ``__init__`` is an ordinary edge, and an ``__init__`` that
re-exports its submodules is an ordinary node with edges to them; a cycle through it is a real
one. The graph must have no strongly connected component of more than one module (and no module
imports itself).

Private names (:func:`test_private_names_stay_in_their_subpackage`): a name ``_x`` defined in a
module belongs to that module's package (a name in a package ``__init__`` to that package), and a
private module ``_m`` to the package that holds it. Importing it from a module outside that
package is a private cross-import. The ones that remain are listed in ``PRIVATE_CROSS_IMPORTS``,
which the test checks exactly: a new one fails, and so does a listed one that is gone (remove it
from the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = "ldpgraph"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is_package) for every ``.py`` file under ``ldpgraph/``."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if "_data" in parts or "__pycache__" in parts:
            continue
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom in ``tree``, at any depth, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <node.module> import ...`` written in ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(target module, imported name or None, line) for each import in ``module`` of ldpgraph.

    ``name`` is None when the target is itself the thing imported (``import a.b``, or
    ``from a import b`` with ``a.b`` a module); otherwise it is a name looked up in the target.
    """
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    out.append((alias.name, None, node.lineno))
            continue
        source = _resolve_from(module, is_package, node)
        if not (source == PACKAGE or source.startswith(PACKAGE + ".")):
            continue
        for alias in node.names:
            if alias.name == "*":
                out.append((source, "*", node.lineno))
            elif f"{source}.{alias.name}" in MODULES:
                out.append((f"{source}.{alias.name}", None, node.lineno))
            else:
                out.append((source, alias.name, node.lineno))
    return out


IMPORTS = {module: _imports(module) for module in MODULES}


def _packages_run(module: str, target: str) -> list[str]:
    """The package ``__init__`` modules that importing ``target`` from ``module`` may run: the
    packages above ``target`` that do not contain ``module`` (those are already initialised)."""
    parts = target.split(".")
    above = [".".join(parts[:i]) for i in range(1, len(parts))]
    return [p for p in above if not (module == p or module.startswith(p + "."))]


def import_edges(module: str) -> list[tuple[str, str, int]]:
    """(target, how, line): the modules that ``module``'s imports run."""
    edges = []
    for target, name, line in IMPORTS[module]:
        assert target in MODULES, f"{module}:{line} imports {target}, which is not a module"
        what = target if name is None else f"{name} from {target}"
        edges.append((target, what, line))
        for package in _packages_run(module, target):
            edges.append((package, f"{what} (runs {package}/__init__)", line))
    return edges


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for module in MODULES:
        for target, _how, _line in import_edges(module):
            graph.add_edge(module, target)
    return graph


def _describe_cycles(graph: nx.DiGraph, component: set[str], limit: int = 20) -> list[str]:
    sub = graph.subgraph(component)
    lines = []
    for cycle in nx.simple_cycles(sub):
        lines.append("  " + " -> ".join([*cycle, cycle[0]]))
        if len(lines) >= limit:
            lines.append("  ...")
            break
    return lines


def test_parser_sees_the_package():
    assert len(MODULES) > 50
    assert "ldpgraph.protocols" in MODULES and MODULES["ldpgraph.protocols"][1]
    graph = import_graph()
    # spot checks: a relative sibling import, a relative `from . import submodule`
    assert graph.has_edge("ldpgraph", "ldpgraph.protocols")
    assert graph.has_edge("ldpgraph.protocols.triangles.kernels", "ldpgraph.mechanisms")


def test_import_graph_has_no_cycles():
    graph = import_graph()
    self_loops = sorted(m for m in graph if graph.has_edge(m, m))
    components = sorted(
        (sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1), key=lambda c: c[0]
    )
    message = []
    if self_loops:
        message.append(f"modules importing themselves: {self_loops}")
    for component in components:
        message.append(f"import cycle among {len(component)} modules: {', '.join(component)}")
        message.extend(_describe_cycles(graph, set(component)))
        for a in component:
            for target, how, line in import_edges(a):
                if target in component and target != a:
                    message.append(f"    {a}:{line} imports {how}")
    assert not message, "\n" + "\n".join(message)


def test_no_module_imports_its_own_package_init():
    """A module imports what it needs from the sibling module that defines it, never through the
    ``__init__`` of a package that contains it (which would run or half-see that package)."""
    bad = []
    for module, imports in IMPORTS.items():
        for target, name, line in imports:
            if name is None or not MODULES[target][1]:
                continue  # a module imported as a whole, or a name from a plain module
            if module.startswith(target + "."):
                bad.append(f"{module}:{line} imports {name} from its own package {target}")
    assert not bad, "\n" + "\n".join(bad)


def _private_scope(target: str, name: str | None) -> list[tuple[str, str]]:
    """(private thing, package it belongs to) for each private part of an import."""
    parts = target.split(".")
    scopes = []
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            scopes.append((".".join(parts[: i + 1]), ".".join(parts[:i])))
    if name is not None and name.startswith("_") and not name.startswith("__"):
        owner = target if MODULES[target][1] else target.rsplit(".", 1)[0]
        scopes.append((f"{target}.{name}", owner))
    return scopes


def _aliased_private_reads(module: str, source: str | None = None) -> set[tuple[str, str]]:
    """(module, private dotted name) for each ``alias._name`` read in ``module``, where ``alias`` is a
    module of ldpgraph imported as a whole (``from ..estimators import entropies as _en`` then
    ``_en._power``): a private name read through a module alias. ``source``: the module's text
    (default: its file)."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source, filename=str(path))
    aliases: dict[str, str] = {}
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in MODULES:
                    aliases[alias.asname] = alias.name
            continue
        source = _resolve_from(module, is_package, node)
        for alias in node.names:
            if f"{source}.{alias.name}" in MODULES:
                aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            out.add((module, f"{aliases[node.value.id]}.{node.attr}"))
    return out


def private_cross_imports() -> set[tuple[str, str]]:
    """(importing module, private dotted name) for each private name imported, or read through a
    module alias, from outside the package that owns it."""
    found = set()
    for module, imports in IMPORTS.items():
        for target, name, _line in imports:
            for private, owner in _private_scope(target, name):
                if not (module == owner or module.startswith(owner + ".")):
                    found.add((module, private))
        for _, private in _aliased_private_reads(module):
            target, _, name = private.rpartition(".")
            for dotted, owner in _private_scope(target, name):
                if not (module == owner or module.startswith(owner + ".")):
                    found.add((module, dotted))
    return found


def test_a_private_name_read_through_a_module_alias_is_seen():
    """``from ..estimators import entropies as _en`` then ``_en._power(...)`` in a protocol (what
    the curator did before issue 33): the read of ``_power`` is seen, as an import of it would be;
    a public name is not."""
    text = "from ..estimators import entropies as _en\nx = _en._power(1) + _en.entropy(2)\n"
    found = _aliased_private_reads("ldpgraph.protocols.curator", text)
    assert found == {("ldpgraph.protocols.curator", "ldpgraph.estimators.entropies._power")}
    assert _private_scope("ldpgraph.estimators.entropies", "_power") == [
        ("ldpgraph.estimators.entropies._power", "ldpgraph.estimators")]


# Private names still imported from outside the package that owns them, as (importing module,
# dotted private name), e.g. ("ldpgraph.cli", "ldpgraph.experiments.runner._origin"). Each entry
# is debt (give the name a public one, or move the code that needs it) and is checked exactly by
# the test below. Empty since issue 22: the 11 found then (baselines and protocols importing
# private helpers of estimators and mechanisms, the CLI importing four of experiments.runner) were
# given public names.
PRIVATE_CROSS_IMPORTS: set[tuple[str, str]] = set()


def test_private_names_stay_in_their_subpackage():
    found = private_cross_imports()
    new = sorted(found - PRIVATE_CROSS_IMPORTS)
    gone = sorted(PRIVATE_CROSS_IMPORTS - found)
    message = [f"new private cross-import: {m} imports {n}" for m, n in new]
    message += [f"fixed, remove from PRIVATE_CROSS_IMPORTS: ({m!r}, {n!r})" for m, n in gone]
    assert not message, f"\n{len(found)} private cross-imports\n" + "\n".join(message)


def test_private_rule_on_examples():
    assert _private_scope("ldpgraph._validation", "check") == [("ldpgraph._validation", "ldpgraph")]
    assert _private_scope("ldpgraph.protocols.triangles.kernels", "_x") == [
        ("ldpgraph.protocols.triangles.kernels._x", "ldpgraph.protocols.triangles")
    ]
    assert _private_scope("ldpgraph.datasets", "_open_binary") == [
        ("ldpgraph.datasets._open_binary", "ldpgraph.datasets")
    ]


def test_edge_rules_on_examples():
    # relative imports, from a module and from a package __init__
    node = ast.parse("from ..graph import core").body[0]
    assert _resolve_from("ldpgraph.protocols.triangles.kernels", False, node) == "ldpgraph.protocols.graph"
    node = ast.parse("from ...graph import core").body[0]
    assert _resolve_from("ldpgraph.protocols.triangles.kernels", False, node) == "ldpgraph.graph"
    node = ast.parse("from .curator import Estimate").body[0]
    assert _resolve_from("ldpgraph.protocols", True, node) == "ldpgraph.protocols.curator"
    # the package __init__ files an import runs: not those containing the importer
    assert _packages_run("ldpgraph.notes", "ldpgraph.experiments.runner") == ["ldpgraph.experiments"]
    assert _packages_run("ldpgraph.experiments.single", "ldpgraph.experiments.runner") == []
    assert _packages_run("ldpgraph.protocols.curator", "ldpgraph.estimators.polynomials") == [
        "ldpgraph.estimators"
    ]


# ------------------------------------------------------------------ layers (issue 33)

#: the layers ``ldpgraph.protocols`` may not import from (anywhere: module level or inside a
#: function): a protocol encodes and decodes bytes, ``run`` does the files, ``experiments`` and
#: ``cli`` sit above both
ABOVE_PROTOCOLS = ("ldpgraph.run", "ldpgraph.experiments", "ldpgraph.cli")


def _subpackage(module: str) -> str:
    """The top-level subpackage (or top-level module) of ``ldpgraph`` that holds ``module``."""
    return ".".join(module.split(".")[:2])


def test_protocols_import_nothing_from_run_experiments_or_cli():
    bad = [f"{module}:{line} imports {how}"
           for module in MODULES if _subpackage(module) == "ldpgraph.protocols"
           for target, how, line in import_edges(module)
           if any(target == layer or target.startswith(layer + ".") for layer in ABOVE_PROTOCOLS)]
    assert not bad, "\n" + "\n".join(bad)


def subpackage_graph() -> tuple[nx.DiGraph, dict[tuple[str, str], list[str]]]:
    """The import graph with each subpackage (and top-level module) of ``ldpgraph`` as one node, and
    for each edge the imports that make it."""
    graph, why = nx.DiGraph(), {}
    for module in MODULES:
        for target, how, line in import_edges(module):
            a, b = _subpackage(module), _subpackage(target)
            if a != b and PACKAGE not in (a, b):  # (the package __init__ imports every subpackage)
                graph.add_edge(a, b)
                why.setdefault((a, b), []).append(f"{module}:{line} imports {how}")
    return graph, why


# Cycles between subpackages, as sorted tuples of the subpackages of each strongly connected
# component, checked exactly: none. (run <-> protocols, through the broadcast file readers, and
# core <-> protocols, through the registry's scan of ldpgraph.protocols, were removed by issue 33:
# a protocol encodes and decodes bytes, and the registry lives in ldpgraph.protocols.)
SUBPACKAGE_CYCLES: set[tuple[str, ...]] = set()


def test_subpackage_cycles_are_the_known_ones():
    graph, why = subpackage_graph()
    found = {tuple(sorted(c)) for c in nx.strongly_connected_components(graph) if len(c) > 1}
    message = []
    for component in sorted(found - SUBPACKAGE_CYCLES):
        message.append(f"new import cycle between subpackages: {' <-> '.join(component)}")
        for a in component:
            for b in component:
                message.extend(f"    {w}" for w in why.get((a, b), [])[:3])
    message += [f"fixed, remove from SUBPACKAGE_CYCLES: {c}" for c in sorted(SUBPACKAGE_CYCLES - found)]
    assert not message, "\n" + "\n".join(message)


def test_layer_rules_see_an_import_inside_a_function():
    node = ast.parse("def f():\n    from ..run.files import write_broadcast\n")
    found = list(_import_nodes(node))
    assert len(found) == 1 and _resolve_from("ldpgraph.protocols.x", False, found[0]) == "ldpgraph.run.files"
    assert _subpackage("ldpgraph.run.files") == "ldpgraph.run" and _subpackage("ldpgraph.notes") == "ldpgraph.notes"


#: calls that open, read or write a file
FILE_CALLS = {"open", "atomic_write", "read_bytes", "write_bytes", "read_text", "write_text", "fromfile", "tofile"}


def test_protocols_open_no_file():
    """A protocol encodes and decodes bytes; ``ldpgraph.run`` opens, writes atomically and reads the
    files (broadcasts, report rows)."""
    bad = []
    for module, (path, _) in MODULES.items():
        if _subpackage(module) != "ldpgraph.protocols":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in FILE_CALLS:
                    bad.append(f"{module}:{node.lineno} calls {name}")
    assert not bad, "\n" + "\n".join(bad)
