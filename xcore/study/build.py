"""Build a study from runs: pick conditions (run + explainer), pick items, render explanations, freeze.

Blind by construction: a participant's view of an explanation is built only from its typed content
(each reason's words, its direction and its strength relative to the strongest reason shown, the atoms
it links), never from a method's own text. Every other string a participant receives (the paragraph's
frame, the caption, the graph's title, legend and hover layout, the score's name) is the same for
every condition of a study; method names, score labels and units, item kinds, canonical rule syntax
and method extras never reach a screen. Rendering happens once, here: the paragraph, the ranked
reasons and the graph (plotly JSON) are stored in the `Study`, so later code changes cannot alter
what participants see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

import numpy as np

from xcore.errors import ConfigError
from xcore.explain.render import direction_phrase
from xcore.explain.types import Explanation, ExplanationItem, ScoreSpec, Target
from xcore.methods.base import Run
from xcore.methods.run import explainer_aliases
from xcore.study.definition import (
    CODES,
    RELATIONAL_KINDS,
    Condition,
    Question,
    Reason,
    RenderedExplanation,
    Study,
    StudyItem,
)

GRAPH_KINDS = {"ground_rule", "ground_formula"}
NEUTRAL_SPEC = ScoreSpec(label="strength", measures="how strongly the reason bears on the prediction, relative to "
                         "the strongest reason shown (1 = the strongest).", signed=False, directed=True)
"""The one score every condition's reasons are shown with (graph hover included)."""
CAPTIONS = {
    "directed": "Reasons are listed from strongest to weakest. Strength is relative to the strongest reason of "
                "this explanation (1 = the strongest). Each reason says whether it pushes the prediction up or "
                "down where the explanation gives a direction.",
    "undirected": "Reasons are listed from strongest to weakest. Strength is relative to the strongest reason of "
                  "this explanation (1 = the strongest).",
}
"""The neutral caption per score kind; a study shows one caption under every condition (the directed one
as soon as any condition's scores have directions), so the caption never tells conditions apart."""
GRAPH_TITLE = "How the reasons connect"
ItemMode = Literal["random", "stratified", "hand"]


@dataclass(frozen=True)
class ConditionSource:
    """Where one condition's explanations come from: a run (labelled for the researcher) and an explainer."""

    run_label: str
    run: Run
    explainer: str

    def explanations(self):
        """The run's explanations by this explainer, under its name today or an old one (`explainer_aliases`)."""
        name = self.explainer
        if name not in self.run.explanations:
            aliases = explainer_aliases(self.run.method)
            others = [aliases.get(name)] + [old for old, new in aliases.items() if new == name]
            name = next((n for n in others if n and n in self.run.explanations), name)
        if name not in self.run.explanations:
            raise ConfigError(f"run {self.run_label!r} has no explanations by {self.explainer!r}; it has "
                              f"{', '.join(self.run.explanations) or 'none'}", field="conditions")
        return self.run.explanations[name]


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


def is_relational(item: ExplanationItem, target_predicate: str | None) -> bool:
    """A reason is relational when it links the prediction to another atom of the target's predicate
    (another review, another rating): I-Explain's relational vs word features. Decided by the atoms it
    links, whatever the method calls the item; a lifted rule (no ground atoms) by its kind."""
    if not item.atoms or target_predicate is None:
        return item.kind in RELATIONAL_KINDS
    heads = [a for a in item.atoms if (ref := Target.parse(a)) is not None and ref.predicate == target_predicate]
    return len(set(heads)) >= 2


def reason_direction(item: ExplanationItem, spec: ScoreSpec | None) -> int:
    """Which way a reason pushes the prediction (+1, -1, 0): the item's typed `direction` (set by its
    explainer); 0 under a score that has no direction. The one place the study reads a direction."""
    return int(item.direction) if spec is None or spec.directed else 0


def strengths(items: list[ExplanationItem]) -> np.ndarray:
    """|score| relative to the largest |score| shown, rounded to 2 decimals (scales and units of
    different methods cannot be told apart; 0 when every score is 0)."""
    mags = np.abs(np.array([it.score for it in items], dtype=float))
    top = mags.max() if mags.size else 0.0
    return np.round(mags / top, 2) if top > 0 else np.zeros_like(mags)


def caption_for(sources_directed: Iterable[bool]) -> str:
    """The study's one neutral caption, from the score kinds of its conditions."""
    return CAPTIONS["directed" if any(sources_directed) else "undirected"]


def render(exp: Explanation, k: int = 5, graph: bool = True, show_truth: bool = False, prompt: str | None = None,
           prediction: float | None = None, caption: str | None = None) -> RenderedExplanation:
    """An explanation as participants will see it, built from its typed content only (words, direction,
    relative strength, atoms): no method name, score label, unit, item kind, rule syntax or extras.
    `prompt` and `prediction` are the study item's (shared by every condition)."""
    top = exp.top(k)  # the explainer's own top k, shown strongest first (as the caption says)
    items = [top[i] for i in np.argsort(-np.abs([it.score for it in top]), kind="stable")]
    ref = Target.parse(exp.target)
    predicate = ref.predicate if ref is not None else None
    strength = strengths(items)
    words = [" ".join((it.natural or it.text).split()) for it in items]
    dirs = [reason_direction(it, exp.score_spec) for it in items]
    reasons = tuple(Reason(natural=w, score=float(st), relational=is_relational(it, predicate), direction=d)
                    for it, w, st, d in zip(items, words, strength, dirs))
    lines = [f"{i}. {r.natural} (strength {r.score:.2f}{', ' + direction_phrase(r.direction) if r.direction else ''})"
             for i, r in enumerate(reasons, start=1)]
    head = "The strongest reason:" if len(reasons) == 1 else f"The {len(reasons)} strongest reasons, strongest first:"
    text = "\n".join([head, *lines]) if reasons else "This explanation gives no reasons."
    figure = None
    if graph and any(it.kind in GRAPH_KINDS | {"rule"} and len(it.atoms) > 1 for it in items):
        # plotly: imported only when an item shows its reasons as a graph (xcore.study stays light without)
        from xcore.viz import explanation_graph_figure

        neutral = Explanation(
            target=exp.target, target_text=prompt if prompt is not None else exp.target,
            prediction=prediction if prediction is not None else exp.prediction,
            truth=exp.truth if show_truth else None, ordering="given", score_spec=NEUTRAL_SPEC,
            items=[ExplanationItem("ground_rule" if len(it.atoms) > 1 else "feature", r.natural, r.natural, r.score,
                                   atoms=list(it.atoms) if len(it.atoms) > 1 else [],
                                   target_index=it.target_index if len(it.atoms) > 1 else None,
                                   direction=r.direction)
                   for it, r in zip(items, reasons)])
        figure = explanation_graph_figure(neutral, k=k, title=GRAPH_TITLE).to_json()
    return RenderedExplanation(text=text, reasons=reasons, graph=figure,
                               score_caption=caption if caption is not None else caption_for(
                                   [exp.score_spec is None or exp.score_spec.directed]))


def build_study(study_id: str, title: str, sources: list[ConditionSource], targets: list[str],
                questions: Iterable[Question], design: str = "between", seed: int = 0, consent: str = "",
                instructions: str = "", k: int = 5, graph: bool = True, show_truth: bool = False,
                tolerance: float = 0.5) -> Study:
    """A frozen study: one condition per source (codes A, B, ...), items rendered under every condition."""
    if len(sources) > len(CODES):
        raise ConfigError(f"at most {len(CODES)} conditions, got {len(sources)}", field="conditions")
    if not targets:
        raise ConfigError("pick at least one item", field="items")
    conditions = tuple(Condition(code=CODES[i], method=s.run.method, explainer=s.explainer,
                                 settings=s.run.settings_dict, source=s.run_label) for i, s in enumerate(sources))
    sets = [s.explanations() for s in sources]
    caption = caption_for(es.score_spec is None or es.score_spec.directed for es in sets)
    items = []
    for n, target in enumerate(targets):
        first = sets[0][target] if target in sets[0] else None
        if first is None or any(target not in es for es in sets):
            raise ConfigError(f"{target!r} is not explained under every condition", field="items")
        prompt = first.target_text or first.target
        items.append(StudyItem(
            id=f"item{n + 1:03d}", target=target, prompt=prompt,
            prediction=first.prediction, truth=first.truth, correct=is_correct(first, tolerance),
            explanations={c.code: render(es[target], k=k, graph=graph, show_truth=show_truth, prompt=prompt,
                                         prediction=first.prediction, caption=caption)
                          for c, es in zip(conditions, sets)}))
    default_consent = ("You are invited to rate explanations of a model's predictions. Taking part is voluntary; "
                       "you can stop at any time. Your answers are stored without your name.")
    return Study(id=study_id, title=title, consent=consent or default_consent, instructions=instructions,
                 design=design, seed=int(seed), conditions=conditions, items=tuple(items),
                 questions=tuple(questions), show_truth=show_truth)
