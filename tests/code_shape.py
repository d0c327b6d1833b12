"""Counts of the code-shape goals of issue 33 (files over 400 lines, functions over 60 lines,
function-level imports and whether each says why), per package: ``python tests/code_shape.py``."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("xcore", "app_pages", "ui")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def source_files() -> list[Path]:
    """Every Python file of the compute package and the pages."""
    return sorted(p for d in SOURCES for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)


def long_files() -> list[tuple[str, int]]:
    """(file, lines) of files over MAX_FILE_LINES lines."""
    out = []
    for p in source_files():
        n = len(p.read_text().splitlines())
        if n > MAX_FILE_LINES:
            out.append((str(p.relative_to(ROOT)), n))
    return out


def long_functions() -> list[tuple[str, str, int]]:
    """(file, function, lines) of functions over MAX_FUNCTION_LINES lines (docstring included)."""
    out = []
    for p in source_files():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out.append((str(p.relative_to(ROOT)), node.name, n))
    return out


def function_imports() -> list[tuple[str, int, bool]]:
    """(file, line, says why) of every import inside a function; it says why with a comment on its
    line or the line above."""
    out = []
    for p in source_files():
        lines = p.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and node is not fn:
                    here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
                    out.append((str(p.relative_to(ROOT)), node.lineno, "#" in here or above.strip().startswith("#")))
    return sorted(set(out))


def _package(path: str) -> str:
    parts = path.split("/")
    return "/".join(parts[:2]) if parts[0] == "xcore" and len(parts) > 2 else parts[0]


def main() -> None:
    files, funcs, imports = long_files(), long_functions(), function_imports()
    print(f"files over {MAX_FILE_LINES} lines: {len(files)}")
    for f, n in sorted(files, key=lambda t: -t[1]):
        print(f"  {n:5d}  {f}")
    print(f"functions over {MAX_FUNCTION_LINES} lines: {len(funcs)}")
    for f, name, n in sorted(funcs, key=lambda t: -t[2]):
        print(f"  {n:5d}  {f}:{name}")
    why = Counter(_package(f) for f, _, ok in imports if ok)
    bare = Counter(_package(f) for f, _, ok in imports if not ok)
    print(f"function-level imports: {len(imports)} ({sum(why.values())} say why)")
    for pkg in sorted(set(why) | set(bare)):
        print(f"  {pkg:20s} {why[pkg] + bare[pkg]:4d}  ({bare[pkg]} without a reason)")
    if "--list" in sys.argv:
        for f, line, ok in imports:
            print(f"  {f}:{line}{'' if ok else '  (no reason)'}")


if __name__ == "__main__":
    main()
