"""Text of ground atoms and ground rules: canonical ``p(a, b)`` and natural language from templates.

Shared by every method package (PSL explanations, MLN formula importance), so it lives in logic.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd

from xcore.data.atom_texts import canonical_atoms
from xcore.data.schema import Predicate
from xcore.logic.ast import ArithmeticRule, Constant, Variable
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
    """Canonical text, natural text, atom texts (rows x L) and observed flags of some ground rules.

    An arithmetic rule (``HasCat(A, +C) = 1 .``, ``A(X) - B(X) >= 0.2``) has its own atoms per
    ground rule: then ``atoms``, ``observed`` and ``atom_ids`` are object arrays of one list per row
    (`arithmetic_texts`).
    """
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(g.rule, ArithmeticRule):
        return arithmetic_texts(g, store, rows)
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


RELATION_WORDS = {"=": "should equal", "<=": "should be at most", ">=": "should be at least"}
"""How an arithmetic ground rule's relation reads in natural text."""


def arithmetic_entries(g: GroundRules, rows: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per ground row of an arithmetic rule: (atom ids, coefficients, constant) of ``sum c*atom + constant``.

    Summation rules take their expanded atoms from the flat entries (`GroundRules.flat`); a missing
    atom of a closed predicate (id -1, value 0) is left out, since it adds nothing.
    """
    rule = g.rule
    if g.flat is not None:
        f = g.flat
        order = np.argsort(f.row, kind="stable")
        srow = f.row[order]
        lo, hi = np.searchsorted(srow, rows, "left"), np.searchsorted(srow, rows, "right")
        out = []
        for r, a, b in zip(rows, lo, hi):
            pick = order[a:b]
            pick = pick[f.atom[pick] >= 0]
            out.append((f.atom[pick].astype(np.int64), f.coef[pick].astype(np.float64), float(f.constant[r])))
        return out
    coef = np.array([float(c) for c in rule.coefficients])
    ids = g.atom_ids[rows]
    return [(ids[i][ids[i] >= 0], coef[ids[i] >= 0], float(rule.constant)) for i in range(len(rows))]


def _number(x: float) -> str:
    return f"{x:.6g}"


def arithmetic_texts(g: GroundRules, store: AtomStore, rows: np.ndarray) -> dict[str, object]:
    """`ground_rule_texts` of an arithmetic rule: one list of atoms per ground rule and natural text
    such as ``“p2 is about c1” + “p2 is about c2” should equal 1`` (``always:`` first when hard)."""
    entries = arithmetic_entries(g, rows)
    n = len(rows)
    is_target = np.append(store.is_target, False)
    atoms = np.empty(n, dtype=object)
    observed = np.empty(n, dtype=object)
    ids_out = np.empty(n, dtype=object)
    natural = np.empty(n, dtype=object)
    all_ids = np.concatenate([e[0] for e in entries]) if entries else np.zeros(0, np.int64)
    canon = store.atom_text(all_ids) if len(all_ids) else np.zeros(0, dtype=object)
    nat = natural_atom_text(store, all_ids) if len(all_ids) else np.zeros(0, dtype=object)
    words = RELATION_WORDS[g.rule.relation]
    start = 0
    for i, (ids, coef, constant) in enumerate(entries):
        stop = start + len(ids)
        atoms[i] = [str(a) for a in canon[start:stop]]
        observed[i] = [bool(o) for o in ~is_target[ids]]
        ids_out[i] = ids
        parts = []
        for k, (c, t) in enumerate(zip(coef, nat[start:stop])):
            mag = "" if abs(c) == 1.0 else f"{_number(abs(c))} × "
            lead = ("−" if c < 0 else "") if k == 0 else (" − " if c < 0 else " + ")
            parts.append(f"{lead}{mag}“{t}”")
        text = f"{''.join(parts) or '0'} {words} {_number(-constant + 0.0)}"
        natural[i] = ("always: " + text) if g.rule.is_hard else text
        start = stop
    return {"text": g.texts(store, rows), "natural": natural, "atoms": atoms, "observed": observed,
            "atom_ids": ids_out}


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
