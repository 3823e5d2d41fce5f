"""The client's modules layer cleanly: each imports only from its own layer or
the layers below (function-level imports count too), the import graph has no
cycle, and no module touches another module's private members.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "kiln"

#: Every module of the package, by layer (lowest first). A new module must be
#: placed here, which is the point: its place is a decision.
LAYERS: list[tuple[str, set[str]]] = [
    ("wire", {"version", "error_hints", "errors", "units", "text_table", "credentials", "_rpc",
              "tensors", "options",
              "blobs", "cache", "memfd_pool", "exchange", "call_plan", "inline_request",
              "local_execute", "execution",
              "counters"}),
    ("export and serialisation", {"rng", "graph", "symbolic_sizes", "linalg_decompositions",
                                  "export", "reference", "op_report",
                                  "placement", "resampling"}),
    ("compiled model", {"compiled", "session"}),
    ("features", {"partition", "verify", "introspect", "torchscript", "bundle",
                  "lazy_graph", "lazy_tensor", "capture"}),
    ("api", {"client", "backend", "dynamo", "testing", "device", "__init__"}),
    ("cli", {"cli", "cli_format", "cli_progress", "cli_commands"}),
]
LAYER_OF = {m: i for i, (_, mods) in enumerate(LAYERS) for m in mods}


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(PACKAGE.glob("*.py"))}


def _kiln_imports(tree: ast.Module) -> set[str]:
    """The kiln modules a module imports, anywhere in it (not kiln.v1)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "kiln":
                found.update(a.name for a in node.names)
            elif node.module.startswith("kiln."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kiln."):
                    found.add(a.name.split(".")[1])
    return {m for m in found if m != "v1"}


def test_every_module_has_a_layer():
    assert sorted(set(_modules()) - set(LAYER_OF)) == []


@pytest.mark.parametrize("module", sorted(_modules()))
def test_imports_point_down(module):
    tree = _modules()[module]
    # The package's __init__ re-exports the API: it may import any layer.
    if module == "__init__":
        return
    upward = sorted(m for m in _kiln_imports(tree)
                    if m in LAYER_OF and LAYER_OF[m] > LAYER_OF[module])
    assert upward == [], (f"kiln.{module} ({LAYERS[LAYER_OF[module]][0]}) imports "
                          f"{', '.join(f'kiln.{m} ({LAYERS[LAYER_OF[m]][0]})' for m in upward)}")


def test_no_import_cycles():
    graph = {m: _kiln_imports(t) - {"__init__"} for m, t in _modules().items() if m != "__init__"}
    graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            cycle = path[path.index(m):] + [m]
            pytest.fail("import cycle: " + " -> ".join(f"kiln.{c}" for c in cycle))
        if m in done:
            return
        for d in sorted(graph[m]):
            visit(d, path + [m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])


def _private_members(tree: ast.Module) -> set[str]:
    """Private names a module defines on its objects: `self._x = ...`,
    `def _x`, and class-level `_x = ...`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_module_reaches_into_anothers_private_members():
    modules = _modules()
    owned = {m: _private_members(t) for m, t in modules.items()}
    offences = []
    for m, tree in modules.items():
        foreign = set().union(*(o for other, o in owned.items() if other != m)) - owned[m]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in foreign and \
                    not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                offences.append(f"kiln.{m}:{node.lineno} .{node.attr}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("kiln.") and node.module != "kiln.v1" and \
                    not node.module.startswith("kiln.v1."):
                offences.extend(f"kiln.{m}:{node.lineno} imports {node.module}.{a.name}"
                                for a in node.names
                                if a.name.startswith("_") and not a.name.startswith("__")
                                and node.module != "kiln._rpc")
    assert offences == []
