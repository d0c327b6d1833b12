"""Writing a benchmark's section into bench/RESULTS.md (replace it if present, else append)."""

from __future__ import annotations

import re
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
