"""Summation atoms, cardinality and filter clauses: grounding against a hand enumeration of PSL's
semantics, and every solver's MAP against a direct scipy solve of the enumerated problem."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog, minimize

from xcore.data import Predicate, RelationalDataset
from xcore.errors import ParseError
from xcore.logic import parse_rule
from xcore.logic.ast import CoefExpr, Comparison, Constant, SumVariable, Variable
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import ground
from xcore.psl.model import PSLModel

PAPERS = ["p1", "p2", "p3", "p4"]
CATS = ["c1", "c2", "c3"]


def dataset(seed: int) -> RelationalDataset:
    """Open HasCat (some targets, some observed), closed Nice/Link/Pref, seeded at random."""
    rng = np.random.default_rng(seed)
    pairs = [(p, c) for p in PAPERS for c in CATS if rng.random() < 0.8]
    role = rng.random(len(pairs))
    obs = [(p, c, float(rng.integers(0, 2))) for (p, c), r in zip(pairs, role) if r < 0.25]
    tgt = [(p, c) for (p, c), r in zip(pairs, role) if r >= 0.25]
    nice = [(c, float(rng.integers(0, 2))) for c in CATS if rng.random() < 0.9]
    link = [(a, b) for a in PAPERS for b in PAPERS if a != b and rng.random() < 0.4]
    pref = [(p, c, 1.0) for p in PAPERS for c in CATS if rng.random() < 0.4]
    schema = [Predicate("HasCat", 2, ("paper", "cat"), closed=False), Predicate("Nice", 1, ("cat",)),
              Predicate("Link", 2, ("paper", "paper")), Predicate("Pref", 2, ("paper", "cat"))]
    frame = lambda rows, cols: pd.DataFrame(rows, columns=cols)  # noqa: E731
    return RelationalDataset(schema, {
        "HasCat": {"obs": frame(obs, ["a0", "a1", "value"]), "targets": frame(tgt, ["a0", "a1"])},
        "Nice": {"obs": frame(nice, ["a0", "value"])},
        "Link": {"obs": frame([(a, b, 1.0) for a, b in link], ["a0", "a1", "value"])},
        "Pref": {"obs": frame(pref, ["a0", "a1", "value"])},
    })


RULES = [
    "HasCat(A, +C) = 1 .",
    "HasCat(A, +C) <= 1 .",
    "1.5: HasCat(A, +C) >= 1",
    "2: HasCat(A, +C) <= |C| / 2 ^2 {C: Nice(C)}",
    "1: HasCat(A, +C) = 1 ^2 {C: Nice(C) | Pref(A, C)}",
    "1: HasCat(A, +C) - HasCat(B, 'c1') >= 0 ^2 {C: !Pref(A, C) & (C != 'c2')}",
    "0.7: Link(A, B) + HasCat(B, +C) <= @Max[1, |C| - 1]",
    "1: 2 * Nice(+C) + HasCat(A, 'c2') >= 1 ^2",
    "1: HasCat(+P, C) <= 2",
    "1: |C| * HasCat(A, +C) + 0.5 * Link(A, B) = 1 ^2",
]


# ------------------------------------------------------------------ the hand enumeration
_INDEX: dict = {}


def _value(ds: RelationalDataset, pred: str, args: tuple) -> tuple[bool, float | None]:
    """(exists, observed value or None for a target) of one ground atom."""
    if id(ds) not in _INDEX:
        index = {}
        for p in ds.schema:
            cols = [f"a{i}" for i in range(p.arity)]
            for r in ds.tables[p.name]["obs"].itertuples(index=False):
                d = r._asdict()
                index[(p.name, tuple(d[c] for c in cols))] = (True, float(d.get("value", 1.0)))
            for r in ds.tables[p.name]["targets"][cols].itertuples(index=False):
                index[(p.name, tuple(r))] = (True, None)
        _INDEX[id(ds)] = (ds, index)
    return _INDEX[id(ds)][1].get((pred, tuple(args)), (False, 0.0))


def _atoms(ds, pred: str) -> list[tuple]:
    t = pd.concat([ds.tables[pred]["obs"], ds.tables[pred]["targets"]])
    return [tuple(r) for r in t[[c for c in t.columns if c.startswith("a")]].itertuples(index=False)]


def _holds(ds, x, env: dict) -> bool:
    if isinstance(x, Comparison):
        left, right = (env[t.name] if isinstance(t, Variable) else t.value for t in (x.left, x.right))
        return {"!=": left != right, "==": left == right, "%": left < right}[x.op]
    args = tuple(env[t.name] if isinstance(t, Variable) else t.value for t in x.atom.args)
    exists, v = _value(ds, x.atom.predicate, args)
    return (exists and (v or 0) > 0) != x.negated


def enumerate_ground(rule, ds) -> list[tuple[dict, float]]:
    """PSL's ground rules of one summation rule, by brute force: [({atom: coef}, constant)], atoms as
    (pred, args); observed atoms folded into the constant."""
    constants = sorted({c for p in ds.schema for a in _atoms(ds, p.name) for c in a})
    plain = []
    for _, a in rule.terms:
        plain += [v.name for v in a.variables if v.name not in plain]
    sums = {v.name: (j, i) for j, (_, a) in enumerate(rule.terms) for i, v in enumerate(a.args) if isinstance(v, SumVariable)}
    cands = {}
    for name, (j, i) in sums.items():
        a = rule.terms[j][1]
        cands[name] = sorted({r[i] for r in _atoms(ds, a.predicate)
                              if all(r[k] == t.value for k, t in enumerate(a.args) if isinstance(t, Constant))})
    closed = {p.name: p.closed for p in ds.schema}
    splits = list(itertools.product(*(f.dnf for f in rule.filters))) or [()]
    out = []
    for split in splits:
        flt = {f.variable: conj for f, conj in zip(rule.filters, split)}
        for combo in itertools.product(constants, repeat=len(plain)):
            env = dict(zip(plain, combo))
            # the grounding query: some value of the summation variables makes every atom exist
            def exists_all(senv):
                e = {**env, **senv}
                return all(_value(ds, a.predicate, tuple(e[t.name] if not isinstance(t, Constant) else t.value
                                                          for t in a.args))[0] for _, a in rule.terms)
            names = list(sums)
            if not any(exists_all(dict(zip(names, vals))) for vals in itertools.product(*(cands[n] for n in names))):
                continue
            coefs: dict = {}
            counts = {}
            entries = []
            fixed = 0
            for j, (c, a) in enumerate(rule.terms):
                svars = [t.name for t in a.args if isinstance(t, SumVariable)]
                if not svars:
                    args = tuple(env[t.name] if isinstance(t, Variable) else t.value for t in a.args)
                    entries.append((j, a.predicate, args))
                    fixed += 1
                    continue
                kept = 0
                for vals in itertools.product(*(cands[n] for n in svars)):
                    e = {**env, **dict(zip(svars, vals))}
                    args = tuple(e[t.name] if not isinstance(t, Constant) else t.value for t in a.args)
                    if not closed[a.predicate] and not _value(ds, a.predicate, args)[0]:
                        continue
                    if not all(_holds(ds, x, e) for n in svars for x in flt.get(n, ())):
                        continue
                    entries.append((j, a.predicate, args))
                    kept += 1
                for n in svars:
                    counts[n] = kept
            if fixed == 0 and sum(counts.values()) == 0:
                continue
            val = lambda c: float(c.evaluate(counts)) if isinstance(c, CoefExpr) else float(c)  # noqa: E731
            const = val(rule.constant)
            for j, pred, args in entries:
                exists, v = _value(ds, pred, args)
                cj = val(rule.terms[j][0])
                if v is None:
                    coefs[(pred, args)] = coefs.get((pred, args), 0.0) + cj
                else:
                    const += cj * v
            out.append((coefs, const))
    return out


def _rows_as_keys(A, b, store: AtomStore, digits: int = 9) -> list:
    texts = store.atom_text(store.target_ids)
    A = A.tocsr()
    keys = []
    for r in range(A.shape[0]):
        lo, hi = A.indptr[r], A.indptr[r + 1]
        items = tuple(sorted((texts[c], round(float(v), digits)) for c, v in zip(A.indices[lo:hi], A.data[lo:hi]) if v != 0))
        keys.append((items, round(float(b[r]), digits)))
    return sorted(keys)


def _reference_keys(rule, ds) -> list:
    flip = -1.0 if rule.relation == ">=" else 1.0
    keys = []
    for coefs, const in enumerate_ground(rule, ds):
        items = tuple(sorted((f"{p}({', '.join(a)})", round(flip * c, 9)) for (p, a), c in coefs.items() if c != 0))
        keys.append((items, round(flip * const, 9)))
    return sorted(keys)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("text", RULES)
def test_summation_grounding_matches_hand_enumeration(text, seed):
    ds = dataset(seed)
    rule = parse_rule(text)
    gp = ground([rule], ds)
    A, b = gp[0].linear_form(gp.store)
    assert _rows_as_keys(A, b, gp.store) == _reference_keys(rule, ds)


def test_summation_counts_and_filters_on_a_hand_made_case():
    ds = dataset(0)
    store = AtomStore.from_dataset(ds)
    gp = ground(["2: HasCat(A, +C) <= |C| / 2 ^2 {C: Nice(C)}"], store)
    nice = {c for c, v in ds.tables["Nice"]["obs"][["a0", "value"]].itertuples(index=False) if v > 0}
    hascat = _atoms(ds, "HasCat")
    expected = {p: [c for q, c in hascat if q == p and c in nice] for p in PAPERS}
    expected = {p: cs for p, cs in expected.items() if cs}
    texts = gp[0].texts(store)
    assert len(texts) == len(expected)
    for p, cs in expected.items():
        line = next(t for t in texts if f"({p}," in t)
        assert line.endswith(f"<= {len(cs) / 2!r}")
        assert sorted(line.split(" <= ")[0].split(" + ")) == sorted(f"HasCat({p}, {c})" for c in cs)


# ------------------------------------------------------------------ MAP against a direct solve
def _reference_problem(rules, ds):
    """The enumerated program over the targets: soft rows (A, b, w, squared) and hard rows (C, d, eq)."""
    store = AtomStore.from_dataset(ds)
    texts = list(store.atom_text(store.target_ids))
    col = {t: k for k, t in enumerate(texts)}
    soft, hard = [], []
    for rule in rules:
        flip = -1.0 if rule.relation == ">=" else 1.0
        for coefs, const in enumerate_ground(rule, ds):
            row = np.zeros(len(texts))
            for (p, a), c in coefs.items():
                row[col[f"{p}({', '.join(a)})"]] += flip * c
            if not row.any():
                continue
            if rule.is_hard:
                hard.append((row, flip * const, rule.relation == "="))
            else:
                dirs = [1.0, -1.0] if rule.relation == "=" else [1.0]
                soft += [(s * row, s * flip * const, rule.weight, rule.squared) for s in dirs]
    return len(texts), soft, hard


def _energy(y, soft):
    return sum(w * (max(0.0, a @ y + b) ** (2 if sq else 1)) for a, b, w, sq in soft)


def _direct_solve(n, soft, hard) -> float:
    """Minimum energy by scipy alone: an LP (linprog) when every hinge is linear, else SLSQP."""
    m = len(soft)
    if not any(sq for *_, sq in soft):
        c = np.concatenate([np.zeros(n), [w for *_, w, _ in soft]])
        A_ub = [np.concatenate([a, -np.eye(m)[k]]) for k, (a, b, w, _) in enumerate(soft)]
        b_ub = [-b for a, b, w, _ in soft]
        A_eq, b_eq = [], []
        for a, d, eq in hard:
            (A_eq if eq else A_ub).append(np.concatenate([a, np.zeros(m)]))
            (b_eq if eq else b_ub).append(-d)
        res = linprog(c, A_ub=np.array(A_ub) if A_ub else None, b_ub=b_ub or None,
                      A_eq=np.array(A_eq) if A_eq else None, b_eq=b_eq or None,
                      bounds=[(0, 1)] * n + [(0, None)] * m, method="highs")
        assert res.status == 0
        return float(res.fun)
    cons = [{"type": "eq" if eq else "ineq", "fun": (lambda y, a=a, d=d, eq=eq: (a @ y + d) if eq else -(a @ y + d))}
            for a, d, eq in hard]
    best = np.inf
    rng = np.random.default_rng(0)
    for start in [np.full(n, 0.5)] + [rng.random(n) for _ in range(4)]:
        res = minimize(_energy, start, args=(soft,), method="SLSQP", bounds=[(0, 1)] * n, constraints=cons,
                       options={"ftol": 1e-12, "maxiter": 1000})
        viol = max([abs(a @ res.x + d) if eq else max(0.0, a @ res.x + d) for a, d, eq in hard] or [0.0])
        if viol < 1e-6:
            best = min(best, _energy(res.x, soft))
    return float(best)


PROGRAMS = {
    # logical rules written as the arithmetic rules of the same hinge, so that the hand enumeration
    # covers every row: Link(A, B) & HasCat(B, C) -> HasCat(A, C) is Link + HasCat(B, C) - HasCat(A, C) <= 1
    "hard-sum-linear": ["HasCat(A, +C) = 1 .", "1: Link(A, B) + HasCat(B, C) - HasCat(A, C) <= 1",
                        "0.3: HasCat(A, C) <= 0", "0.5: Pref(A, C) - HasCat(A, C) <= 0"],
    "soft-sum-squared": ["2: HasCat(A, +C) = 1 ^2", "1: Link(A, B) + HasCat(B, C) - HasCat(A, C) <= 1 ^2",
                         "1: HasCat(A, +C) <= |C| / 2 ^2 {C: Nice(C)}", "0.2: HasCat(A, C) <= 0 ^2"],
    # hard rows over one atom are bounds: L-BFGS-B keeps them in its box (no hand-over to the QP)
    "bounds-squared": ["HasCat(A, 'c3') >= 0.2 .", "HasCat('p1', C) <= 0.3 .", "2: HasCat(A, +C) = 1 ^2",
                       "1: HasCat(A, C) >= 1 ^2", "1: Pref(A, C) - HasCat(A, C) <= -0.5 ^2"],
    "hard-filter-squared": ["HasCat(A, +C) <= 1 . {C: !Pref(A, C)}", "1: HasCat(A, C) >= 1 ^2",
                            "1: 2 * Nice(+C) + HasCat(A, 'c2') >= 1 ^2", "0.5: HasCat(+P, C) <= 1 ^2"],
}


@pytest.mark.parametrize("method", ["qp", "admm", "lbfgs"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_solver_reaches_the_direct_optimum(name, method):
    ds = dataset(1)
    rules = [parse_rule(t) for t in PROGRAMS[name]]
    n, soft, hard = _reference_problem(rules, ds)
    best = _direct_solve(n, soft, hard)
    assert best > 0.1  # a problem where the rules disagree
    model = PSLModel(rules).ground(ds)
    if method == "lbfgs" and not all(r.squared or r.is_hard for r in rules):
        with pytest.raises(Exception, match="smooth"):
            model.infer(method="lbfgs")
        return
    res = model.infer(method=method, warm_start=False)
    if name == "bounds-squared":
        assert model.infer(method="auto", warm_start=False).method == "lbfgs"
    if method == "lbfgs":
        assert res.method == ("lbfgs+al" if name == "hard-filter-squared" else "lbfgs")
    viol = max([abs(a @ res.y + d) if eq else max(0.0, a @ res.y + d) for a, d, eq in hard] or [0.0])
    assert viol < 1e-4
    assert _energy(res.y, soft) == pytest.approx(best, abs=1e-4, rel=1e-4)
    assert res.energy == pytest.approx(_energy(res.y, soft), abs=1e-8)


@pytest.mark.parametrize("text, words", [
    ("HasCat(A, +C) + Nice(+C) <= 1 .", "appears more than once"),
    ("HasCat(A, +C) + Nice(C) <= 1 .", "cannot also be used as a normal variable"),
    ("HasCat(A, C) <= |C| .", "needs a summation variable"),
    ("1: HasCat(A, B) <= 1 {B: Nice(B)}", "filter variables must be summation variables"),
    ("1: HasCat(A, +B) <= 1 {B: Nice(Z)}", "variable Z"),
])
def test_bad_summation_rules_are_refused(text, words):
    with pytest.raises(ParseError) as e:
        parse_rule(text)
    assert words in e.value.problem


def test_open_predicates_in_filters_are_refused():
    from xcore.errors import SchemaError

    with pytest.raises(SchemaError, match="only closed predicates"):
        ground(["1: Nice(+C) <= 1 {C: HasCat('p1', C)}"], dataset(0))


def test_summation_rules_print_and_parse_back():
    for text in RULES:
        rule = parse_rule(text)
        again = parse_rule(rule.text())
        assert again == rule, (text, rule.text())
        assert any(isinstance(t, SumVariable) for _, a in rule.terms for t in a.args)
