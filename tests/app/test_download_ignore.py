"""Every download button in the page code keeps its file on the first click.

A download button whose data is a callable (deferred: built on click) registered its file under a
new id on each rerun; with the default ``on_click="rerun"`` the click's own rerun dropped the id the
browser was about to fetch (server log: ``MediaFileStorageError: Deferred file ... not found``) and
nothing arrived. Downloads never need a rerun: each passes ``on_click="ignore"``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE_DIRS = ("pages", "app_pages", "ui")


def download_calls() -> list[tuple[str, int, ast.Call]]:
    out = []
    files = [ROOT / "app.py", ROOT / "study_app.py"] + [p for d in PAGE_DIRS for p in (ROOT / d).glob("**/*.py")]
    for path in files:
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) \
                    == "download_button":
                out.append((str(path.relative_to(ROOT)), node.lineno, node))
    return out


def test_every_download_button_ignores_the_rerun():
    calls = download_calls()
    assert len(calls) >= 10  # the pages have many downloads: the scan found them
    bad = [f"{f}:{line}" for f, line, node in calls
           if not any(k.arg == "on_click" and isinstance(k.value, ast.Constant) and k.value.value == "ignore"
                      for k in node.keywords)]
    assert not bad, f"download buttons that rerun on click (a deferred file is dropped): {bad}"
