"""Build a study from runs: pick conditions (run + explainer), pick items, render explanations, freeze.

Rendering happens once, here: the paragraph, the ranked reasons and the graph (plotly JSON) are
stored in the `Study`, so later code changes cannot alter what participants see.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

import numpy as np

from xcore.errors import ConfigError, XcoreError
from xcore.explain.text import explanation_text
from xcore.explain.types import Explanation, ExplanationItem, Target
from xcore.methods.base import Run
from xcore.study.definition import (CODES, RELATIONAL_KINDS, Condition, Question, Reason, RenderedExplanation,
                                    Study, StudyItem)

GRAPH_KINDS = {"ground_rule", "ground_formula"}
ItemMode = Literal["random", "stratified", "hand"]


@dataclass(frozen=True)
class ConditionSource:
    """Where one condition's explanations come from: a run (labelled for the researcher) and an explainer."""

    run_label: str
    run: Run
    explainer: str

    def explanations(self):
        if self.explainer not in self.run.explanations:
            raise ConfigError(f"run {self.run_label!r} has no explanations by {self.explainer!r}; it has "
                              f"{', '.join(self.run.explanations) or 'none'}", field="conditions")
        return self.run.explanations[self.explainer]


def candidate_targets(sources: list[ConditionSource]) -> list[str]:
    """Targets explained under every condition (in the first condition's order)."""
    if not sources:
        raise ConfigError("pick at least one condition", field="conditions")
    sets = [s.explanations() for s in sources]
    common = set(sets[0].targets).intersection(*[set(s.targets) for s in sets[1:]])
    return [t for t in sets[0].targets if t in common]


def is_correct(exp: Explanation, tolerance: float = 0.5) -> bool | None:
    """Whether the prediction is within `tolerance` of the truth (None when either is unknown);
    0.5 on 0/1 labels is thresholding at one half."""
    if exp.prediction is None or exp.truth is None:
        return None
    return bool(abs(exp.prediction - exp.truth) <= tolerance)


def pick_items(sources: list[ConditionSource], n: int, mode: ItemMode = "random", seed: int = 0,
               chosen: Iterable[str] = (), tolerance: float = 0.5) -> list[str]:
    """Item targets: `n` at random, `n` stratified half correct / half incorrect, or the `chosen` ones."""
    targets = candidate_targets(sources)
    if not targets:
        raise ConfigError("no target is explained under every chosen condition", field="conditions")
    if mode == "hand":
        picked = list(dict.fromkeys(chosen))
        missing = [t for t in picked if t not in set(targets)]
        if missing:
            raise ConfigError(f"{missing[0]!r} is not explained under every condition", field="items")
        if not picked:
            raise ConfigError("hand-pick at least one item", field="items")
        return picked
    if n < 1:
        raise ConfigError(f"a study needs at least one item, got {n}", field="items")
    rng = np.random.default_rng(seed)
    if mode == "random":
        idx = rng.choice(len(targets), size=min(n, len(targets)), replace=False)
        return [targets[i] for i in sorted(idx)]
    if mode != "stratified":
        raise ConfigError(f"item selection {mode!r} is not random, stratified or hand", field="items")
    first = sources[0].explanations()
    flags = np.array([is_correct(first[t], tolerance) for t in targets], dtype=object)
    right = [t for t, f in zip(targets, flags) if f is True]
    wrong = [t for t, f in zip(targets, flags) if f is False]
    if not right or not wrong:
        raise ConfigError("stratified selection needs both correct and incorrect predictions with known truth "
                          f"({len(right)} correct, {len(wrong)} incorrect)", field="items")
    n_wrong = min(len(wrong), n // 2)
    n_right = min(len(right), n - n_wrong)
    pick = set(rng.choice(right, size=n_right, replace=False)) | set(rng.choice(wrong, size=n_wrong, replace=False))
    return [t for t in targets if t in pick]


def _scrub(text: str, names: Iterable[str]) -> str:
    """`text` with every method/explainer name replaced by a neutral word (blinding)."""
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(re.escape(name), "the model", text, flags=re.IGNORECASE)
    return text


def is_relational(item: ExplanationItem, target_predicate: str | None) -> bool:
    """A reason is relational when it is a rule or formula linking the prediction to another atom of the
    target's predicate (another review, another rating): I-Explain's relational vs word features."""
    if item.kind not in RELATIONAL_KINDS:
        return False
    if target_predicate is None or not item.atoms:
        return True
    heads = [a for a in item.atoms if (ref := Target.parse(a)) is not None and ref.predicate == target_predicate]
    return len(set(heads)) >= 2


def render(exp: Explanation, k: int = 5, graph: bool = True, hide: Iterable[str] = (),
           show_truth: bool = False) -> RenderedExplanation:
    """An explanation as participants will see it (method names removed; the true value only when
    `show_truth`), computed once."""
    hide = list(hide)
    plain = Explanation(target=exp.target, target_text=exp.target_text, prediction=exp.prediction,
                        prediction_kind=exp.prediction_kind,
                        truth=exp.truth if show_truth else None, items=exp.top(k), ordering="given",
                        score_spec=exp.score_spec)
    ref = Target.parse(exp.target)
    predicate = ref.predicate if ref is not None else None
    reasons = tuple(Reason(natural=_scrub(it.natural or it.text, hide), score=float(it.score),
                           relational=is_relational(it, predicate)) for it in plain.items)
    figure = None
    if graph and any(it.kind in GRAPH_KINDS and len(it.atoms) > 1 for it in plain.items):
        from xcore.viz import explanation_graph_figure

        figure = explanation_graph_figure(plain, k=k, title="How the reasons connect").to_json()
    caption = _scrub(exp.score_spec.caption(), hide) if exp.score_spec is not None else ""
    return RenderedExplanation(text=_scrub(explanation_text(plain, k=k), hide), reasons=reasons,
                               score_caption=caption, graph=figure)


def build_study(study_id: str, title: str, sources: list[ConditionSource], targets: list[str],
                questions: Iterable[Question], design: str = "between", seed: int = 0, consent: str = "",
                instructions: str = "", k: int = 5, graph: bool = True, show_truth: bool = False,
                tolerance: float = 0.5) -> Study:
    """A frozen study: one condition per source (codes A, B, ...), items rendered under every condition."""
    if len(sources) > len(CODES):
        raise ConfigError(f"at most {len(CODES)} conditions, got {len(sources)}", field="conditions")
    if not targets:
        raise ConfigError("pick at least one item", field="items")
    hide = set()
    for s in sources:
        hide |= {s.run.method, s.explainer, *s.explainer.split(":")}
        try:
            from xcore.methods import REGISTRY

            hide.add(REGISTRY[s.run.method].title)
        except XcoreError:
            pass
    conditions = tuple(Condition(code=CODES[i], method=s.run.method, explainer=s.explainer,
                                 settings=s.run.settings_dict, source=s.run_label) for i, s in enumerate(sources))
    sets = [s.explanations() for s in sources]
    items = []
    for n, target in enumerate(targets):
        first = sets[0][target] if target in sets[0] else None
        if first is None or any(target not in es for es in sets):
            raise ConfigError(f"{target!r} is not explained under every condition", field="items")
        items.append(StudyItem(
            id=f"item{n + 1:03d}", target=target, prompt=first.target_text or first.target,
            prediction=first.prediction, truth=first.truth, correct=is_correct(first, tolerance),
            explanations={c.code: render(es[target], k=k, graph=graph, hide=hide, show_truth=show_truth)
                          for c, es in zip(conditions, sets)}))
    default_consent = ("You are invited to rate explanations of a model's predictions. Taking part is voluntary; "
                       "you can stop at any time. Your answers are stored without your name.")
    return Study(id=study_id, title=title, consent=consent or default_consent, instructions=instructions,
                 design=design, seed=int(seed), conditions=conditions, items=tuple(items),
                 questions=tuple(questions), show_truth=show_truth)
