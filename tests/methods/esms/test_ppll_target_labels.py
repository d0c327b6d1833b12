"""PPLL on a unary target scores that target's labels only; checked against brute-force PPLL with scipy.

The reference writes each target atom's potential from the rule's meaning (``smokes(A) -> cancer(A)``
has distance ``max(0, smokes - cancer)``), integrates the partition function with `scipy.integrate.quad`
and maximises the pseudolikelihood with `scipy.optimize.minimize_scalar`: no grounding, no linear forms.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate, Schema
from xcore.esms.search import ESMSSearch
from xcore.esms.validation_split import split_targets
from xcore.logic.atoms import AtomStore
from xcore.psl.data_keys import target_labels
from xcore.psl.model import PSLModel


def planted(n: int = 300, seed: int = 0, p_smokes: float = 0.5, p_cancer: tuple[float, float] = (0.9, 0.1)
            ) -> tuple[RelationalDataset, pd.DataFrame]:
    """cancer (target, labelled) planted on smokes (open, labelled); coffee (observed) is noise.

    `p_cancer` is P(cancer | smokes), P(cancer | not smokes).
    """
    rng = np.random.default_rng(seed)
    people = np.array([f"p{i}" for i in range(n)], dtype=object)
    smokes = (rng.random(n) < p_smokes).astype(float)
    coffee = (rng.random(n) < 0.5).astype(float)
    cancer = (rng.random(n) < np.where(smokes == 1, *p_cancer)).astype(float)
    empty = pd.DataFrame({"a0": pd.Series([], dtype=object), "value": pd.Series([], dtype=float)})

    def open_(v):
        return {"obs": empty, "targets": pd.DataFrame({"a0": people, "value": np.nan}),
                "truth": pd.DataFrame({"a0": people, "value": v})}

    schema = Schema.of([Predicate("smokes", 1, ("person",), closed=False),
                        Predicate("coffee", 1, ("person",), closed=True),
                        Predicate("cancer", 1, ("person",), closed=False)])
    tables = {"smokes": open_(smokes), "cancer": open_(cancer),
              "coffee": {"obs": pd.DataFrame({"a0": people, "value": coffee})}}
    truth = pd.DataFrame({"smokes": smokes, "coffee": coffee, "cancer": cancer})
    return RelationalDataset(schema, tables, name="planted_unary"), truth


def brute_force_ppll(potentials: list, observed: np.ndarray, w_max: float = 100.0) -> float:
    """argmax_w sum_i [-w phi_i(y*_i) - log int_0^1 exp(-w phi_i(t)) dt] by quadrature and Brent."""
    def neg_pll(w):
        logz = [np.log(quad(lambda t, f=f: np.exp(-w * f(t)), 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0])
                for f in potentials]
        return w * observed.sum() + np.sum(logz)
    return float(minimize_scalar(neg_pll, bounds=(0, w_max), method="bounded", options={"xatol": 1e-7}).x)


def reference_weight(truth: pd.DataFrame, squared: bool, score_smokes: bool) -> float:
    """PPLL of ``smokes(A) -> cancer(A)`` over the cancer atoms (and the smokes atoms if asked)."""
    p = 2 if squared else 1
    s, c = truth["smokes"].to_numpy(), truth["cancer"].to_numpy()
    pots = [lambda t, s=s_: max(s - t, 0.0) ** p for s_ in s]             # cancer(A) free, smokes(A) context
    obs = [max(s_ - c_, 0.0) ** p for s_, c_ in zip(s, c)]
    if score_smokes:
        pots += [lambda t, c=c_: max(t - c, 0.0) ** p for c_ in c]         # smokes(A) free, cancer(A) context
        obs += [max(s_ - c_, 0.0) ** p for s_, c_ in zip(s, c)]
    return brute_force_ppll(pots, np.array(obs))


@pytest.mark.parametrize("squared", [False, True])
def test_target_scoped_ppll_equals_brute_force(squared):
    ds, truth = planted(120, seed=1, p_smokes=0.3, p_cancer=(0.6, 0.1))  # friends_smokers' rates
    rule = "1.0: smokes(A) -> cancer(A)" + (" ^2" if squared else "")
    scoped = PSLModel(rule).fit_weights(ds, target="cancer").weights[0]
    everything = PSLModel(rule).fit_weights(ds).weights[0]
    assert scoped == pytest.approx(reference_weight(truth, squared, score_smokes=False), rel=1e-4, abs=1e-5)
    assert everything == pytest.approx(reference_weight(truth, squared, score_smokes=True), rel=1e-4, abs=1e-5)
    # the smokes labels used to leak into cancer's model: the reverse direction (no cancer -> no smokes)
    assert everything > scoped + 0.5


def test_planted_rule_gets_weight_and_the_noise_rule_none():
    ds, _ = planted(400, seed=0)
    w = PSLModel("1.0: smokes(A) -> cancer(A)\n1.0: coffee(A) -> cancer(A)").fit_weights(ds, target="cancer").weights
    assert w[0] > 1.0 and w[1] < 0.1 * w[0]


def test_target_labels_keep_only_the_target_predicate():
    ds, truth = planted(50)
    store = AtomStore.from_dataset(ds)
    lab = target_labels(store, "cancer")
    assert np.isfinite(lab).sum() == 50 and np.isfinite(store.truth).sum() == 100
    assert np.nansum(lab) == truth["cancer"].sum()


@pytest.mark.slow
def test_esms_scores_validation_on_the_target_only():
    ds, _ = planted(200, seed=2)
    train, valid = split_targets(ds, "cancer", 0.3, seed=0)
    search = ESMSSearch("cancer", rules_per_model=3, iterations=4, n_jobs=1, squared=False).fit(train, valid)
    model = search.best_model_
    cols = np.isfinite(target_labels(model.store_, "cancer"))
    err = model.y_[cols] - model.store_.truth[cols]
    assert search.best_score_ == pytest.approx(float(np.mean(err ** 2)))
    assert cols.sum() == 60 and np.isfinite(model.store_.truth).sum() > 60
