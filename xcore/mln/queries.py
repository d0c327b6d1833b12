"""Tuffy/Alchemy-style query selections (``--set query=advisedBy(x, y)``): which query atoms a
Markov-logic run explains.

A query is a predicate name (``advisedBy``) or one or more atom patterns of one predicate
(``advisedBy(Person380, y), advisedBy(x, Person79)``). An argument that names a constant of the data
is fixed; any other argument is a variable (Tuffy's convention of lower-case variables cannot be
relied on: pracmln's databases use lower-case constants such as ``w1``). A repeated variable must
bind the same constant (``advisedBy(x, x)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from xcore.errors import ConfigError

_NAME = r"[A-Za-z_][A-Za-z0-9_\-']*"
_ARG = r"[^,()\s]+"
_PATTERN = re.compile(rf"\s*({_NAME})\s*(?:\(\s*({_ARG}(?:\s*,\s*{_ARG})*)\s*\))?\s*(,|$)")


@dataclass(frozen=True)
class QueryPattern:
    """One atom pattern: predicate and arguments (None for a bare predicate name: every atom)."""

    predicate: str
    args: tuple[str, ...] | None = None


def parse_query(text: str) -> list[QueryPattern]:
    """The patterns of a query text; `ConfigError` (field ``query``) naming the column of bad syntax or
    a second predicate."""
    out: list[QueryPattern] = []
    pos, text = 0, text.strip()
    while pos < len(text):
        m = _PATTERN.match(text, pos)
        if m is None or m.end() == pos:
            raise ConfigError(f"expected an atom such as advisedBy(x, y) at column {pos + 1} of {text!r}",
                              field="query")
        args = tuple(a.strip() for a in m.group(2).split(",")) if m.group(2) else None
        out.append(QueryPattern(m.group(1), args))
        pos = m.end()
    if not out:
        raise ConfigError("the query is empty: name a predicate or atoms such as advisedBy(x, y)", field="query")
    preds = sorted({p.predicate for p in out})
    if len(preds) > 1:
        raise ConfigError(f"a query selects atoms of one predicate, got {', '.join(preds)}", field="query")
    return out


def matching_atoms(atoms: pd.DataFrame, patterns: list[QueryPattern], constants: set[str]) -> np.ndarray:
    """Bool mask over `atoms` (columns ``predicate`` and ``a0..a{k-1}``, constant names) of the atoms
    some pattern matches (vectorised per pattern and argument position)."""
    hit = np.zeros(len(atoms), dtype=bool)
    pred = atoms["predicate"].to_numpy()
    for p in patterns:  # one pass per pattern (a handful)
        ok = pred == p.predicate
        if p.args is not None:
            width = sum(1 for c in atoms.columns if re.fullmatch(r"a\d+", str(c)))
            if len(p.args) > width:
                continue
            first: dict[str, int] = {}
            for i, a in enumerate(p.args):
                col = atoms[f"a{i}"].astype(str).to_numpy()
                if a in constants:
                    ok &= col == a
                elif a in first:
                    ok &= col == atoms[f"a{first[a]}"].astype(str).to_numpy()
                else:
                    first[a] = i
        hit |= ok
    return hit


def split_atom_texts(texts: list[str] | np.ndarray) -> pd.DataFrame:
    """``P(a, b)`` texts as a frame of predicate and argument columns a0.. (vectorised string ops)."""
    s = pd.Series(np.asarray(texts, dtype=object), dtype=object).astype(str)
    parts = s.str.extract(r"^\s*([^(\s]+)\s*(?:\((.*)\))?\s*$")
    frame = pd.DataFrame({"predicate": parts[0].fillna("")})
    args = parts[1].fillna("").str.split(",", expand=True)
    for i in range(args.shape[1]):
        frame[f"a{i}"] = args[i].fillna("").str.strip()
    return frame
