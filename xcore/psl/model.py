"""`PSLModel`: a set of weighted PSL rules as an estimator (fit weights, ground, infer, predict, explain).

Semantics (PSL / hinge-loss MRF). A ground rule ``body -> head`` has the Lukasiewicz distance to
satisfaction ``max(0, 1 - sum(truth of clause literals))`` (e.g. ``X1 & Y1 -> Y2`` gives
``max(X1 + Y1 - Y2 - 1, 0)``), squared for ``^2`` rules; the energy is ``sum_j w_j phi_j(y)``
and MAP inference minimises it over the open (target) atoms in [0, 1]. Hard rules become the
linear constraints ``A y + b <= 0``. Grounding is the shared grounder (`xcore.logic.grounding`);
only ground rules that contain at least one target atom enter the program (the others are
constants of the energy).

Weights are learned per rule by exact piecewise pseudolikelihood (`xcore.psl.ppll`): a rule's
weight depends only on that rule and the training data, so `PPLLCache` reuses it in every model
that contains the rule (ESMS).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.errors import XcoreError
from xcore.explain.types import ExplanationSet
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import DEFAULT_LIMIT, GroundProgram, ground
from xcore.logic.parser import parse_rules
from xcore.psl.data_keys import PPLLCache, dataset_fingerprint, ppll_data_key, target_labels
from xcore.psl.explain import explain_targets, explanation_frame
from xcore.psl.explainable_rules import is_alpha_explainable
from xcore.psl.inference import map_inference
from xcore.psl.map_problem import MAPResult
from xcore.psl.program import HingeProgram
from xcore.psl.rule_forms import RuleForm, assemble_program, check_constant_hard_rows, hinge_rows, rule_form
from xcore.psl.scores import prediction_metrics
from xcore.psl.weight_learning import learn_weights
from xcore.runtime import Progress, limited_threads


def learn_weight(*args, **kwargs):
    """`xcore.psl.ppll.learn_weight`, imported on first use."""
    # start-up: scipy.optimize and scipy.special, which grounding and inference (the PSL command) do not need
    from xcore.psl.ppll import learn_weight as learn

    return learn(*args, **kwargs)


# ---------------------------------------------------------------------- the model
class PSLModel:
    """Weighted PSL rules with sklearn-style steps: `fit_weights`, `ground`, `infer`, `predict`, `explain`.

    `alpha` and `block` decide which rules count as explainable (`is_alpha_explainable`);
    `limit` caps each rule's number of ground rules (`GroundingTooLarge` above it).
    """

    def __init__(self, rules: Sequence[Rule | str] | str, inference: str = "auto", alpha: float = 0.25,
                 block: str | None = None, limit: int | None = DEFAULT_LIMIT) -> None:
        self.rules: list[Rule] = _as_rules(rules)
        self.inference = inference
        self.alpha = alpha
        self.block = block
        self.limit = limit
        self._reset()

    def _reset(self) -> None:
        self.store_: AtomStore | None = None
        self.grounded_: GroundProgram | None = None
        self.forms_: list[RuleForm] | None = None
        self.program_: HingeProgram | None = None
        self.map_: MAPResult | None = None
        self.y_: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"PSLModel({len(self.rules)} rules, inference={self.inference!r})"

    # ------------------------------------------------------------------ text
    def to_text(self) -> str:
        """The rules as PSL text, one per line, with their (learned) weights; `from_text` reads it."""
        return "\n".join(r.text("psl") for r in self.rules) + ("\n" if self.rules else "")

    @classmethod
    def from_text(cls, text: str, **kwargs) -> "PSLModel":
        """A model from PSL rule text (see `xcore.logic.parser`)."""
        return cls(parse_rules(text, dialect="psl"), **kwargs)

    @property
    def weights(self) -> np.ndarray:
        """Rule weights in rule order (NaN for hard rules)."""
        return np.array([np.nan if r.is_hard else float(r.weight) for r in self.rules])

    def rules_frame(self, schema=None) -> pd.DataFrame:
        """One row per rule: text, template, weight, squared, hard, explainable (needs a schema)."""
        schema = schema if schema is not None else (self.store_.schema if self.store_ is not None else None)
        return pd.DataFrame({
            "rule": [r.text("psl") for r in self.rules],
            "template": [r.name for r in self.rules],
            "weight": self.weights,
            "squared": [r.squared for r in self.rules],
            "hard": [r.is_hard for r in self.rules],
            "explainable": [bool(schema is not None and is_alpha_explainable(r, schema, self.alpha, self.block))
                            for r in self.rules],
        })

    # ------------------------------------------------------------------ learning
    def fit_weights(self, dataset: RelationalDataset, cache: PPLLCache | None = None, w_max: float = 100.0,
                    progress: Progress | None = None, target: str | None = None) -> "PSLModel":
        """Learn every soft rule's weight by PPLL on `dataset`'s truth labels (each rule on its own).

        `target` scores only that predicate's labelled atoms (`target_labels`; ESMS learns a model of
        one predicate); None scores every labelled target. Weights found in `cache` (same data, same
        scored predicate, same rule) are reused without grounding or learning.
        """
        t0 = time.perf_counter()
        store = AtomStore.from_dataset(dataset)
        labels = target_labels(store, target)
        if not np.isfinite(labels).any():
            raise XcoreError("fit_weights needs truth labels for some target atoms"
                             f"{f' of {target}' if target else ''}; the dataset has none")
        data_key = ppll_data_key(dataset_fingerprint(dataset), target) if cache is not None else ""
        soft = [k for k, r in enumerate(self.rules) if not r.is_hard]
        learned: dict[int, float] = {}
        cached = set()
        if cache is not None:
            for k in soft:
                w = cache.get(self.rules[k], data_key, w_max)
                if w is not None:
                    learned[k] = w
                    cached.add(k)
        todo = [k for k in soft if k not in learned]
        if todo:
            if progress:
                progress(0.0, f"grounding {len(todo)} rules for weight learning")
            gp = ground([self.rules[k] for k in todo], store, limit=self.limit)
            for i, (k, g) in enumerate(zip(todo, gp)):
                A, b, _ = hinge_rows(g, store)
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # log(0) in far tails
                    w = learn_weight(A, b, self.rules[k].squared, store.truth, scored=np.isfinite(labels),
                                     w_max=w_max).weight
                learned[k] = w
                if cache is not None:
                    cache.put(self.rules[k], data_key, w_max, w)
                if progress:
                    progress((i + 1) / len(todo), f"PPLL weight of {self.rules[k].text()}")
        self.rules = [r.with_weight(learned[k]) if k in learned else r for k, r in enumerate(self.rules)]
        self.fit_info_ = {"seconds": time.perf_counter() - t0, "learned": len(todo), "cached": len(cached)}
        self._reset_program_weights()
        return self

    fit = fit_weights

    def learn_weights(self, dataset: RelationalDataset, method: str | None = None, options=None):
        """Learn every soft rule's weight jointly as PSL's CLI does (MaxLikelihoodMPE by default, or
        StructuredPerceptron; PSL option pairs in `options`); see `xcore.psl.weight_learning`."""
        return learn_weights(self, dataset, method, options)

    def _reset_program_weights(self) -> None:
        if self.forms_ is not None and self.store_ is not None:
            self.program_ = assemble_program(self.forms_, self.rules, self.store_.n_targets)

    # ------------------------------------------------------------------ grounding and inference
    def ground(self, dataset: RelationalDataset | AtomStore, progress: Progress | None = None,
               only_targets: bool = False) -> "PSLModel":
        """Ground every rule on `dataset` with the shared grounder and build the hinge program.

        `only_targets`: ground only the ground rules with a target atom (the same program, less work;
        ignored when a hard rule needs its target-free rows checked against the evidence).
        """
        store = dataset if isinstance(dataset, AtomStore) else AtomStore.from_dataset(dataset)
        only_targets = only_targets and not any(r.is_hard for r in self.rules)
        gp = ground(self.rules, store, limit=self.limit, progress=progress, only_targets=only_targets)
        forms = [rule_form(g, store) for g in gp]
        for k, (r, g) in enumerate(zip(self.rules, gp)):
            if r.is_hard:
                check_constant_hard_rows(g, store, forms[k])
        self.store_, self.grounded_, self.forms_ = store, gp, forms
        self.program_ = assemble_program(forms, self.rules, store.n_targets)
        self.map_, self.y_ = None, None
        return self

    def _need_program(self) -> HingeProgram:
        if self.program_ is None:
            raise XcoreError("the model is not grounded yet: call model.ground(dataset) first")
        return self.program_

    def infer(self, warm_start: bool = True, method: str | None = None,
              progress: Progress | None = None) -> MAPResult:
        """MAP inference; `warm_start` starts from the previous MAP state (or the targets' initial values);
        `progress` hears the solver's iterations (a cancel stops it there)."""
        prog = self._need_program()
        y0 = None
        if warm_start and self.y_ is not None and len(self.y_) == prog.n_atoms:
            y0 = self.y_
        elif self.store_ is not None and np.isfinite(self.store_.target_initial).any():
            y0 = np.where(np.isfinite(self.store_.target_initial), self.store_.target_initial, 0.5)
        with limited_threads(1):
            res = map_inference(prog, method or self.inference, y0=y0, progress=progress)
        self.map_, self.y_ = res, res.y
        return res

    def _need_map(self) -> np.ndarray:
        if self.y_ is None:
            self.infer()
        return self.y_  # type: ignore[return-value]

    def predict(self) -> pd.DataFrame:
        """One row per target atom: atom_id, predicate, a0.., atom, prediction, truth, error."""
        y = self._need_map()
        store = self.store_
        frame = store.targets_frame().drop(columns=["value", "is_target"])  # type: ignore[union-attr]
        frame.insert(2, "atom", store.atom_text(store.target_ids))  # type: ignore[union-attr]
        frame["prediction"] = y
        frame["error"] = frame["prediction"] - frame["truth"]
        return frame

    def evaluate(self) -> dict[str, float]:
        """MSE, RMSE, MAE (and AUPR, AUROC for 0/1 truth) of the MAP state against the truth labels."""
        y = self._need_map()
        return prediction_metrics(y, self.store_.truth)  # type: ignore[union-attr]

    # ------------------------------------------------------------------ explanations
    def rule_explainable(self) -> np.ndarray:
        """Per rule: is it alpha-explainable under the grounded dataset's schema."""
        if self.store_ is None:
            raise XcoreError("ground the model first: explainability uses the dataset's predicate flags")
        return np.array([is_alpha_explainable(r, self.store_.schema, self.alpha, self.block) for r in self.rules],
                        dtype=bool)

    def explanation_frame(self, targets: np.ndarray | None = None, keep_zero: bool = False) -> pd.DataFrame:
        """Every (target, ground rule) pair with its score, ranked per target; see `xcore.psl.explain`."""
        return explanation_frame(self, targets=targets, keep_zero=keep_zero)

    def explain(self, atom, top_k: int | None = None, keep_zero: bool = False):
        """The ranked ground rules explaining one target (atom text, target index or (pred, args))."""
        col = self.target_column(atom)
        return explain_targets(self, np.array([col]), top_k=top_k, keep_zero=keep_zero)[0]

    def explain_all(self, top_k: int | None = None, keep_zero: bool = False):
        """Explanations of every target as an `ExplanationSet` (scores computed all at once)."""
        self._need_map()
        exps = explain_targets(self, np.arange(self.store_.n_targets), top_k=top_k, keep_zero=keep_zero)
        return ExplanationSet(exps, method="psl_ground_rules",
                              meta={"alpha": self.alpha, "score": "|w * dphi/dy|"})

    def target_column(self, atom) -> int:
        """Column (position among the targets) of a target given as text, index or (pred, args)."""
        if self.store_ is None:
            raise XcoreError("ground the model first")
        store = self.store_
        if isinstance(atom, (int, np.integer)) and not isinstance(atom, bool):
            if not 0 <= int(atom) < store.n_targets:
                raise XcoreError(f"target index {atom} is outside 0..{store.n_targets - 1}")
            return int(atom)
        if isinstance(atom, tuple) and len(atom) == 2 and isinstance(atom[0], str):
            pred, args = atom
            ids = store.lookup(pred, pd.DataFrame({f"a{i}": [str(a)] for i, a in enumerate(args)}))
            aid = int(ids[0])
        elif isinstance(atom, str):
            texts = store.atom_text(store.target_ids)
            hit = np.flatnonzero(texts == atom.replace("'", "").replace('"', ""))
            aid = int(store.target_ids[hit[0]]) if len(hit) else -1
        else:
            raise XcoreError(f"cannot read a target atom from {atom!r}")
        if aid < 0 or store.target_index[aid] < 0:
            raise XcoreError(f"{atom!r} is not a target atom of the grounded dataset")
        return int(store.target_index[aid])


def _as_rules(rules: Sequence[Rule | str] | str) -> list[Rule]:
    """Rules given as `Rule` objects or PSL text, as a list of rules."""
    if isinstance(rules, str):
        return parse_rules(rules, dialect="psl")
    out: list[Rule] = []
    for r in rules:
        if isinstance(r, Rule):
            out.append(r)
        elif isinstance(r, str):
            out.extend(parse_rules(r, dialect="psl"))
        else:
            raise XcoreError(f"a rule must be a Rule or PSL text, got {type(r).__name__}")
    return out
