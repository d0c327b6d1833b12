"""Study definitions: validation, export/import, frozen digest, blinding, Latin squares and plans."""

from __future__ import annotations

import json
from collections import Counter
from itertools import permutations

import numpy as np
import pytest
from study_helpers import make_run, make_study

from xcore.errors import ConfigError, XcoreError
from xcore.study import (
    ConditionSource,
    Question,
    Study,
    balanced_latin_square,
    build_study,
    participant_plan,
    pick_items,
)
from xcore.study.definition import TEMPLATES, explanation_satisfaction_scale, iexplain_feature_usefulness


def test_export_import_round_trip_and_digest():
    s = make_study()
    again = Study.from_json(s.to_json())
    assert again == s and again.digest() == s.digest()
    other = make_study(seed=8)
    assert other.digest() != s.digest()


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(design="mixed"), "design"),
    (lambda d: d["questions"][0].update(kind="slider"), "questions.0.kind"),
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d.update(id="bad id!"), "id"),
])
def test_malformed_definitions_name_the_field(mutate, field):
    d = json.loads(make_study().to_json())
    mutate(d)
    with pytest.raises(ConfigError) as e:
        Study.from_json(json.dumps(d))
    assert e.value.field == field


def test_definition_consistency_checks():
    d = json.loads(make_study().to_json())
    del d["items"][0]["explanations"]["B"]
    with pytest.raises(ConfigError, match="one explanation per condition"):
        Study.from_json(json.dumps(d))
    with pytest.raises(XcoreError, match="malformed"):
        Study.from_json("{not json")
    with pytest.raises(ConfigError, match="not an xcore study"):
        Study.from_json(json.dumps({"format": "other"}))
    with pytest.raises(ConfigError, match="expected answer"):
        Question(id="att", kind="attention", text="pick 4")


def test_templates_ship_ess_and_iexplain_ratings():
    ess = explanation_satisfaction_scale()
    assert len(ess) == 8 and all(q.kind == "likert" and q.scale == 5 for q in ess)
    assert "satisfying" in ess[1].text
    parts = {q.part for q in iexplain_feature_usefulness()}
    assert parts == {"relational", "non_relational"}
    for make in TEMPLATES.values():
        assert all(isinstance(q, Question) for q in make())


def test_participant_screens_are_blinded():
    """No method, explainer or settings value reaches a participant screen; only 'Explanation A/B'."""
    s = make_study()
    names = ["mln", "i-explain", "lime", "Markov", "I-Explain", "LIME", "toy run"]
    for code in "AB":
        for pos, item in enumerate(s.items):
            view = json.dumps(s.participant_screen(item.id, code, pos))
            assert f"Explanation {code}" in view
            for name in names:
                assert name.lower() not in view.lower(), (name, view[:200])
            assert "expected" not in view  # the right answer of attention checks stays on the server
    # the researcher part of the definition keeps the sources
    assert {c.explainer for c in s.conditions} == {"mln:i-explain", "lime"}


def test_rendering_is_frozen_and_hides_truth_by_default():
    s = make_study()
    exp = s.items[0].explanations["A"]
    assert "true" not in exp.text and exp.graph is not None
    assert [r.relational for r in exp.reasons].count(True) == 2  # links to other reviews; words are not relational
    shown = make_study().items[0].explanations["A"]
    assert shown == exp  # the same inputs render the same frozen text


def test_feature_questions_follow_the_parts_and_attention_every_k():
    s = make_study(attention_every=3)
    asked = [[q.id for q in s.screen_questions(it.id, "A", pos)] for pos, it in enumerate(s.items)]
    assert ["attention" in a for a in asked] == [False, False, True, False, False, True]
    assert all("useful_relational" in a and "useful_non_relational" in a for a in asked)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_balanced_latin_square_properties(n):
    sq = balanced_latin_square(n)
    rows = len(sq)
    assert rows == (n if n % 2 == 0 else 2 * n)
    assert all(sorted(r) == list(range(n)) for r in sq)  # each row is an order of all conditions
    for col in range(n):  # every condition in every position equally often
        assert Counter(sq[:, col]) == {c: rows // n for c in range(n)}
    pairs = Counter((int(r[j]), int(r[j + 1])) for r in sq for j in range(n - 1))
    expected = rows * (n - 1) // (n * (n - 1))
    assert set(pairs) == set(permutations(range(n), 2)) and set(pairs.values()) == {expected}


def test_plans_between_within_and_reproducible():
    between = make_study(design="between")
    plans = [participant_plan(between, i) for i in range(8)]
    assert [p[0][1] for p in plans] == list("ABABABAB")  # balanced group sizes
    assert all(len({c for _, c in p}) == 1 for p in plans)
    assert plans[0] == participant_plan(between, 0)  # from the stored seed
    assert len({tuple(i for i, _ in p) for p in plans}) > 1  # item orders differ between participants
    within = make_study(design="within", conditions=3)
    for i in range(6):
        plan = participant_plan(within, i)
        codes = [c for _, c in plan]
        row = balanced_latin_square(3)[i % 6]
        assert codes[:3] == ["ABC"[j] for j in row]
        assert sorted(it for it, _ in plan) == sorted(it.id for it in within.items)  # every item once


def test_item_selection_modes():
    run = make_run()
    sources = [ConditionSource("r", run, name) for name in run.explanations]
    assert pick_items(sources, 4, "random", seed=1) == pick_items(sources, 4, "random", seed=1)
    strat = pick_items(sources, 6, "stratified", seed=0)
    flags = [abs(run.explanations["lime"][t].prediction - run.explanations["lime"][t].truth) <= 0.5 for t in strat]
    assert len(strat) == 6 and flags.count(False) == 3
    assert pick_items(sources, 0, "hand", chosen=["positive(r03)"]) == ["positive(r03)"]
    with pytest.raises(ConfigError, match="not explained"):
        pick_items(sources, 0, "hand", chosen=["positive(r99)"])
    with pytest.raises(ConfigError, match="no explanations by"):
        build_study("x", "t", [ConditionSource("r", run, "nope")], ["positive(r01)"], [])


def test_run_bundle_round_trip_builds_the_same_study():
    run = make_run()
    from xcore.methods import Run

    again = Run.from_bundle(run.to_json())
    a = build_study("b", "t", [ConditionSource("r", run, "lime")], ["positive(r01)"], iexplain_feature_usefulness())
    b = build_study("b", "t", [ConditionSource("r", again, "lime")], ["positive(r01)"], iexplain_feature_usefulness())
    assert a.digest() == b.digest()
    assert np.isclose(a.items[0].prediction, run.explanations["lime"]["positive(r01)"].prediction)


def test_an_imported_graph_must_be_a_plotly_figure():
    """A definition whose graph is not Plotly JSON is refused on import, naming the field (issue 25, item 7)."""
    import json

    text = make_study().to_json()
    item = next(i for i, it in enumerate(json.loads(text)["items"]) if it["explanations"]["A"]["graph"])
    for bad, why in [("not json", "not JSON"), ("[1, 2]", "Plotly figure"), ("null", "Plotly figure"),
                     ('{"data": [{"type": "nope"}]}', "not a valid Plotly figure"),
                     ('{"data": [{"type": "scatter", "x": [1], "bogus": 2}]}', "bogus"),
                     ('{"data": [], "layout": {}, "script": "x"}', "Plotly figure")]:
        data = json.loads(text)
        data["items"][item]["explanations"]["A"]["graph"] = bad
        with pytest.raises(ConfigError, match=why) as info:
            Study.from_json(json.dumps(data))
        assert info.value.field == f"items.{item}.explanations.A.graph"
    assert Study.from_json(text) == make_study()  # real graphs pass
