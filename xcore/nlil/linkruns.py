"""m-NLIL's link-prediction evaluation: Neural-LP-style path rules for every binary relation and its
inverse, filtered MRR and Hits@1/3/10 over the held-out triples in both directions."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec
from xcore.methods.base import Run, prediction_frame
from xcore.nlil.heads import planned_heads
from xcore.nlil.linkpred import LinkPredictor, evaluate, fit_link_predictor, triple_kb
from xcore.nlil.model import one_thread, torch_device
from xcore.nlil.settings import NLILSettings
from xcore.runtime import Progress, scaled

PATH_RULE_SCORE = ScoreSpec(
    label="rule confidence",
    measures="the product of the rule's operator attentions (its weight in the learned mixture, as Neural LP "
             "prints rules); the relation's filtered MRR and Hits@k are in the run metrics and per-relation table.",
    signed=False, unit="attention product", directed=False)

TIES = "filtered ranks; ties count half (1 + #higher + #equal / 2)"


@dataclass
class LinkPredictionModel:
    """The fitted path rules of a link-prediction run and their held-out evaluation.

    Attributes
    ----------
    predictor_ : LinkPredictor
        The trained path-rule model over the triples.
    heads_ : list of str
        The relations evaluated.
    link_prediction_ : pandas.DataFrame
        Filtered MRR and Hits@1/3/10 per relation (both directions).
    path_rules_ : pandas.DataFrame
        The learned rules per relation (and its inverse) with their confidence.
    loss_curve_ : list of float
        The training loss per epoch.
    device_ : str
        The torch device training and ranking ran on.
    cpu_seconds_ : dict of str to float
        CPU seconds of fitting and of ranking.
    ties_ : str
        How tied scores are ranked.
    """

    predictor_: LinkPredictor
    heads_: list[str]
    link_prediction_: pd.DataFrame
    path_rules_: pd.DataFrame
    loss_curve_: list[float]
    device_: str
    cpu_seconds_: dict[str, float]
    ties_: str = TIES


def run_link_prediction(dataset: RelationalDataset, settings: NLILSettings, progress: Progress | None = None) -> Run:
    """Path rules for every relation and its inverse; filtered MRR/Hits@k over the held-out triples both ways."""
    t0, c0 = time.perf_counter(), time.process_time()
    kb = triple_kb(dataset)
    heads = planned_heads(dataset, settings)[0]
    unknown = [h for h in heads if h not in kb.relations]
    if unknown:
        raise XcoreError(f"head {unknown[0]!r} is not a binary relation of the dataset")
    if not len(kb.held_out):
        raise XcoreError("link prediction needs held-out true triples (a test file, or atoms with truth 1)")
    device = torch_device(settings.device)
    with one_thread():
        lp = fit_link_predictor(kb, rank=settings.rank, path_length=settings.path_length, epochs=settings.kg_epochs,
                                lr=settings.kg_lr, per_epoch=settings.kg_queries, seed=settings.seed,
                                progress=scaled(progress, 0.0, 0.85), device=device)
        t1, c1 = time.perf_counter(), time.process_time()
        wanted = np.isin(kb.held_out[:, 1], [kb.relations.index(h) for h in heads])
        test = kb.held_out[wanted]
        overall, per_rel, ranks, scores = evaluate(lp, test, progress=scaled(progress, 0.85, 1.0), with_ranks=True)
        tail = scores[: len(test)] / settings.rank  # the true object's share of the rules' mass, in [0, 1]
    atoms = [f"{kb.relations[r]}({kb.entities[h]}, {kb.entities[t]})" for h, r, t in test]
    preds = prediction_frame(atoms, tail, np.ones(len(test)), head=[kb.relations[r] for r in test[:, 1]],
                             tail_rank=ranks[: len(test)], head_rank=ranks[len(test):])
    rules = lp.rule_frame()
    rules = rules[rules["relation"].str.replace("^-1", "", regex=False).isin(heads)].reset_index(drop=True)
    items = [ExplanationItem(kind="rule", text=r.rule, natural=f"{r.relation}: {r.rule}", score=float(r.confidence),
                             extras={"head": r.relation}) for r in rules.itertuples(index=False)]
    summary = Explanation(target="model", target_text="path rules per relation (and its inverse)", method="nlil",
                          items=items, ordering="given", score_spec=PATH_RULE_SCORE)
    t2, c2 = time.perf_counter(), time.process_time()
    model = LinkPredictionModel(lp, list(heads), per_rel, rules, list(lp.losses), str(device),
                                {"fit": c1 - c0, "evaluate": c2 - c1})
    return Run(method="nlil", settings=settings, fingerprint=dataset.fingerprint(), predictions=preds,
               explanations={}, summary=summary, metrics={**overall, "queries": float(2 * len(test))},
               timings={"fit": t1 - t0, "train": lp.seconds, "explain": t2 - t1}, dataset=dataset.name, model=model)
