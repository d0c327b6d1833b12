"""Formula importance (M-Explain): Proposition 1, Gibbs estimates vs exact, MLNModel end to end."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from xcore.data.samples import load_sample
from xcore.errors import XcoreError
from xcore.explain.types import Explanation
from xcore.mln import MLNModel, exact, gibbs, importance, importance_se, log_prob
from xcore.mln.synthetic import random_ground_mln as random_mln

FS_RULES = """\
1.5 smokes(x) => cancer(x)
1.1 friends(x, y) ^ smokes(x) => smokes(y)
-0.5 smokes(x)
-0.3 cancer(x)
"""


@pytest.mark.parametrize("seed", range(3))
def test_proposition_1_importance_is_the_gradient_of_log_prob(seed):
    mln = random_mln(6, 12, seed=40 + seed)
    imp = importance(mln, exact(mln))
    h = 1e-5
    for e in np.random.default_rng(seed).choice(mln.nnz, size=8, replace=False):
        c, q = int(mln.entry_clause[e]), int(mln.entry_atom[e])
        wp, wm = mln.weights.copy(), mln.weights.copy()
        wp[c] += h
        wm[c] -= h
        fd = (log_prob(mln, q, wp) - log_prob(mln, q, wm)) / (2 * h)
        assert imp[e] == pytest.approx(fd, abs=1e-6)


def test_exact_importance_by_definition():
    """I(f,Q) = E[n_f | Q] - E[n_f] computed independently by conditioning the enumeration."""
    mln = random_mln(5, 9, seed=7)
    imp = importance(mln, exact(mln))
    worlds = ((np.arange(32)[:, None] >> np.arange(5)) & 1).astype(np.int8)
    lw = mln.log_weight(worlds)
    p = np.exp(lw - lw.max())
    p /= p.sum()
    sat = mln.satisfied(worlds)
    for e in range(mln.nnz):
        c, q = mln.entry_clause[e], mln.entry_atom[e]
        on = worlds[:, q] == 1
        cond = (p[on] @ sat[on, c]) / p[on].sum()
        assert imp[e] == pytest.approx(cond - p @ sat[:, c], abs=1e-12)


@pytest.mark.slow
def test_gibbs_importance_matches_exact():
    mln = random_mln(8, 16, seed=5, scale=2.0)
    ref = importance(mln, exact(mln))
    res = gibbs(mln, n_samples=8000, burn_in=200, n_chains=4, seed=1)
    est, se = importance(mln, res), importance_se(mln, res)
    assert spearmanr(est, ref).statistic >= 0.9
    assert (np.abs(est - ref) <= 5 * se + 2e-3).all()
    assert np.abs(est - ref).max() < 0.03


# ---------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def fs_model():
    return MLNModel(FS_RULES).ground(load_sample("friends_smokers"))


def test_friends_smokers_gibbs_vs_exact(fs_model):
    m = fs_model
    ref = m.infer("exact").marginals()
    ref_imp = m.importance()["importance"].to_numpy()
    assert (ref["se"] == 0).all()
    est = m.infer("gibbs", n_samples=5000, burn_in=200, n_chains=4, seed=0).marginals()
    assert list(est.columns) == ["atom", "marginal", "se", "rhat", "truth"]
    assert (est["atom"] == ref["atom"]).all()
    assert np.abs(est["marginal"] - ref["marginal"]).max() < 0.02
    assert est["rhat"].max() < 1.05
    imp = m.importance()
    assert spearmanr(imp["importance"], ref_imp).statistic >= 0.9
    assert (np.abs(imp["importance"] - ref_imp) <= 5 * imp["se"] + 2e-3).all()


def test_explain_ranks_formulas_containing_the_atom(fs_model):
    m = fs_model.infer("exact")
    e = m.explain("cancer(chris)")
    assert isinstance(e, Explanation) and e.target == "cancer(chris)"
    assert e.target_text == "chris has cancer"
    assert e.n_items >= 1 and all(it.kind == "ground_formula" for it in e.items)
    scores = [abs(it.score) for it in e.items]
    assert scores == sorted(scores, reverse=True)
    for it in e.items:
        assert "cancer(chris)" in it.atoms and it.atoms[it.target_index] == "cancer(chris)"
    frame = m.importance()
    col = m.atom_column("cancer(chris)")
    assert e.n_items == int((frame["atom"] == col).sum())
    assert Explanation.from_json(e.to_json()).to_dict() == e.to_dict()
    # the smokes(chris) => cancer(chris) formula: positive literal, so I = 1 - E[n_f] > 0
    top = [it for it in e.items if it.text == "smokes(chris) -> cancer(chris)"]
    assert len(top) == 1 and top[0].score == pytest.approx(1 - top[0].extras["expected"])
    assert "if chris smokes, then chris has cancer" == top[0].natural


def test_explain_all_and_errors(fs_model):
    m = fs_model.infer("exact")
    s = m.explain_all(top_k=3)
    assert len(s) == m.mln_.n_atoms
    assert all(e.n_items <= 3 for e in s)
    with pytest.raises(XcoreError):
        m.explain("smokes(anna)")  # evidence, not a query atom
    with pytest.raises(XcoreError):
        MLNModel(FS_RULES).infer()
    with pytest.raises(XcoreError):
        fs_model.infer("bp")
