"""Tests of the shared explanation type, its JSON round trip and the shared metrics."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcore.errors import XcoreError
from xcore.explain import (
    ITEM_COLUMNS,
    ITEM_KINDS,
    Explanation,
    ExplanationError,
    ExplanationItem,
    ExplanationSet,
    explainable_at_k,
    mean_precision_at_k,
    mep_at_k,
    precision_at_k,
)

TARGET = "rating('u12', 'a29')"


def rule(text: str, score: float, explainable: bool = True, **kw) -> ExplanationItem:
    """A ground-rule item whose last atom is the target."""
    atoms = kw.pop("atoms", [f"b_{text}", TARGET])
    return ExplanationItem("ground_rule", text, f"because {text}", score, atoms=atoms,
                           target_index=len(atoms) - 1, explainable=explainable, **kw)


def ground_rule_explanation() -> Explanation:
    items = [
        ExplanationItem(
            "ground_rule", "0.5: likes('u12', 'g3') & genre('a29', 'g3') -> rating('u12', 'a29') ^2",
            "u12 likes g3 and a29 is a g3 album, so u12 rates a29 highly", 0.2,
            atoms=["likes('u12', 'g3')", "genre('a29', 'g3')", TARGET], target_index=2,
            roles=["body", "body", "head"], observed=[True, True, False], explainable=True,
            extras={"weight": 0.5, "distance": 0.4}),
        ExplanationItem(
            "ground_rule", "2.0: sim('a29', 'a7') & rating('u12', 'a7') -> rating('u12', 'a29')",
            "a29 is like a7, which u12 rated", -0.9,
            atoms=["sim('a29', 'a7')", "rating('u12', 'a7')", TARGET], target_index=2,
            roles=["body", "body", "head"], observed=[True, False, False], explainable=False,
            extras={"weight": 2.0}),
        ExplanationItem(
            "ground_rule", "1.0: ~rating('u12', 'a29')", "ratings are low by default", 0.5,
            atoms=[TARGET], target_index=0, roles=["head"], observed=[False], explainable=True),
    ]
    return Explanation(TARGET, "u12's rating of a29", "psl", prediction=0.75, truth=1.0, items=items,
                       meta={"gamma": 0.1})


def feature_set_explanation() -> Explanation:
    items = [
        ExplanationItem("feature_set", "{age>30, income=high}", "older with high income", 1.5,
                        atoms=["age>30", "income=high"], extras={"coefficient": 1.5, "interval": [1.1, 1.9]}),
        ExplanationItem("feature_clause", "smoker | age>60", "smoker or over 60", -2.5,
                        atoms=["smoker", "age>60"], explainable=False),
        ExplanationItem("feature_set", "{bmi>25}", "overweight", 0.25, atoms=["bmi>25"]),
    ]
    return Explanation("row 17", "patient 17", "plc", prediction=1.0, truth=0.0, items=items)


# ---------------------------------------------------------------------- ordering
def test_items_ranked_by_absolute_score_descending():
    e = ground_rule_explanation()
    assert [it.score for it in e.items] == [-0.9, 0.5, 0.2]
    assert e.ranked() == e.items and e.ranked() is not e.items
    assert [it.score for it in e.top(2)] == [-0.9, 0.5]
    assert e.top(0) == [] and len(e.top(99)) == 3


def test_ties_keep_given_order_and_other_orderings():
    items = [rule("a", 0.5), rule("b", -0.5), rule("c", 1.0), rule("d", 0.5)]
    assert [it.text for it in Explanation(TARGET, items=items).items] == ["c", "a", "b", "d"]
    assert [it.text for it in Explanation(TARGET, items=items, ordering="score").items] == ["c", "a", "d", "b"]
    assert [it.text for it in Explanation(TARGET, items=items, ordering="given").items] == ["a", "b", "c", "d"]


def test_top_rejects_negative_or_non_integer_k():
    e = ground_rule_explanation()
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ExplanationError):
            e.top(bad)


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, message", [
    (dict(kind="lifted"), "kind"),
    (dict(score=float("nan")), "finite"),
    (dict(score=float("inf")), "finite"),
    (dict(score="0.5"), "number"),
    (dict(atoms="p(a)"), "list of strings"),
    (dict(atoms=["p(a)", 3]), "string"),
    (dict(target_index=2), "outside"),
    (dict(target_index=True), "integer"),
    (dict(roles=["body"]), "roles"),
    (dict(roles=["body", "tail"]), "'tail'"),
    (dict(observed=[True]), "observed"),
    (dict(observed=[1, 0]), "true or false"),
    (dict(explainable="yes"), "true or false"),
    (dict(extras={"w": object()}), "JSON-safe"),
    (dict(extras={"w": float("nan")}), "finite"),
    (dict(extras={1: 2}), "not a string"),
])
def test_item_validation(kwargs, message):
    base = dict(kind="ground_rule", text="p(a) -> q(a)", natural="p implies q", score=0.5,
                atoms=["p(a)", "q(a)"], target_index=1)
    with pytest.raises(ExplanationError, match=message) as info:
        ExplanationItem(**{**base, **kwargs})
    assert isinstance(info.value, XcoreError)


def test_extras_and_meta_normalised_to_plain_json():
    item = ExplanationItem("ground_formula", "f", "f", np.float32(0.5), atoms=("p(a)",),
                           extras={"w": np.float64(2.0), "n": np.int64(3), "ok": np.bool_(True),
                                   "iv": (0.1, 0.2), "arr": np.array([1, 2])})
    assert item.score == 0.5 and type(item.score) is float
    assert item.atoms == ["p(a)"]
    assert item.extras == {"w": 2.0, "n": 3, "ok": True, "iv": [0.1, 0.2], "arr": [1, 2]}
    assert [type(item.extras[k]) for k in ("w", "n", "ok")] == [float, int, bool]
    e = Explanation("p(a)", items=[item], meta={"gamma": np.float64(0.25)})
    assert Explanation.from_json(e.to_json()) == e


def test_explanation_validation():
    with pytest.raises(ExplanationError, match="finite"):
        Explanation(TARGET, prediction=float("nan"))
    with pytest.raises(ExplanationError, match="ordering"):
        Explanation(TARGET, ordering="random")
    with pytest.raises(ExplanationError, match="not an ExplanationItem"):
        Explanation(TARGET, items=[{"kind": "formula"}])
    with pytest.raises(ExplanationError, match="explained twice"):
        ExplanationSet([Explanation("a"), Explanation("a")])


def test_item_atom_table():
    item = ground_rule_explanation().items[2]
    table = item.atom_table()
    assert table["atom"].tolist() == ["likes('u12', 'g3')", "genre('a29', 'g3')", TARGET]
    assert table["role"].tolist() == ["body", "body", "head"]
    assert table["observed"].tolist() == [True, True, False]
    assert table["is_target"].tolist() == [False, False, True]
    assert item.target_atom == TARGET
    assert ExplanationItem("ground_formula", "f", "f", 1.0, atoms=["x"]).target_atom is None


# ---------------------------------------------------------------------- frames
def test_to_frame_one_row_per_item_in_rank_order():
    f = ground_rule_explanation().to_frame()
    assert list(f.columns) == list(ITEM_COLUMNS)
    assert f["rank"].tolist() == [1, 2, 3]
    assert f["score"].tolist() == [-0.9, 0.5, 0.2]
    assert f["explainable"].tolist() == [False, True, True]
    assert f["target_atom"].tolist() == [TARGET] * 3
    assert f["roles"].iloc[0] == ["body", "body", "head"]
    assert f["observed"].iloc[0] == [True, False, False]
    assert json.loads(f["extras"].iloc[2]) == {"weight": 0.5, "distance": 0.4}
    assert f["score"].dtype == np.float64 and f["explainable"].dtype == bool


def test_to_frame_expand_extras():
    f = feature_set_explanation().to_frame(expand_extras=True)
    assert f["text"].tolist() == ["smoker | age>60", "{age>30, income=high}", "{bmi>25}"]
    assert f["extra_coefficient"].tolist()[1] == 1.5
    assert f["extra_coefficient"].isna().tolist() == [True, False, True]
    assert json.loads(f["extra_interval"].iloc[1]) == [1.1, 1.9]
    assert f["roles"].isna().all() and f["target_atom"].isna().all()


def test_empty_explanation_frame_has_columns():
    f = Explanation("row 3").to_frame()
    assert list(f.columns) == list(ITEM_COLUMNS) and len(f) == 0


# ---------------------------------------------------------------------- JSON
def test_json_round_trip_by_hand():
    for e in (ground_rule_explanation(), feature_set_explanation(), Explanation("x")):
        text = e.to_json()
        back = Explanation.from_json(text)
        assert back == e
        assert back.to_json() == text
        assert Explanation.from_json(e.to_json(indent=2)) == e
        assert Explanation.from_json(text.encode("utf-8")) == e


def test_json_keeps_given_ordering():
    items = [rule("a", 0.1), rule("b", 0.9)]
    e = Explanation(TARGET, items=items, ordering="given")
    back = Explanation.from_json(e.to_json())
    assert [it.text for it in back.items] == ["a", "b"] and back.ordering == "given"


def _valid() -> dict:
    return json.loads(ground_rule_explanation().to_json())


def _mutations():
    def set_(path, value):
        def f(d):
            obj = d
            for p in path[:-1]:
                obj = obj[p]
            obj[path[-1]] = value
            return json.dumps(d)
        return f

    def drop(path):
        def f(d):
            obj = d
            for p in path[:-1]:
                obj = obj[p]
            del obj[path[-1]]
            return json.dumps(d)
        return f

    return {
        "wrong format": (set_(["format"], "xcore.other"), "format"),
        "wrong version": (set_(["version"], 99), "version"),
        "version true": (set_(["version"], True), "version"),
        "missing target": (drop(["target"]), "missing 'target'"),
        "unknown field": (set_(["extra"], 1), "unknown field"),
        "items not list": (set_(["items"], {"a": 1}), "items must be"),
        "item not object": (set_(["items", 0], "ground rule"), "JSON object"),
        "score string": (set_(["items", 0, "score"], "0.5"), "number"),
        "score bool": (set_(["items", 0, "score"], True), "number"),
        "bad kind": (set_(["items", 1, "kind"], "clause"), "kind"),
        "missing natural": (drop(["items", 0, "natural"]), "missing 'natural'"),
        "unknown item field": (set_(["items", 0, "code"], "x"), "unknown field"),
        "bad target_index": (set_(["items", 0, "target_index"], 7), "outside"),
        "roles mismatch": (set_(["items", 0, "roles"], ["body"]), "roles"),
        "prediction string": (set_(["prediction"], "high"), "number"),
        "meta not object": (set_(["meta"], [1, 2]), "meta"),
        "target not string": (set_(["target"], 5), "string"),
    }


@pytest.mark.parametrize("name", sorted(_mutations()))
def test_malformed_json_structure_raises(name):
    mutate, message = _mutations()[name]
    with pytest.raises(ExplanationError, match=message):
        Explanation.from_json(mutate(_valid()))


@pytest.mark.parametrize("text, message", [
    ("", "malformed"),
    ("{", "malformed: line 1"),
    ('{"format": "xcore.explanation",\n "version": 1,\n oops}', "line 3"),
    ("[1, 2, 3]", "JSON object"),
    ("null", "JSON object"),
    ("__import__('os').system('echo pwned')", "malformed"),
    ('{"format": "xcore.explanation", "format": "xcore.explanation"}', "twice"),
    (b"\xff\xfe{}", "UTF-8"),
    ("[" * 100000 + "]" * 100000, "nested too deeply|malformed"),
])
def test_malformed_json_text_raises(text, message):
    with pytest.raises(ExplanationError, match=message):
        Explanation.from_json(text)


def test_non_finite_numbers_in_json_rejected():
    d = _valid()
    text = json.dumps(d).replace('"score": -0.9', '"score": NaN')
    assert "NaN" in text
    with pytest.raises(ExplanationError, match="NaN"):
        Explanation.from_json(text)
    with pytest.raises(ExplanationError, match="Infinity"):
        Explanation.from_json(json.dumps(d).replace('"truth": 1.0', '"truth": -Infinity'))


def test_from_json_rejects_non_text():
    with pytest.raises(ExplanationError, match="string"):
        Explanation.from_json({"format": "xcore.explanation"})  # type: ignore[arg-type]


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
json_values = st.recursive(
    json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                          st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)


@st.composite
def items(draw) -> ExplanationItem:
    atoms = draw(st.lists(st.text(max_size=12), max_size=4))
    n = len(atoms)
    with_roles = draw(st.booleans())
    return ExplanationItem(
        kind=draw(st.sampled_from(ITEM_KINDS)),
        text=draw(st.text(max_size=30)),
        natural=draw(st.text(max_size=30)),
        score=draw(st.floats(allow_nan=False, allow_infinity=False)),
        atoms=atoms,
        target_index=draw(st.none() | st.integers(0, n - 1)) if n else None,
        roles=draw(st.lists(st.sampled_from(["body", "head"]), min_size=n, max_size=n)) if with_roles else None,
        observed=draw(st.lists(st.booleans(), min_size=n, max_size=n)) if with_roles else None,
        explainable=draw(st.booleans()),
        extras=draw(st.dictionaries(st.text(max_size=6), json_values, max_size=3)),
    )


@st.composite
def explanations(draw, target=None) -> Explanation:
    return Explanation(
        target=target if target is not None else draw(st.text(max_size=20)),
        target_text=draw(st.text(max_size=20)),
        method=draw(st.sampled_from(["psl", "mln", "plc", ""])),
        prediction=draw(st.none() | st.floats(0, 1)),
        truth=draw(st.none() | st.floats(0, 1)),
        items=draw(st.lists(items(), max_size=6)),
        meta=draw(st.dictionaries(st.text(max_size=6), json_values, max_size=3)),
        ordering=draw(st.sampled_from(["abs_score", "score", "given"])),
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(explanations())
def test_json_round_trip_random(e):
    back = Explanation.from_json(e.to_json())
    assert back == e
    # exact, not merely approximately equal: identical JSON and bit-identical scores
    assert back.to_json() == e.to_json()
    assert [math.copysign(1, it.score) for it in back.items] == [math.copysign(1, it.score) for it in e.items]
    scores = np.array([abs(it.score) for it in e.items])
    if e.ordering == "abs_score":
        assert np.all(np.diff(scores) <= 0)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(max_size=10), unique=True, max_size=4).flatmap(
    lambda ts: st.tuples(*[explanations(target=t) for t in ts])))
@pytest.mark.slow
def test_set_json_round_trip_random(exps):
    s = ExplanationSet(list(exps), method="psl", meta={"k": 1})
    back = ExplanationSet.from_json(s.to_json())
    assert back == s and back.targets == s.targets
    assert len(back.to_frame()) == sum(e.n_items for e in exps)


# ---------------------------------------------------------------------- collection
def test_explanation_set_access_and_frames():
    s = ExplanationSet([ground_rule_explanation(), Explanation("q(b)", method="psl"), feature_set_explanation()],
                       method="mixed")
    assert len(s) == 3 and s.targets == [TARGET, "q(b)", "row 17"]
    assert s[TARGET].prediction == 0.75 and s[2].target == "row 17" and s[-1].target == "row 17"
    assert [e.target for e in s] == s.targets
    assert "q(b)" in s and "r(c)" not in s
    with pytest.raises(KeyError):
        s["r(c)"]
    with pytest.raises(TypeError):
        s[1.0]  # type: ignore[index]

    f = s.to_frame()
    assert list(f.columns[:5]) == ["target", "target_text", "method", "prediction", "truth"]
    assert list(f.columns[5:]) == list(ITEM_COLUMNS)
    assert len(f) == 6  # the item-less target adds no rows
    assert f["target"].tolist() == [TARGET] * 3 + ["row 17"] * 3
    assert f["rank"].tolist() == [1, 2, 3, 1, 2, 3]
    assert f["score"].tolist() == [-0.9, 0.5, 0.2, -2.5, 1.5, 0.25]
    assert f["prediction"].tolist() == [0.75] * 3 + [1.0] * 3
    pd.testing.assert_frame_equal(f[f["target"] == "row 17"].drop(columns=list(f.columns[:5])).reset_index(drop=True),
                                  feature_set_explanation().to_frame())
    wide = s.to_frame(expand_extras=True)
    assert wide["extra_weight"].tolist()[:3] == [2.0, None, 0.5]
    assert wide["extra_coefficient"].tolist()[3:] == [None, 1.5, None]

    summ = s.summary()
    assert summ["n_items"].tolist() == [3, 0, 3]
    assert summ["n_explainable"].tolist() == [2, 0, 2]
    assert summ["top_explainable"].tolist() == [False, False, False]
    assert summ["top_score"].iloc[0] == -0.9 and np.isnan(summ["top_score"].iloc[1])
    assert np.isnan(summ["prediction"].iloc[1])


def test_empty_set():
    s = ExplanationSet()
    assert len(s) == 0 and list(s) == []
    assert list(s.to_frame().columns[5:]) == list(ITEM_COLUMNS) and len(s.to_frame()) == 0
    assert ExplanationSet.from_json(s.to_json()) == s


def test_set_malformed_json():
    good = json.loads(ExplanationSet([ground_rule_explanation()]).to_json())
    with pytest.raises(ExplanationError, match="format"):
        ExplanationSet.from_json(ground_rule_explanation().to_json())
    bad = json.loads(json.dumps(good))
    bad["explanations"][0]["items"][0]["score"] = None
    with pytest.raises(ExplanationError, match="explanation 0.*item 0"):
        ExplanationSet.from_json(json.dumps(bad))
    dup = json.loads(json.dumps(good))
    dup["explanations"].append(dup["explanations"][0])
    with pytest.raises(ExplanationError, match="twice"):
        ExplanationSet.from_json(json.dumps(dup))
    with pytest.raises(ExplanationError, match="malformed"):
        ExplanationSet.from_json("{'format': 'xcore.explanation_set'}")


# ---------------------------------------------------------------------- metrics
def _exp(target: str, flags: list[bool]) -> Explanation:
    """Explanation with items in the given rank order (scores decreasing) and explainable flags."""
    its = [rule(f"{target}{i}", 1.0 - 0.1 * i, flag) for i, flag in enumerate(flags)]
    return Explanation(target, items=its)


def test_mep_at_k_hand_computed():
    exps = [
        _exp("a", [True, False]),          # hit at k=1
        _exp("b", [False, True, False]),   # hit from k=2
        _exp("c", [False, False, False]),  # never
        _exp("d", []),                     # empty explanation: always a miss, still counted
        _exp("e", [False, False, True]),   # hit from k=3
    ]
    assert mep_at_k(exps, 1) == pytest.approx(1 / 5)
    assert mep_at_k(exps, 2) == pytest.approx(2 / 5)
    assert mep_at_k(exps, 3) == pytest.approx(3 / 5)
    assert mep_at_k(exps, 100) == pytest.approx(3 / 5)
    assert mep_at_k(ExplanationSet(exps), 2) == pytest.approx(2 / 5)
    assert explainable_at_k(exps, 2).tolist() == [True, True, False, False, False]
    assert mep_at_k(exps[0], 1) == 1.0 and mep_at_k([exps[3]], 1) == 0.0


def test_mep_at_k_uses_rank_not_input_order():
    # the explainable item is given first but has the smaller |score|, so it ranks second
    e = Explanation("t", items=[rule("small", 0.1, True), rule("big", -0.8, False)])
    assert mep_at_k([e], 1) == 0.0 and mep_at_k([e], 2) == 1.0


def test_mep_at_k_edge_cases():
    assert math.isnan(mep_at_k([], 1))
    with pytest.raises(ExplanationError):
        mep_at_k([_exp("a", [True])], 0)
    with pytest.raises(ExplanationError, match="not an Explanation"):
        mep_at_k(["a"], 1)  # type: ignore[list-item]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=5), max_size=6), st.integers(1, 6))
def test_mep_at_k_matches_frame_reference(flag_lists, k):
    exps = [_exp(f"t{i}", flags) for i, flags in enumerate(flag_lists)]
    s = ExplanationSet(exps)
    f = s.to_frame()
    hits = f[(f["rank"] <= k) & f["explainable"]]["target"].nunique()
    expected = hits / len(exps) if exps else float("nan")
    got = mep_at_k(s, k)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


def test_precision_at_k_hand_computed():
    e = _exp("t", [True, False, True, False])  # texts t0, t1, t2, t3 in rank order
    assert precision_at_k(e, {"t0", "t2"}, 1) == 1.0
    assert precision_at_k(e, {"t0", "t2"}, 2) == 0.5
    assert precision_at_k(e, {"t0", "t2"}, 4) == 0.5
    assert precision_at_k(e, ["t3"], 3) == 0.0
    assert precision_at_k(e, {"t0", "t1", "t2", "t3"}, 8) == 0.5  # missing slots count as not relevant
    assert precision_at_k(_exp("u", []), {"x"}, 3) == 0.0
    with pytest.raises(ExplanationError):
        precision_at_k(e, "t0", 1)
    with pytest.raises(ExplanationError):
        precision_at_k(e, {"t0"}, 0)
    exps = [e, _exp("u", [True, True])]
    assert mean_precision_at_k(exps, {"t": {"t0"}, "u": {"u0", "u1"}}, 2) == pytest.approx((0.5 + 1.0) / 2)
    assert mean_precision_at_k(exps, {}, 2) == 0.0
    assert math.isnan(mean_precision_at_k([], {}, 2))
