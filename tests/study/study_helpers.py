"""Shared helpers of the study tests: small hand-made runs with relational and word reasons, a study,
a store in a temporary directory."""

from __future__ import annotations

import functools

import pandas as pd

from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods import Run
from xcore.study import ConditionSource, StudyStore, build_study, pick_items
from xcore.study.definition import attention_check, comment_question, iexplain_feature_usefulness

SPEC = ScoreSpec(label="importance", measures="how much the reason raises the prediction.", signed=True)
N_TARGETS = 10


def explanation(i: int, flip: bool) -> Explanation:
    """positive(rI): two relational reasons (links to other reviews) and two word reasons."""
    t = f"positive(r{i:02d})"
    items = [
        ExplanationItem("ground_formula", f"same_user(r{i:02d}, r{i + 20}) ^ {t} => positive(r{i + 20})",
                        f"r{i:02d} and r{i + 20} are by the same user", 0.8 if not flip else 0.2,
                        atoms=[f"same_user(r{i:02d}, r{i + 20})", t, f"positive(r{i + 20})"], target_index=1,
                        observed=[True, False, True], roles=["body", "body", "head"], direction=1),
        ExplanationItem("ground_formula", f"same_restaurant(r{i:02d}, r{i + 40}) ^ {t} => positive(r{i + 40})",
                        f"r{i:02d} and r{i + 40} are about the same restaurant", 0.5,
                        atoms=[f"same_restaurant(r{i:02d}, r{i + 40})", t, f"positive(r{i + 40})"], target_index=1,
                        observed=[True, False, True], roles=["body", "body", "head"], direction=1),
        ExplanationItem("word", "great", f"review r{i:02d} contains 'great'", 0.3 if not flip else 0.9, direction=1),
        ExplanationItem("word", "soggy", f"review r{i:02d} contains 'soggy'", -0.4, direction=-1),
    ]
    truth = float(i % 2)
    pred = truth if i % 3 else 1 - truth  # every third prediction is wrong
    return Explanation(target=t, target_text=f"r{i:02d} is a positive review", prediction=pred, truth=truth,
                       items=items, score_spec=SPEC)


def make_run(method: str = "mln", explainers: tuple[str, ...] = ("mln:i-explain", "lime")) -> Run:
    exps = {name: ExplanationSet([explanation(i, flip=j == 1) for i in range(N_TARGETS)], method=name,
                                 score_spec=SPEC) for j, name in enumerate(explainers)}
    first = next(iter(exps.values()))
    preds = pd.DataFrame({"target": first.targets, "prediction": [e.prediction for e in first],
                          "truth": [e.truth for e in first]})
    return Run(method=method, settings={"T": 5}, fingerprint="f" * 16, predictions=preds, explanations=exps,
               dataset="reviews_toy")


def make_study(study_id: str = "s1", design: str = "between", n_items: int = 6, seed: int = 7,
               attention_every: int = 3, conditions: int = 2):
    """The toy study (a deep copy of one built once per set of arguments: rendering its screens' figures
    takes seconds, and the study is a pure function of the arguments)."""
    return _built_study(study_id, design, n_items, seed, attention_every, conditions).model_copy(deep=True)


@functools.lru_cache(maxsize=16)
def _built_study(study_id: str, design: str, n_items: int, seed: int, attention_every: int, conditions: int):
    run = make_run(explainers=("mln:i-explain", "lime", "shap")[:conditions])
    sources = [ConditionSource("toy run", run, name) for name in run.explanations]
    targets = pick_items(sources, n_items, "random", seed=seed)
    questions = [*iexplain_feature_usefulness(), attention_check(every=attention_every), comment_question()]
    return build_study(study_id, "Toy study", sources, targets, questions, design=design, seed=seed)


def new_store(tmp_path, name: str = "study.sqlite") -> StudyStore:
    return StudyStore(f"sqlite:///{tmp_path / name}")


def answers_for(screen, value: int = 4) -> dict:
    """A complete, valid answer set for one screen."""
    return {q.id: (q.expected if q.kind == "attention" else "" if q.kind == "free_text" else value)
            for q in screen.questions}
