"""Package boundaries of xcore, checked by parsing every module's imports with `ast`.

- a method package (every package the registry names) never imports another method package
  (shared code lives in xcore.data / xcore.logic / xcore.explain / xcore.runtime, and the PSL engine
  xcore.psl, which method packages may import like xcore.logic);
- the PSL engine (xcore.psl) imports no method package: ESMS (xcore.esms) is built on it, never the
  other way round;
- no module imports an xcore module by a string (`importlib.import_module("xcore...")`,
  `__import__`), which hides an edge from readers and tools; the registry's "module:SPEC" entries are
  the one sanctioned string import (a plugin table read on first use: method packages import the
  contract, and the contract finds them only through it);
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


def _registry_entries() -> dict[str, str]:
    """Registry key -> "module:attribute", read from the registry module's source (no import)."""
    tree = ast.parse((PACKAGE / "methods" / "registry.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_ENTRIES":
            return ast.literal_eval(node.value)
    raise AssertionError("xcore/methods/registry.py has no _ENTRIES mapping")


REGISTRY_ENTRIES = _registry_entries()
METHOD_PACKAGES = tuple(sorted({path.split(":")[0].rpartition(".")[0] for path in REGISTRY_ENTRIES.values()}))
ENGINES = ("xcore.psl",)
"""Shared engine layers that method packages may import (and that import no method package)."""
STRING_IMPORTERS = {"xcore.lazy", "xcore.methods.registry"}
"""Modules whose job is importing by name (the lazy attribute loader and the method registry)."""


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


IMPORT_FUNCTIONS = {"import_module", "__import__", "import_optional"}
"""Functions that import a module named by a string (`import_optional` is xcore's gateway to heavy or optional
third-party packages, `xcore.optional_deps`: it must never be given an xcore module)."""


def _string_imports(module: str) -> list[str]:
    """xcore modules that `module` imports by a literal string (importlib.import_module, __import__,
    the optional-dependency gateway)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        arg = node.args[0].value
        if name in IMPORT_FUNCTIONS and isinstance(arg, str) and arg.split(".")[0] == "xcore":
            out.append(arg)
    return out


def _method_package(module: str) -> str | None:
    return next((p for p in METHOD_PACKAGES if module == p or module.startswith(p + ".")), None)


def test_modules_found():
    assert {"xcore.psl.model", "xcore.esms.search", "xcore.mln.model", "xcore.plkb.kb", "xcore.runtime"} <= set(MODULES)
    assert set(METHOD_PACKAGES) == {"xcore.esms", "xcore.mln", "xcore.plkb", "xcore.drm", "xcore.nlil"}
    assert not set(ENGINES) & set(METHOD_PACKAGES)


def test_no_xcore_module_is_imported_by_a_string():
    bad = {m: _string_imports(m) for m in MODULES if m not in STRING_IMPORTERS}
    bad = {m: names for m, names in bad.items() if names}
    assert not bad, f"import these statically (or through the registry), so the import graph shows them: {bad}"


def test_the_gateway_is_used_and_would_be_flagged_with_an_xcore_name(tmp_path):
    """`import_optional` calls are seen (so an xcore name given to it would fail the test above)."""
    uses = [m for m in MODULES if "import_optional(" in MODULES[m].read_text(encoding="utf-8")]
    assert len(uses) >= 10
    tree = ast.parse('import_optional("xcore.psl.model")\nimport_optional("sklearn.cluster")\n')
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    flagged = [c.args[0].value for c in calls if c.func.id in IMPORT_FUNCTIONS and c.args[0].value.startswith("xcore")]
    assert flagged == ["xcore.psl.model"]


def test_string_imports_are_found():
    assert _string_imports("xcore.methods.registry") == [] and REGISTRY_ENTRIES["esms"] == "xcore.esms.method:SPEC"
    assert set(METHOD_PACKAGES) == {path.split(":")[0].rpartition(".")[0] for path in REGISTRY_ENTRIES.values()}


def test_names_line_up():
    """Registry key = package = page file = url path = test folder (issue 33 item 2)."""
    import json

    catalog = json.loads((PACKAGE / "methods" / "catalog.json").read_text(encoding="utf-8"))
    pages = {key: info["page"] for key, info in catalog.items()}
    for key, entry in REGISTRY_ENTRIES.items():
        assert entry == f"xcore.{key}.method:SPEC", entry
        assert pages[key] == f"app_pages/{key}.py" and (ROOT / pages[key]).exists(), pages[key]
        assert (ROOT / "tests" / "methods" / key).is_dir(), key


def test_no_method_package_imports_another():
    bad = sorted({(m, t) for m, imps in IMPORTS.items() for t, _ in imps
                  if _method_package(m) and _method_package(t) and _method_package(m) != _method_package(t)})
    assert not bad, f"method packages import each other (move the shared code to xcore.data/logic): {bad}"


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _string_constants(module: str) -> set[str]:
    """Every string literal of `module` (the lazy-export tables name modules this way)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_engines_import_no_method_package():
    bad = sorted({(m, t) for m, imps in IMPORTS.items() for t, _ in imps
                  if any(_in(m, e) for e in ENGINES) and _method_package(t)})
    assert not bad, f"the PSL engine imports a method package (move the code to the method): {bad}"


def test_psl_engine_never_imports_esms():
    """Neither by an import statement nor by a lazy name (`xcore.lazy` tables are strings)."""
    engine = [m for m in MODULES if _in(m, "xcore.psl")]
    assert len(engine) >= 10
    bad = [(m, t) for m in engine for t, _ in IMPORTS[m] if _in(t, "xcore.esms")]
    bad += [(m, c) for m in engine for c in _string_constants(m) if _in(c.split(":")[0], "xcore.esms")]
    assert not bad, f"xcore.psl must not import xcore.esms: {bad}"
    assert any(_in(t, "xcore.psl") for m in MODULES if _in(m, "xcore.esms") for t, _ in IMPORTS[m])
    assert "xcore.psl.model" in _string_constants("xcore.psl")  # the lazy table is seen


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
    code = ("import sys\nimport xcore.data, xcore.logic, xcore.explain, xcore.viz, xcore.psl, xcore.esms, xcore.runtime\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'streamlit'))")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


MOVED_TO_ESMS = ("settings", "estimator", "runs", "method", "search", "templates", "candidate_scoring", "sweep",
                 "validation_split", "split_sizes", "verify", "stability", "data_reading", "rule_preparation",
                 "explainers", "explainers.ground_rules")
"""ESMS's modules, moved from the PSL engine's package to xcore.esms (issue 33: names line up)."""
SHIMS_GONE = ("xcore.mln.citation", "xcore.psl.cora", "xcore.psl.workflow", "xcore.plkb.synthetic",
              "xcore.plkb.datasets", "xcore.plkb.workflow", *(f"xcore.psl.{m}" for m in MOVED_TO_ESMS))
"""Modules that only re-exported moved names for old import paths (issue 33: shims go)."""


def test_old_shim_modules_are_gone():
    import importlib

    for old in SHIMS_GONE:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    for new in MOVED_TO_ESMS:
        assert f"xcore.esms.{new}" in MODULES


RUNTIME_GRAPH = r"""
import builtins, importlib, json, pkgutil, sys
import xcore

edges = set()
real_import = builtins.__import__


def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    module = real_import(name, globals, locals, fromlist, level)
    importer = (globals or {}).get("__name__", "")
    target = module.__name__ if level == 0 and not fromlist else getattr(module, "__name__", name)
    if importer.startswith("xcore"):
        subs = [f"{target}.{f}" for f in (fromlist or ()) if f"{target}.{f}" in sys.modules]
        names = [f for f in (fromlist or ()) if f"{target}.{f}" not in sys.modules]
        for t in subs + ([target] if names or not fromlist else []):
            # a submodule reaching its own package is Python's normal parent-first import
            if t.startswith("xcore") and t != importer and not importer.startswith(t + "."):
                edges.add((importer, t))
    return module


builtins.__import__ = recording_import
failed = {}
for info in pkgutil.walk_packages(xcore.__path__, "xcore."):
    if info.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(info.name)
    except Exception as e:  # optional extras (dask, pslpython) may be absent
        failed[info.name] = type(e).__name__
print(json.dumps({"edges": sorted(edges), "failed": failed, "loaded": sorted(m for m in sys.modules if m.startswith("xcore"))}))
"""


@pytest.mark.slow
def test_importing_every_module_in_a_fresh_process_makes_no_cycle():
    """What runs at import time (module bodies, and any import they trigger) forms no cycle."""
    import json

    res = subprocess.run([sys.executable, "-c", RUNTIME_GRAPH], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert len(out["loaded"]) >= 0.9 * len(MODULES), out["failed"]
    graph: dict[str, set[str]] = {}
    for a, b in out["edges"]:
        graph.setdefault(a, set()).add(b)
    assert any(a.startswith("xcore.psl") for a, _ in out["edges"])
    assert _cycles(graph) == [], "a cycle among modules at import time"
