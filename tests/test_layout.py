"""The layout is the architecture: `dialect <- compiler <- python/ember <- tools`, the runtime
knowing neither compiler nor tracer, and no import cycles. Read from the sources (every
import, also those inside functions), so nothing needs to be imported to check it."""

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"ember.dialect": "dialect", "ember.compiler": "compiler", "ember.runtime": "runtime",
          "ember": "python/ember", "ember.tools": "tools"}
# What each layer may import (besides itself).
ALLOWED = {
    "ember.dialect": set(),
    "ember.runtime": {"ember.dialect"},
    "ember.compiler": {"ember.dialect"},
    "ember": {"ember.dialect", "ember.compiler", "ember.runtime"},
    "ember.tools": {"ember.dialect", "ember.compiler", "ember.runtime", "ember"},
}


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg, folder in LAYERS.items():
        for f in (ROOT / folder).rglob("*.py"):
            parts = [p for p in f.relative_to(ROOT / folder).with_suffix("").parts
                     if p != "__init__"]
            mods[".".join([pkg, *parts])] = f
    return mods


def _graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the Ember modules it imports. `from pkg import submodule` depends on the
    submodule, not on the package's __init__ (a parent is always imported first)."""
    graph = defaultdict(set)
    for name, path in mods.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    pkg = base
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    mod = f"{pkg}.{mod}" if mod else pkg
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod
                           for a in node.names]
            else:
                continue
            for t in targets:
                while t not in mods and "." in t:
                    t = t.rpartition(".")[0]
                if t in mods and t != name:
                    graph[name].add(t)
    return graph


def _layer(module: str) -> str:
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def _cycles(graph: dict[str, set[str]], nodes) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def test_layers_import_only_what_is_below_them():
    mods = _modules()
    graph = _graph(mods)
    wrong = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs
                   if _layer(b) != _layer(a) and _layer(b) not in ALLOWED[_layer(a)])
    assert not wrong, wrong


def test_no_import_cycles():
    mods = _modules()
    found = _cycles(_graph(mods), sorted(mods))
    assert not found, found


def test_the_graph_sees_imports_inside_functions():
    """The checker must not be blind to the imports that used to hide cycles: these two are
    made inside a function only (aot.abi imports the compiler when it compiles; loading a
    module needs none), one absolute, one relative."""
    mods = _modules()
    graph = _graph(mods)
    assert "ember.compiler.iree_driver" in graph["ember._src.aot"]
    assert "ember._src.dtypes" in graph["ember._src.host_eval"]
    for path in (mods["ember._src.aot"], mods["ember._src.host_eval"]):
        top = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ImportFrom)]
        assert not any(n.module in ("ember.compiler", "dtypes") for n in top), path
