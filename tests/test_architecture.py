"""Package boundaries of xcore, checked by parsing every module's imports with `ast`.

- a method package (psl, mln, plkb) never imports another method package (shared code lives in
  xcore.data / xcore.logic / xcore.explain / xcore.runtime);
- no module imports a ``_private`` name from another module;
- no import cycles among xcore modules (module-level and function-level imports alike: a lazy
  import only hides a cycle; ``if TYPE_CHECKING:`` imports are not run and are ignored);
- the compute packages import without Streamlit.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xcore"
METHOD_PACKAGES = ("xcore.psl", "xcore.mln", "xcore.plkb")


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the xcore package."""
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _owner(name: str) -> str:
    """The longest known module that `name` (a module or module.attribute) belongs to."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Every import statement that runs (skips ``if TYPE_CHECKING:`` bodies)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _imports(module: str) -> list[tuple[str, str]]:
    """(imported xcore module, imported name or '') pairs of `module`."""
    file = MODULES[module]
    tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    is_pkg = file.name == "__init__.py"
    out = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            out += [(_owner(a.name), "") for a in node.names if a.name.split(".")[0] == "xcore"]
            continue
        base = node.module or ""
        if node.level:
            parts = module.split(".") if is_pkg else module.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        if base.split(".")[0] != "xcore":
            continue
        for a in node.names:
            full = f"{base}.{a.name}"
            out.append((full if full in MODULES else _owner(base), a.name))
    return [(m, n) for m, n in out if m and m != module]


IMPORTS = {m: _imports(m) for m in MODULES}


def _method_package(module: str) -> str | None:
    return next((p for p in METHOD_PACKAGES if module == p or module.startswith(p + ".")), None)


def test_modules_found():
    assert {"xcore.psl.model", "xcore.mln.model", "xcore.plkb.kb", "xcore.runtime"} <= set(MODULES)


def test_no_method_package_imports_another():
    bad = sorted({(m, t) for m, imps in IMPORTS.items() for t, _ in imps
                  if _method_package(m) and _method_package(t) and _method_package(m) != _method_package(t)})
    assert not bad, f"method packages import each other (move the shared code to xcore.data/logic): {bad}"


def test_no_private_name_imported_across_modules():
    bad = sorted({(m, t, n) for m, imps in IMPORTS.items() for t, n in imps
                  if n.startswith("_") and not n.startswith("__")})
    assert not bad, f"private names imported from another module (make them public or move them): {bad}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    graph = {m: {t for t, _ in imps} for m, imps in IMPORTS.items()}
    assert _cycles(graph) == []


@pytest.mark.slow
def test_compute_packages_import_without_streamlit():
    code = ("import sys\nimport xcore.data, xcore.logic, xcore.explain, xcore.viz, xcore.psl, xcore.runtime\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'streamlit'))")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


MOVED = {
    "xcore.mln.reviews": ("xcore.data.generators.reviews",
                          ["generate_reviews", "ReviewAnnotation", "ReviewData", "load_review_sample",
                           "load_review_annotation", "annotation_from_json", "review_schema", "VOCABULARY"]),
    "xcore.mln.synthetic": ("xcore.data.generators.friends_smokers", ["friends_smokers_dataset"]),
    "xcore.mln.citation": ("xcore.data.benchmarks.citation", ["citation_dataset", "load_planetoid_arrays",
                                                              "default_root", "CitationData"]),
    "xcore.psl.cora": ("xcore.data.benchmarks.cora", ["load_cora_dataset", "load_cora_arrays", "load_planetoid",
                                                      "CHECKED_FILES"]),
    "xcore.plkb.synthetic": ("xcore.data.generators.strings", ["make_strings", "SyntheticStrings", "PAPER_SETS"]),
    "xcore.plkb.datasets": ("xcore.data.generators.titanic", ["make_titanic_like", "TITANIC_COLUMNS"]),
    "xcore.psl.explain": ("xcore.logic.atom_text", ["render_atoms", "ground_rule_texts"]),
}


def test_old_module_paths_still_export_the_moved_names():
    import importlib

    for old, (new, names) in MOVED.items():
        a, b = importlib.import_module(old), importlib.import_module(new)
        for name in names:
            assert getattr(a, name) is getattr(b, name), f"{old}.{name} is not {new}.{name}"
