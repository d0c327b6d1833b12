"""PSL's search learners (GridSearch family), its evaluators, and learn-then-infer as PSL's runtime decides it."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score

from xcore.data.io.psl_project import UNLIMITED, read_project
from xcore.psl.cli import main as psl_main
from xcore.psl.model import PSLModel
from xcore.psl.weight_learning import learn_weights
from xcore.psl.weight_search import Evaluator, search_weights

RULES = ["1.0: Good(P) -> Label(P) ^2", "1.0: Bad(P) -> Label(P) ^2", "1.0: ~Label(P) ^2"]


def write_project(root: Path, options: dict | None = None, evaluations=None, seed: int = 0, n: int = 40) -> Path:
    """Label(P) is 1 when Good(P) is high (Bad(P) is noise); learn and eval splits, a JSON config."""
    rng = np.random.default_rng(seed)
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "cli").mkdir(exist_ok=True)
    for split in ("learn", "eval"):
        people = [f"{split[0]}{i}" for i in range(n)]
        good, bad = rng.random(n), rng.random(n)
        truth = (good + rng.normal(0, 0.1, n) > 0.5).astype(float)
        for name, values in (("good", good), ("bad", bad), ("label_truth", truth)):
            (root / "data" / f"{name}_{split}.txt").write_text("".join(f"{p}\t{v:.3f}\n" for p, v in zip(people, values)))
        (root / "data" / f"label_targets_{split}.txt").write_text("".join(f"{p}\n" for p in people))

    def files(kind: str) -> dict:
        return {"learn": [f"../data/{kind}_learn.txt"], "infer": [f"../data/{kind}_eval.txt"]}

    label = {"targets": files("label_targets"), "truth": files("label_truth")}
    if evaluations is not None:
        label["evaluations"] = evaluations
    config = {"options": options or {}, "rules": RULES,
              "predicates": {"Good/1": {"observations": files("good")}, "Bad/1": {"observations": files("bad")},
                             "Label/1": label}}
    path = root / "cli" / "project.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = psl_main(list(args), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------ the search itself
def test_grid_search_visits_every_location_and_keeps_the_first_best():
    seen = []

    def score(w):
        seen.append(tuple(w))
        return float((w[0] - 1.0) ** 2 + (w[1] - 0.1) ** 2)

    res = search_weights("GridSearch", 2, score, {"gridsearch.weights": "0.01:0.1:1"})
    assert sorted(seen) == sorted(itertools.product([0.01, 0.1, 1.0], repeat=2))
    assert seen[0] == (0.01, 0.01)  # PSL starts at the all-lowest location, odometer order
    assert list(res.weights) == [1.0, 0.1] and res.locations == 9


def test_random_and_guided_searches_visit_distinct_locations_within_their_budgets():
    calls = []
    score = lambda w: calls.append(tuple(w)) or float(np.sum(np.abs(w - 1.0)))  # noqa: E731
    res = search_weights("RandomGridSearch", 3, score, {"randomgridsearch.maxlocations": 20})
    assert len(calls) == len(set(calls)) == 20 == res.locations
    calls.clear()
    opts = {"guidedrandomgridsearch.seedlocations": 5, "guidedrandomgridsearch.explorelocations": 2,
            "randomgridsearch.maxlocations": 75, "gridsearch.weights": "0.01:0.1:1.0"}
    res = search_weights("GuidedRandomGridSearch", 3, score, opts)
    assert len(calls) == len(set(calls)) == res.locations
    assert 5 < res.locations <= 5 + 2 * 2 ** 3
    seeds, explored = calls[:5], calls[5:]
    best = sorted(seeds, key=lambda w: np.sum(np.abs(np.array(w) - 1.0)))[:2]
    grid = [0.01, 0.1, 1.0]
    for loc in explored:  # every explored location is one step from one of the two best seeds
        assert any(sum(abs(grid.index(a) - grid.index(b)) for a, b in zip(loc, s)) == 1 for s in best)
    assert res.objective == min(np.sum(np.abs(np.array(c) - 1.0)) for c in calls)
    again = search_weights("GuidedRandomGridSearch", 3, lambda w: float(np.sum(np.abs(w - 1.0))), opts)
    assert np.array_equal(again.weights, res.weights)  # seeded: runs repeat


# ------------------------------------------------------------------ evaluators against sklearn
def test_evaluators_match_sklearn_and_hand_counts(tmp_path):
    project = read_project(config=str(write_project(tmp_path)))
    model = PSLModel(project.parsed_rules("learn"), limit=None).ground(project.dataset("learn", UNLIMITED))
    store = model.store_
    y = np.random.default_rng(1).random(store.n_targets)
    truth = store.truth
    assert Evaluator("AUCEvaluator", "Label").normalized(store, y) == pytest.approx(roc_auc_score(truth >= 0.5, y))
    assert Evaluator("ContinuousEvaluator").normalized(store, y) == pytest.approx(-np.mean((y - truth) ** 2))
    assert Evaluator("org.linqs.psl.evaluation.statistics.DiscreteEvaluator",
                     options={"discreteevaluator.threshold": 0.4}).normalized(store, y) == \
        pytest.approx(f1_score(truth >= 0.4, y >= 0.4))
    with pytest.raises(Exception, match="supported: AUCEvaluator"):
        Evaluator("RankingEvaluator")


def test_categorical_evaluator_scores_the_top_category_per_entity():
    import pandas as pd

    from xcore.data import Predicate, RelationalDataset
    from xcore.logic.atoms import AtomStore

    ds = RelationalDataset([Predicate("HasCat", 2, closed=False)], {"HasCat": {
        "targets": pd.DataFrame({"a0": ["a", "a", "b", "b", "c", "c"], "a1": ["1", "2", "1", "2", "1", "2"]}),
        "truth": pd.DataFrame({"a0": ["a", "a", "b", "b", "c", "c"], "a1": ["1", "2", "1", "2", "1", "2"],
                               "value": [1.0, 0.0, 0.0, 1.0, 1.0, 0.0]})}})
    store = AtomStore.from_dataset(ds)
    y = np.array([0.9, 0.1, 0.8, 0.2, 0.3, 0.7])  # a right, b wrong, c wrong
    ev = Evaluator("CategoricalEvaluator", "HasCat", {"categoricalevaluator.categoryindexes": "1"})
    assert ev.normalized(store, y) == pytest.approx(1 / 3)


# ------------------------------------------------------------------ learning against a brute-force search
@pytest.mark.slow
def test_grid_search_learns_the_weights_a_brute_force_scan_finds(tmp_path):
    project = read_project(config=str(write_project(tmp_path)))
    options = {"gridsearch.weights": "0.1:1:10"}
    ev = Evaluator("AUCEvaluator", "Label")
    model = PSLModel(project.parsed_rules("learn"), limit=None)
    res = learn_weights(model, project.dataset("learn", UNLIMITED), "GridSearch", options, evaluator=ev)
    best, best_w = None, None
    data = project.dataset("learn", UNLIMITED)
    for w in itertools.product([0.1, 1.0, 10.0], repeat=3):  # in PSL's visiting order: first best wins
        rules = [r.with_weight(x) for r, x in zip(project.parsed_rules("learn"), w)]
        m = PSLModel(rules, limit=None, inference="qp").ground(data)
        m.infer()
        truth = m.store_.truth
        score = roc_auc_score(truth >= 0.5, m.y_)
        if best is None or score > best + 1e-9:
            best, best_w = score, w
    assert tuple(res.weights) == pytest.approx(best_w)
    assert res.weights[0] > res.weights[1]  # the planted rule above the noise


# ------------------------------------------------------------------ the command: learn, then infer
def test_config_with_learn_data_learns_with_its_method_then_infers(tmp_path):
    config = write_project(tmp_path, options={"runtime.learn.method": "GuidedRandomGridSearch",
                                              "gridsearch.weights": "0.1:1:10", "randomgridsearch.maxlocations": 12},
                           evaluations=[{"evaluator": "AUCEvaluator", "primary": True}])
    code, out, err = run("--config", str(config), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert "steps: learn GuidedRandomGridSearch on the learn split" in err and "then infer on the infer split" in err
    learned = (tmp_path / "out" / "project-learned.psl").read_text().splitlines()
    assert all(line.split(":")[0] in ("0.1", "1.0", "10.0") for line in learned)
    values = (tmp_path / "out" / "LABEL.txt").read_text().splitlines()
    assert len(values) == 40 and all(v.startswith("e") for v in values)
    code, out, err = run("--config", str(config), "-o", str(tmp_path / "plain"), "--no-learn")
    assert code == 0 and "steps: infer on the infer split (learning off: --no-learn)" in err
    assert not (tmp_path / "plain" / "project-learned.psl").exists()
    code, out, err = run("--config", str(config), "-o", str(tmp_path / "off"), "-D", "runtime.learn=false")
    assert code == 0 and "learn" not in err.split("steps:")[1].split("(")[0]


def test_config_defaults_to_the_runtime_learner_and_data_files_to_the_cli_one(tmp_path):
    config = write_project(tmp_path)
    code, out, err = run("--config", str(config), "-o", str(tmp_path / "out"), "-q")
    assert code == 0, err
    assert "steps: learn StructuredPerceptron" in err and "PSL 2.4 runtime default method" in err


@pytest.mark.parametrize("options, evaluations, words", [
    ({"runtime.learn.method": "MaxPseudoLikelihood"}, None,
     "unknown weight learning method 'MaxPseudoLikelihood'; supported: MaxLikelihoodMPE, StructuredPerceptron, "
     "GridSearch, RandomGridSearch, GuidedRandomGridSearch"),
    ({"runtime.learn.method": "GuidedRandomGridSearch"}, ["AUCEvaluator"], "needs an evaluator"),
    ({"runtime.learn.method": "GridSearch", "gridsearch.weights": "a:b"}, None, "gridsearch.weights"),
])
def test_learners_we_lack_or_cannot_run_exit_2_naming_why(tmp_path, options, evaluations, words):
    config = write_project(tmp_path, options=options, evaluations=evaluations)
    code, out, err = run("--config", str(config), "-o", str(tmp_path / "out"))
    assert code == 2, err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "out" / "LABEL.txt").exists()
