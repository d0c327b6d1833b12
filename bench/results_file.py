"""Writing a benchmark's section into bench/RESULTS.md (replace it if present, else append)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path


def replace_section(path: Path, heading: str, section: str) -> None:
    """Put `section` (starting with ``## {heading}``) in place of that section of `path`, or append it."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip() + "\n\n", text)
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def child_json(proc: "subprocess.CompletedProcess[str]") -> dict:
    """The JSON a benchmark's child process printed last, else {"error": its last stderr line} (fresh-process
    benchmarks report one result per child)."""
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (proc.stderr or "no output").strip().splitlines()[-1][:200]}
