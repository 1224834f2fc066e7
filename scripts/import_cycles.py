"""No import cycle in src/ or perf/: `python scripts/import_cycles.py` prints each one and exits 1.

src/ is read with grimp (installed with import-linter), every import counted: TYPE_CHECKING ones
and those inside functions too. perf/'s scripts import each other as `perf.NAME` (perf/ is a package
run with `python -m perf.NAME`), read with `ast`. A cycle is a strongly connected component of
more than one module.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping, Set
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cycles(graph: Mapping[str, Set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, edges = work[-1]
            for dep in edges:
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(sorted(graph.get(dep, ())))))
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            else:
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


def src_graph() -> dict[str, set[str]]:
    import grimp

    graph = grimp.build_graph("benchwarmers", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def sibling(module: str) -> str:
    """The perf/ script an import names: `perf.fleet` (perf/ is a package run with -m) is `fleet`."""
    return module.removeprefix("perf.").split(".")[0]


def perf_graph(folder: Path = ROOT / "perf") -> dict[str, set[str]]:
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps |= {sibling(alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                deps.add(sibling(node.module))
        graph[path.stem] = (deps & names) - {path.stem}
    return graph


def main() -> int:
    sys.path.insert(0, str(ROOT / "src"))
    failed = False
    for where, graph in (("src", src_graph()), ("perf", perf_graph())):
        found = cycles(graph)
        for component in found:
            members = set(component)
            print(f"{where}: a cycle of {len(component)} modules:")
            for module in component:
                print(f"  {module} -> {', '.join(sorted(graph[module] & members))}")
        print(f"{where}: {len(found)} cycles")
        failed = failed or bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
