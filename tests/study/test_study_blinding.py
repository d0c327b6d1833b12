"""Blinding by construction (issue 25, items 1-2): the same reasons dressed as every registered method's
explainers (their score specs, item kinds, rule syntax, extras, effects, scales, observed/roles flags,
explainable flags, target texts) give participant screens that are identical string for string, apart
from the condition's letter; no method name, score label, unit, kind or extra reaches a screen, and
reason words are never rewritten."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet, ScoreSpec
from xcore.methods import REGISTRY, Run
from xcore.study import ConditionSource, build_study
from xcore.study.definition import iexplain_feature_usefulness, top_reason_usefulness

pytestmark = pytest.mark.xdist_group("study-blinding")  # one worker: the module fixtures are built once

TARGETS = ("positive(r01)", "positive(r02)")
RELATIONAL_KINDS = ("ground_rule", "ground_formula", "rule", "feature_clause")
WORD_KINDS = ("word", "feature", "feature_set")
# words chosen to contain text that name scrubbing used to garble ("the model", "sublime", "rules", "SHAP")
CONTENT = (  # words, atoms (target first-body), base score, direction
    ("{t} and {o} are by the same user", ["same_user({t}, {o})", "positive({t})", "positive({o})"], 0.8, 1),
    ("{t} and {p} are about the same restaurant", ["same_restaurant({t}, {p})", "positive({t})", "positive({p})"],
     0.52, -1),
    ("the word's shape in review {t} is sublime", [], 0.33, 1),
    ("review {t} says these rules fire", [], 0.2, -1),
)


def explainers() -> list[tuple[str, str, ScoreSpec, str]]:
    """(method, explainer, score spec, title) of every registered explainer."""
    out = []
    for key in REGISTRY:
        spec = REGISTRY[key]
        for name, ex in spec.explainer_objects().items():
            out.append((key, name, ex.score_spec, f"{spec.title} {ex.title}".strip()))
    return out


def dressed(j: int, name: str, spec: ScoreSpec, title: str, target: str, directed_content: bool = True) -> Explanation:
    """The CONTENT reasons of `target` in the clothes of explainer number `j`."""
    t = target[len("positive("):-1]
    o, p = f"{t}x", f"{t}y"
    scale = 10.0 ** ((j % 5) - 2)  # every method's scores on its own scale
    items = []
    for i, (words, atoms, base, direction) in enumerate(CONTENT):
        d = direction if spec.directed and directed_content else 0
        atoms = [a.format(t=t, o=o, p=p) for a in atoms]
        score = base * scale * (d if spec.signed else 1)
        kinds = RELATIONAL_KINDS if atoms else WORD_KINDS
        syntax = [" ^ ", " & ", " AND "][j % 3]
        text = f"{spec.label}: " + (syntax.join(atoms[:2]) + [" => ", " -> ", " :- "][j % 3] + atoms[-1]
                                    if atoms else f"{name}[{i}]")
        items.append(ExplanationItem(
            kinds[(i + j) % len(kinds)], text, words.format(t=t, o=o, p=p), score, atoms=atoms,
            target_index=1 if atoms else None,
            observed=[True, False, True] if atoms and j % 2 else None,
            roles=["body", "body", "head"] if atoms and j % 3 else None,
            explainable=bool((i + j) % 3), direction=d,
            effect=(0.01 * (i + 1) * d) if d and j % 2 else None,
            extras={"weight": 1.5 + j, "force": 0.2 * d, "coalitions": f"{title}'s coalitions", "unit": spec.unit,
                    "method": name}))
    return Explanation(target=target, target_text=f"{title}: is {t} positive?" if j else f"{t} is a positive review",
                       method=name, prediction=0.8 if j == 0 else 0.8 - 0.01 * j, truth=1.0, items=items,
                       score_spec=spec, meta={"method": title}, prediction_kind="probability")


def run_of(j: int, method: str, name: str, spec: ScoreSpec, title: str, directed_content: bool = True) -> Run:
    exps = ExplanationSet([dressed(j, name, spec, title, t, directed_content) for t in TARGETS], method=name,
                          score_spec=spec)
    preds = pd.DataFrame({"target": list(TARGETS), "prediction": [0.8, 0.8], "truth": [1.0, 1.0]})
    return Run(method=method, settings={"secret_setting": title}, fingerprint=f"{j:016d}", predictions=preds,
               explanations={name: exps}, dataset="reviews_demo")


@pytest.fixture(scope="module")
def study():
    found = explainers()
    assert len(found) >= 10 and {m for m, *_ in found} == set(REGISTRY)
    sources = [ConditionSource(f"{title} run", run_of(j, m, name, spec, title), name)
               for j, (m, name, spec, title) in enumerate(found)]
    # the reference for explainers whose scores have no direction: the same reasons with no direction
    ref = ScoreSpec("reference", "reference.", signed=False, directed=True)
    sources.append(ConditionSource("ref run", run_of(len(found), "mln", "ref", ref, "Ref", directed_content=False),
                                   "ref"))
    s = build_study("blind", "Blinding", sources, list(TARGETS),
                    [*iexplain_feature_usefulness(), *top_reason_usefulness(3)], seed=1)
    return s, found


def view(study, item_id: str, code: str) -> dict:
    v = study.participant_screen(item_id, code, 0)
    assert v.pop("label") == f"Explanation {code}"
    v["graph"] = json.loads(v["graph"]) if v["graph"] else None
    return v


def shown_strings(v: dict) -> list[str]:
    """Every string a participant's screen carries (the graph's traces and title included)."""
    out: list[str] = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for val in x.values():
                walk(val)
        elif isinstance(x, list):
            for val in x:
                walk(val)
    g = v.get("graph")
    walk({k: val for k, val in v.items() if k != "graph"})
    if g:
        walk([{k: tr.get(k) for k in ("name", "text", "hovertext", "customdata", "legendgroup")} for tr in g["data"]])
        walk(g["layout"].get("title"))
    return out


def test_every_explainer_gives_the_same_screen_for_the_same_reasons(study):
    s, found = study
    codes = [c.code for c in s.conditions]
    directed = [code for code, (_, _, spec, _) in zip(codes, found) if spec.directed]
    undirected = [code for code, (_, _, spec, _) in zip(codes, found) if not spec.directed] + [codes[-1]]
    assert len(directed) >= 5 and len(undirected) >= 3
    for item in s.items:
        for group in (directed, undirected):
            first = view(s, item.id, group[0])
            for code in group[1:]:
                assert view(s, item.id, code) == first, (item.id, code, s.conditions[codes.index(code)].explainer)


def test_no_method_vocabulary_reaches_a_screen_and_words_are_kept(study):
    s, found = study
    forbidden = {"ground_rule", "ground_formula", "feature_clause", "feature_set", "weight", "force", "coalition",
                 "secret_setting", "reviews_demo", "=>", "->", ":-", " ^ ", "probability"}
    for m, name, spec, title in found:
        forbidden |= {m, name, title, spec.label, spec.measures, *([spec.unit] if spec.unit else [])}
        forbidden |= {part for part in name.split(":") if len(part) > 3}
    for item in s.items:
        for c in s.conditions:
            v = view(s, item.id, c.code)
            questions = v.pop("questions")  # the researcher's own questions, the same under every condition
            assert questions == view(s, item.id, "A")["questions"]
            text = "\n".join(shown_strings(v)).lower()
            t = item.target[len("positive("):-1]
            for words, atoms, *_ in CONTENT:  # the reasons themselves may say anything
                text = text.replace(words.format(t=t, o=f"{t}x", p=f"{t}y").lower(), "<reason>")
            hits = sorted(w for w in forbidden if w.lower() in text)
            assert not hits, (c.explainer, hits)
            shown = "\n".join(shown_strings(v))
            assert f"the word's shape in review {t} is sublime" in shown  # never garbled by name scrubbing
            assert f"review {t} says these rules fire" in shown


def test_directions_and_strengths_come_from_the_typed_items(study):
    s, found = study
    i = next(j for j, (_, _, spec, _) in enumerate(found) if spec.directed and not spec.signed)
    exp = s.items[0].explanations[s.conditions[i].code]
    assert [r.direction for r in exp.reasons] == [1, -1, 1, -1]
    assert [r.score for r in exp.reasons] == pytest.approx([1.0, 0.65, 0.41, 0.25], abs=0.005)
    assert "pushes it down" in exp.text.splitlines()[2] and "pushes it up" in exp.text.splitlines()[1]
    assert [r.relational for r in exp.reasons] == [True, True, False, False]
    # one caption for the whole study, whatever each condition's score is
    assert len({e.score_caption for it in s.items for e in it.explanations.values()}) == 1
    graph = json.loads(exp.graph)
    hovers = [h for tr in graph["data"] for h in (tr.get("hovertext") or []) if h.startswith("#")]
    assert hovers and all("strength" in h for h in hovers)
    assert np.isclose(s.items[0].prediction, 0.8)


def test_reasons_are_shown_strongest_first_whatever_the_explainers_order():
    spec = ScoreSpec("s", "s.", signed=False, directed=True)
    items = [ExplanationItem("word", f"w{i}", f"reason {i}", score, direction=1)
             for i, score in enumerate([0.5, 0.9, 0.2, 0.7])]
    exp = Explanation(target="positive(r01)", target_text="r01", prediction=0.9, items=items, ordering="given",
                      score_spec=spec)
    from xcore.study.build import render

    shown = render(exp, k=3)
    assert [r.natural for r in shown.reasons] == ["reason 1", "reason 0", "reason 2"]  # the given top 3, sorted
    assert [r.score for r in shown.reasons] == pytest.approx([1.0, 0.56, 0.22], abs=0.005)
