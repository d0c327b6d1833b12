"""The bundled Mutagenesis 188: counts against the data's README, folds, derived modes and features."""

from __future__ import annotations

import pytest

from xcore.drm.features import Evaluator, draw_features
from xcore.drm.mutagenesis import load_mutagenesis
from xcore.drm.problem import build_problem
from xcore.drm.runs import default_settings, run


def test_counts_folds_and_modes():
    ds = load_mutagenesis()
    truth = ds.truth("active")
    assert len(truth) == 188 and int(truth["value"].sum()) == 125  # 125 positive / 63 negative
    folds = ds.observations("cv_fold")["a1"].value_counts()
    assert len(folds) == 10 and sorted(folds.tolist()) == [17] + [19] * 9
    s = default_settings(ds)
    assert s.fold_predicate == "cv_fold" and s.relevance.count(":") >= 5
    problem = build_problem(ds, exclude=("cv_fold",))
    modes = {m.predicate: str(m) for m in problem.language.modeb}
    assert "cv_fold" not in modes
    assert modes["bond"] == "modeb(1,bond(+drug,+atomid,+atomid,#bondtype))"
    assert modes["nitro"] == "modeb(*,nitro(+drug,-ring))"


def test_features_on_mutagenesis_match_a_direct_check():
    ds = load_mutagenesis()
    problem = build_problem(ds, exclude=("cv_fold",))
    feats = draw_features(problem, 300, seed=1)
    X = Evaluator(problem).matrix(feats)
    atm = ds.observations("atm")
    for f in feats:
        body = f.clause.body
        if len(body) == 1 and body[0].pred == "atm":
            _, _, el, ty = body[0].args
            rows = atm
            if isinstance(el, str):  # a Var (issue 31's variable column) matches any element
                rows = rows[rows["a2"] == el]
            if isinstance(ty, str):
                rows = rows[rows["a3"] == ty]
            have = set(rows["a0"])
            assert set(problem.examples[X[:, f.index] == 1]) == have


@pytest.mark.slow
def test_run_holds_out_the_first_shipped_fold():
    ds = load_mutagenesis()
    s = default_settings(ds).replace(max_draws=100, hidden=((8,),), learning_rates=(0.01,), max_epochs=5,
                                     explain_rows=1)
    r = run(ds, s)
    folds = ds.observations("cv_fold")
    first = sorted(folds["a1"].astype(str).unique())[0]
    held = {f"{r.model.problem_.target}({e})" for e in folds["a0"][folds["a1"].astype(str) == first]}
    assert set(r.predictions["target"]) == held and len(held) in (17, 19)
    assert len(r.model.X_) == 188 - len(held) and r.metrics["folds"] == 10
    assert "cv_fold" not in r.model.problem_.tables  # the folds are not background knowledge
