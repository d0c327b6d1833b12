"""An independent reference for the PLKB LP (scipy.optimize.linprog, dense, explicit negations),
and checks of the reference itself on the paper's alpha/beta example solved by hand.

`reference_interval` shares no model-building code with `xcore.plkb.lp`: it loops over the
clauses, keeps a variable for every negated atom, uses t_i >= |omega(c_i) - p_i| instead of
u/v/segments, and decides relevance with its own loop.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from xcore.plkb.kb import KB
from xcore.plkb.literals import ABSENT, UNSEEN, Domain

FACE_TOL = 1e-9


def _atom_value(domain: Domain, codes, atom: int):
    """1/0 for atoms fixed by the query, None for free ones (independent of Domain.atom_states)."""
    if atom == 0:
        return None
    lit = domain.atom_lit(atom)
    f = domain.features.index(lit.feature)
    c = int(codes[f])
    if c == ABSENT:
        return None
    if c == UNSEEN:
        return 0
    return 1 if domain.values[f][c] == lit.value else 0


def reference_relevant(kb: KB, codes) -> list[int]:
    """Clauses all of whose feature atoms are fixed by the query and none of whose literals is true."""
    out = []
    for i in range(len(kb)):
        ok = True
        for a, pos in zip(kb.atoms[kb.indptr[i]:kb.indptr[i + 1]], kb.positive[kb.indptr[i]:kb.indptr[i + 1]]):
            if a == 0:
                continue
            v = _atom_value(kb.domain, codes, int(a))
            if v is None or (v == 1) == bool(pos):
                ok = False
        if ok:
            out.append(i)
    return out


def reference_interval(kb: KB, codes=None, scope: str = "full") -> tuple[float, float, float]:
    """(lo, hi, f*) of omega(POS) by two-stage linprog on the textbook formulation."""
    dom = kb.domain
    if codes is None:
        codes = np.full(dom.n_features, ABSENT)
    clauses = list(range(len(kb))) if scope == "full" else reference_relevant(kb, codes)
    A = dom.n_atoms
    n = len(clauses)
    # one omega(c) per DISTINCT clause (same literal set): repeated clauses share it
    sentences: list[frozenset] = []
    sentence_of = []
    for i in clauses:
        key = frozenset(zip(kb.atoms[kb.indptr[i]:kb.indptr[i + 1]].tolist(),
                            kb.positive[kb.indptr[i]:kb.indptr[i + 1]].tolist()))
        if key not in sentences:
            sentences.append(key)
        sentence_of.append(sentences.index(key))
    S = len(sentences)
    # variables: w[0..A-1], nw[A..2A-1], c[2A..2A+S-1], t[2A+S..2A+S+n-1]
    nv = 2 * A + S + n
    ub_rows, ub_rhs, eq_rows, eq_rhs = [], [], [], []
    for a in range(A):
        row = np.zeros(nv)
        row[a] = row[A + a] = 1
        eq_rows.append(row)
        eq_rhs.append(1.0)
    done: set[int] = set()
    for j, i in enumerate(clauses):
        ci, ti = 2 * A + sentence_of[j], 2 * A + S + j
        p = float(kb.prob[i])
        lits = [(int(a) if pos else A + int(a)) for a, pos in
                zip(kb.atoms[kb.indptr[i]:kb.indptr[i + 1]], kb.positive[kb.indptr[i]:kb.indptr[i + 1]])]
        if sentence_of[j] in done:
            lits = []  # Boole and monotonicity rows once per distinct clause
        done.add(sentence_of[j])
        row = np.zeros(nv)
        row[ci] = 1
        for v in lits:
            row[v] -= 1
        if lits:
            ub_rows.append(row)
            ub_rhs.append(0.0)  # Boole
        for v in lits:
            row = np.zeros(nv)
            row[v] = 1
            row[ci] = -1
            ub_rows.append(row)
            ub_rhs.append(0.0)  # monotonicity
        row = np.zeros(nv)
        row[ci], row[ti] = 1, -1
        ub_rows.append(row)
        ub_rhs.append(p)
        row = np.zeros(nv)
        row[ci], row[ti] = -1, -1
        ub_rows.append(row)
        ub_rhs.append(-p)
    bounds = [(0.0, 1.0)] * (2 * A + S) + [(0.0, None)] * n
    for a in range(1, A):
        v = _atom_value(dom, codes, a)
        if v is not None:
            bounds[a] = (float(v), float(v))
    cost = np.zeros(nv)
    cost[2 * A + S:] = kb.weight[clauses]
    A_ub = np.array(ub_rows) if ub_rows else None
    b_ub = np.array(ub_rhs) if ub_rows else None
    r1 = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=np.array(eq_rows), b_eq=np.array(eq_rhs), bounds=bounds,
                 method="highs")
    assert r1.status == 0, r1.message
    fstar = float(r1.fun)
    face = cost.copy()
    A2 = np.vstack([A_ub, face]) if A_ub is not None else face[None, :]
    b2 = np.concatenate([b_ub, [fstar + FACE_TOL]]) if b_ub is not None else np.array([fstar + FACE_TOL])
    out = []
    for sense in (1.0, -1.0):
        obj = np.zeros(nv)
        obj[0] = sense
        r = linprog(obj, A_ub=A2, b_ub=b2, A_eq=np.array(eq_rows), b_eq=np.array(eq_rhs), bounds=bounds,
                    method="highs")
        assert r.status == 0, r.message
        out.append(float(r.x[0]))
    return out[0], out[1], fstar


ALPHA = Domain(("alpha",), (("f", "t"),))
ALPHA_KB_TEXT = "0.6: ~alpha_t | POS\n0.8: alpha_t\n"
"""The paper's KB {0.6: ~alpha | beta, 0.8: alpha}, with beta played by POS."""


def test_reference_alpha_observed():
    kb = KB.from_text(ALPHA_KB_TEXT, ALPHA)
    lo, hi, f = reference_interval(kb, ALPHA.query({"alpha": "t"}))
    assert lo == pytest.approx(0.6, abs=1e-6) and hi == pytest.approx(0.6, abs=1e-6)
    assert f == pytest.approx(0.2, abs=1e-9)


def test_reference_nothing_observed():
    kb = KB.from_text(ALPHA_KB_TEXT, ALPHA)
    lo, hi, f = reference_interval(kb, None)
    assert (lo, hi) == (pytest.approx(0.4, abs=1e-6), pytest.approx(0.6, abs=1e-6))
    assert f == pytest.approx(0.0, abs=1e-9)


def test_reference_relevance_by_hand():
    dom = Domain(("a", "b"), (("0", "1"), ("0", "1")))
    kb = KB.from_text("0.5: POS | ~a_1\n0.5: POS | ~a_1 | ~b_0\n0.5: POS | ~a_0\n0.5: POS | a_0\n0.2: POS\n", dom)
    codes = dom.query({"a": "1"})
    # clause 1 mentions the free feature b; clause 2 (~a_0) is true; clause 3 (a_0) is false, kept
    assert reference_relevant(kb, codes) == [0, 3, 4]
