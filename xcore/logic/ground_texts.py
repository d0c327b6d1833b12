"""Readable texts of ground rules (``a(x) & b(x, y) -> c(y)``, ``K(a, b) - K(b, a) = 0.0``, summations
expanded), built column-wise with pandas string operations: no Python loop per ground rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xcore.logic.ast import ArithmeticRule, Constant
from xcore.logic.atoms import AtomStore

if TYPE_CHECKING:
    from xcore.logic.grounding import GroundRules


def rule_texts(g: "GroundRules", store: AtomStore, rows: np.ndarray | None = None) -> np.ndarray:
    """Text of the ground rules of `g` (all, or the given rows)."""
    rows = np.arange(g.n) if rows is None else np.asarray(rows, dtype=np.int64)
    consts = store.constants
    var_pos = {v: k for k, v in enumerate(g.rule.variables)}
    if g.flat is not None:
        return _summation_texts(g, store, rows)
    if isinstance(g.rule, ArithmeticRule):
        return _arithmetic_texts(g, consts, var_pos, rows)

    def literal_text(lit) -> pd.Series:
        text = _atom_texts(lit.atom, consts, g.bindings, var_pos, rows)
        return ("~" + text) if lit.negated else text

    body = [literal_text(l) for l in g.rule.body]
    head = [literal_text(l) for l in g.rule.head]
    text = _join(head, " | ") if head else pd.Series(np.full(len(rows), "false", dtype=object))
    if body:
        text = _join(body, " & ") + " -> " + text
    return text.to_numpy(dtype=object)


def _atom_texts(atom, consts: np.ndarray, bindings: np.ndarray, var_pos: dict, rows: np.ndarray) -> pd.Series:
    """Ground texts ``pred(a, b)`` of one rule atom under the given groundings."""
    s = pd.Series(np.full(len(rows), atom.predicate + "("), dtype=object)
    for i, t in enumerate(atom.args):
        sep = ", " if i else ""
        if isinstance(t, Constant):
            s = s + (sep + t.value)
        else:
            s = s + sep + pd.Series(consts[bindings[rows, var_pos[t]]], index=s.index, dtype=object)
    return s + ")"


def _arithmetic_texts(g: "GroundRules", consts: np.ndarray, var_pos: dict, rows: np.ndarray) -> np.ndarray:
    """Ground texts of an arithmetic rule: ``K(a, b) - K(b, a) = 0.0``."""
    rule = g.rule
    text = pd.Series(np.full(len(rows), "", dtype=object))
    for j, (c, atom) in enumerate(rule.terms):
        coef = "" if abs(c) == 1.0 else f"{abs(c)!r} * "
        lead = ("-" if c < 0 else "") if j == 0 else (" - " if c < 0 else " + ")
        text = text + lead + coef + _atom_texts(atom, consts, g.bindings, var_pos, rows)
    return (text + f" {rule.relation} {-rule.constant + 0.0!r}").to_numpy(dtype=object)


def _summation_texts(g: "GroundRules", store: AtomStore, rows: np.ndarray) -> np.ndarray:
    """Ground texts of a summation rule: its expanded atoms with their coefficients."""
    f = g.flat
    pick = np.isin(f.row, rows)
    atoms = np.where(f.atom[pick] >= 0, 0, 1)
    texts = np.where(atoms == 0, store.atom_text(np.maximum(f.atom[pick], 0)).astype(object), "0")
    coef = f.coef[pick]
    entry = pd.Series([f"{float(c)!r} * {t}" if c != 1.0 else str(t) for c, t in zip(coef, texts)], dtype=object)
    joined = entry.groupby(f.row[pick]).agg(" + ".join)
    body = joined.reindex(rows).fillna("0").to_numpy(dtype=object)
    rhs = -f.constant[rows] + 0.0
    return np.array([f"{b} {g.rule.relation} {float(r)!r}" for b, r in zip(body, rhs)], dtype=object)


def _join(parts: list[pd.Series], sep: str) -> pd.Series:
    """Element-wise join of text columns."""
    out = parts[0]
    for p in parts[1:]:
        out = out + sep + p
    return out
