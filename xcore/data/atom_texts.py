"""Canonical text ``p(a, b)`` of many ground atoms at once, from their argument columns (vectorised).

Used by the held-out splits (`xcore.data.splits`) and the explanation texts (`xcore.logic.atom_text`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def canonical_atoms(name: str, args: list[np.ndarray], n: int) -> np.ndarray:
    """Canonical text ``name(a, b)`` of `n` ground atoms from their argument columns (vectorised)."""
    s = pd.Series(np.full(n, f"{name}(", dtype=object), dtype=object)
    for i, a in enumerate(args):
        s = s + (", " if i else "") + pd.Series(a, dtype=object).astype(str)
    return (s + ")").to_numpy(dtype=object)
