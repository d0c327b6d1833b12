"""Where the Java PSL engine is, for the side-by-side checks and benchmarks (never needed to run xcore).

PSL's runtime jar ships inside the `pslpython` package (the optional `bench` extra); it runs on
Java 17. Found without importing `pslpython`.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path


def psl_jar() -> Path | None:
    """PSL's runtime jar bundled in `pslpython`, or None when the package or the jar is absent."""
    spec = importlib.util.find_spec("pslpython")
    if spec is None or not spec.origin:
        return None
    jar = Path(spec.origin).resolve().parent / "psl-runtime.jar"
    return jar if jar.exists() else None


def java_psl_jar() -> Path | None:
    """The jar when Java is on the PATH too (what a comparison with the Java engine needs), else None."""
    jar = psl_jar()
    return jar if jar is not None and shutil.which("java") else None
