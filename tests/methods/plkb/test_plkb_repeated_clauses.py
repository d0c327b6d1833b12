"""Repeated clauses share one omega(c) (issue 11): checked against an independent dense LP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from xcore.plkb import KB, PLKBClassifier, Reasoner
from xcore.plkb.literals import ABSENT, UNSEEN, Domain

TOL = 1e-6


def _fixed(dom: Domain, codes, atom: int):
    """1/0 for an atom fixed by the query, None if free (own code, not Domain.atom_states)."""
    if atom == 0:
        return None
    lit = dom.atom_lit(atom)
    f = dom.features.index(lit.feature)
    c = int(codes[f])
    if c == ABSENT:
        return None
    return 0 if c == UNSEEN else int(dom.values[f][c] == lit.value)


def _clause_lits(kb: KB, i: int) -> frozenset:
    s, e = kb.indptr[i], kb.indptr[i + 1]
    return frozenset(zip(kb.atoms[s:e].tolist(), kb.positive[s:e].tolist()))


def _relevant(kb: KB, codes) -> list[int]:
    out = []
    for i in range(len(kb)):
        ok = True
        for a, pos in _clause_lits(kb, i):
            v = None if a == 0 else _fixed(kb.domain, codes, a)
            if a != 0 and (v is None or (v == 1) == pos):
                ok = False
        if ok:
            out.append(i)
    return out


def reference(kb: KB, codes, scope: str) -> tuple[float, float, float]:
    """(lo, hi, f*) by scipy linprog: one omega per DISTINCT clause, t_i >= |omega(c(i)) - p_i|."""
    dom = kb.domain
    if codes is None:
        codes = np.full(dom.n_features, ABSENT)
    idx = list(range(len(kb))) if scope == "full" else _relevant(kb, codes)
    sentences: list[frozenset] = []
    for i in idx:
        if _clause_lits(kb, i) not in sentences:
            sentences.append(_clause_lits(kb, i))
    A, S, n = dom.n_atoms, len(sentences), len(idx)
    nv = A + S + n  # omega(atom), omega(sentence), t per clause occurrence
    ub, rhs = [], []

    def lit_row(a: int, pos: bool) -> tuple[np.ndarray, float]:
        r = np.zeros(nv)
        r[a] = 1.0 if pos else -1.0
        return r, (0.0 if pos else 1.0)  # omega(l) = r.x + const

    for j, sen in enumerate(sentences):
        boole, const = np.zeros(nv), 0.0
        boole[A + j] = 1
        for a, pos in sen:
            r, c = lit_row(a, pos)
            boole -= r
            const += c
            ub.append(r - np.eye(nv)[A + j])
            rhs.append(-c)  # omega(l) <= omega(c)
        ub.append(boole)
        rhs.append(const)  # omega(c) <= sum omega(l)
    for t, i in enumerate(idx):
        j = sentences.index(_clause_lits(kb, i))
        for sgn in (1, -1):
            r = np.zeros(nv)
            r[A + j], r[A + S + t] = sgn, -1
            ub.append(r)
            rhs.append(sgn * float(kb.prob[i]))
    bounds = [(0.0, 1.0)] * (A + S) + [(0.0, None)] * n
    for a in range(1, A):
        v = _fixed(dom, codes, a)
        if v is not None:
            bounds[a] = (float(v), float(v))
    cost = np.zeros(nv)
    cost[A + S:] = kb.weight[idx]
    A_ub, b_ub = (np.array(ub), np.array(rhs)) if ub else (None, None)
    r1 = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    assert r1.status == 0
    A2 = np.vstack([A_ub, cost]) if A_ub is not None else cost[None]
    b2 = np.concatenate([b_ub, [r1.fun + 1e-9]]) if b_ub is not None else np.array([r1.fun + 1e-9])
    ends = []
    for sense in (1.0, -1.0):
        obj = np.zeros(nv)
        obj[0] = sense
        r = linprog(obj, A_ub=A2, b_ub=b2, bounds=bounds, method="highs")
        assert r.status == 0
        ends.append(float(r.x[0]))
    return ends[0], ends[1], float(r1.fun)


def _check(kb: KB, queries, scopes=("full", "relevant"), solvers=("highs",)) -> None:
    for scope in scopes:
        for solver in solvers:
            rs = Reasoner(kb, solver, scope)
            for q in queries:
                iv = rs.interval(q)
                lo, hi, f = reference(kb, q, scope)
                assert iv.lo == pytest.approx(lo, abs=TOL) and iv.hi == pytest.approx(hi, abs=TOL), (scope, solver, q)
                assert iv.objective == pytest.approx(f, abs=TOL), (scope, solver, q)


DOM = Domain(("f0", "f1"), (("0", "1"), ("a", "b", "c")))


def test_issue_example_one_variable_per_clause():
    kb = KB.from_text("0.3: POS | ~f0_1\n0.9: POS | ~f0_1\n", DOM)
    assert kb.clause_group[0] == kb.clause_group[1]
    for solver in ("highs", "pulp"):
        iv = Reasoner(kb, solver, "full").interval(None)
        assert (iv.lo, iv.hi, iv.objective) == pytest.approx((0.0, 0.9, 0.6), abs=1e-6)
    _check(kb, [None, np.array([1, ABSENT]), np.array([0, 2])])


def test_literal_order_and_repeats_do_not_matter():
    kb = KB.from_text("0.2: POS | ~f0_1 | ~f1_b\n0.7: ~f1_b | POS | ~f0_1\n0.6: ~f0_1 | POS | ~f0_1\n"
                      "0.4: POS | ~f0_1\n0.5: f1_a | f1_c\n0.9: f1_c | f1_a\n", DOM)
    g = kb.clause_group
    assert g[0] == g[1] and g[2] == g[3] and g[4] == g[5] and len(set(g.tolist())) == 3
    queries = [None, np.array([1, ABSENT]), np.array([ABSENT, 1]), np.array([1, 1]), np.array([0, 0])]
    _check(kb, queries, solvers=("highs", "pulp"))


def _table(seed: int, n: int = 120) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.choice(["u", "v"], n),
                      "c": rng.choice(["p", "q", "r"], n)})
    y = pd.Series(((X.a == "x") & (X.b == "u")) | (rng.random(n) < 0.2))
    return X, y


def _queries(clf: PLKBClassifier, X: pd.DataFrame) -> list[np.ndarray]:
    codes = clf.encode(X.iloc[:6])
    partial = codes.copy()
    partial[:, 1] = ABSENT
    return [None, *codes[:3], *partial[3:6]]


def test_forest_kb_with_repeated_paths_matches_reference():
    X, y = _table(0)
    clf = PLKBClassifier(kb="tree", n_trees=6, max_depth=2, random_state=0).fit(X, y)
    g = clf.kb_.clause_group
    assert len(np.unique(g)) < len(g)  # the forest does repeat clauses
    _check(clf.kb_, _queries(clf, X))


def test_knowledge_clauses_restating_learned_ones_match_reference():
    X, y = _table(1)
    clf = PLKBClassifier(kb="direct", max_k=1).fit(X, y)
    extra = "0.95: POS | ~a_x\n0.1: POS | ~a_x\n0.9: POS | ~a_x | ~b_u\n0.8: POS | ~b_u | ~a_x\n"
    clf.add_knowledge(extra)
    g = clf.kb_.clause_group
    assert len(np.unique(g)) < len(g)
    _check(clf.kb_, _queries(clf, X))
    _check(clf.kb_, _queries(clf, X)[:3], scopes=("full",), solvers=("pulp",))


def test_full_kb_model_shares_columns():
    from xcore.plkb.lp import FullKBLP

    kb = KB.from_text("0.3: POS | ~f0_1\n0.9: POS | ~f0_1\n0.5: POS | ~f1_a\n", DOM)
    full = FullKBLP(kb)
    for q in (None, np.array([1, ABSENT]), np.array([1, 0])):
        iv = full.solve(q)[0]
        lo, hi, f = reference(kb, q, "full")
        assert (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=TOL)
