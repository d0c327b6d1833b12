"""Text of ground atoms and ground rules: canonical ``p(a, b)`` and natural language from templates.

Shared by every method package (PSL explanations, MLN formula importance), so it lives in logic.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd

from xcore.data.schema import Predicate
from xcore.logic.ast import Constant, Variable
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import GroundRules


def render_atoms(pred: Predicate, args: list[np.ndarray]) -> np.ndarray:
    """Natural-language text of many ground atoms of `pred` from its template (vectorised)."""
    n = len(args[0]) if args else 0
    canonical = canonical_atoms(pred.name, args, n)
    if not pred.template:
        return canonical
    try:
        pieces = list(string.Formatter().parse(pred.template))
        out = pd.Series(np.full(n, "", dtype=object), dtype=object)
        for lit, field, _spec, _conv in pieces:
            out = out + lit
            if field is not None:
                out = out + pd.Series(args[int(field)], dtype=object).astype(str)
        return out.to_numpy(dtype=object)
    except (ValueError, IndexError):
        return canonical


def canonical_atoms(name: str, args: list[np.ndarray], n: int) -> np.ndarray:
    """Canonical text ``name(a, b)`` of `n` ground atoms from their argument columns (vectorised)."""
    s = pd.Series(np.full(n, f"{name}(", dtype=object), dtype=object)
    for i, a in enumerate(args):
        s = s + (", " if i else "") + pd.Series(a, dtype=object).astype(str)
    return (s + ")").to_numpy(dtype=object)


def literal_args(g: GroundRules, store: AtomStore, rows: np.ndarray) -> list[list[np.ndarray]]:
    """Per literal (body then head), its argument strings for the given ground rows."""
    pos = {v: k for k, v in enumerate(g.rule.variables)}
    out = []
    for lit in g.rule.literals:
        cols = []
        for t in lit.atom.args:
            if isinstance(t, Variable):
                cols.append(store.constants[g.bindings[rows, pos[t]]].astype(object))
            else:
                assert isinstance(t, Constant)
                cols.append(np.full(len(rows), t.value, dtype=object))
        out.append(cols)
    return out


def ground_rule_texts(g: GroundRules, store: AtomStore, rows: np.ndarray) -> dict[str, object]:
    """Canonical text, natural text, atom texts (rows x L) and observed flags of some ground rules."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    lits = g.rule.literals
    largs = literal_args(g, store, rows)
    atoms = np.empty((n, len(lits)), dtype=object)
    natural = []
    for j, (lit, args) in enumerate(zip(lits, largs)):
        pred = store.schema[lit.atom.predicate]
        atoms[:, j] = canonical_atoms(pred.name, args, n)
        nat = pd.Series(render_atoms(pred, args), dtype=object)
        natural.append(("not (" + nat + ")") if lit.negated else nat)
    nb = len(g.rule.body)
    body = natural[:nb]
    head = natural[nb:]

    def join(parts, sep):
        s = parts[0]
        for p in parts[1:]:
            s = s + sep + p
        return s

    head_text = join(head, " or ") if head else pd.Series(np.full(n, "false", dtype=object))
    # the rule as it reads, never a claim about which way it pushes (xcore.explain.render adds that)
    nat = ("if " + join(body, " and ") + ", then " + head_text) if body else ("always: " + head_text)
    ids = g.atom_ids[rows]
    observed = ~(np.append(store.is_target, False)[ids])  # missing atoms (-1) are closed-world evidence
    return {"text": g.texts(store, rows), "natural": nat.to_numpy(dtype=object), "atoms": atoms,
            "observed": observed, "atom_ids": ids}


def natural_atom_text(store: AtomStore, ids: np.ndarray) -> np.ndarray:
    """Natural-language text of atom ids of `store` from their predicates' templates."""
    out = np.empty(len(ids), dtype=object)
    preds = store.pred[ids]
    names = list(store.predicates)
    for k in np.unique(preds):
        m = preds == k
        p = store.schema[names[k]]
        args = [store.constants[store.args[ids[m], i]].astype(object) for i in range(p.arity)]
        out[m] = render_atoms(p, args)
    return out
