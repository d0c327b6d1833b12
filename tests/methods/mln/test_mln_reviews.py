"""Synthetic review generator: seeding, planted words, homophilous and noise links, the annotation,
MLN rule text, generating weights, and the shipped reviews_demo sample."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from xcore.data.generators.reviews import (
    LINK_PREDICATES,
    NEGATIVE_WORDS,
    NEUTRAL_WORDS,
    POSITIVE_WORDS,
    VOCABULARY,
    ReviewAnnotation,
    generate_reviews,
    load_review_annotation,
    load_review_sample,
)
from xcore.data.samples import sample_data_dir
from xcore.errors import DataError, XcoreError
from xcore.logic.parser import parse_rules
from xcore.mln.model import MLNModel
from xcore.mln.reviews import review_rules, true_weights, write_review_sample


@pytest.fixture(scope="module")
def demo():
    return generate_reviews(300, seed=0)


def _canonical(t: pd.DataFrame) -> pd.DataFrame:
    args = [c for c in t.columns if c != "value"]
    return t[args + ["value"]].sort_values(args).reset_index(drop=True)


def _same_dataset(a, b) -> bool:
    for p in a.schema.names:
        for part in ("obs", "targets", "truth"):
            x, y = _canonical(a.table(p, part)), _canonical(b.table(p, part))
            if not (x.drop(columns="value").equals(y.drop(columns="value"))
                    and np.allclose(x["value"].fillna(-1), y["value"].fillna(-1))):
                return False
    return True


def test_vocabulary_sizes_and_words_are_plain():
    assert (len(POSITIVE_WORDS), len(NEGATIVE_WORDS), len(NEUTRAL_WORDS)) == (20, 20, 80)
    assert len(set(VOCABULARY)) == 120
    assert all(w.isalpha() and w.islower() for w in VOCABULARY)


def test_same_seed_same_data_other_seed_other_data(demo):
    again = generate_reviews(300, seed=0)
    assert _same_dataset(demo.dataset, again.dataset)
    assert demo.annotation == again.annotation and demo.docs.equals(again.docs)
    other = generate_reviews(300, seed=1)
    assert not _same_dataset(demo.dataset, other.dataset)


def test_sizes_split_and_docs(demo):
    docs, ds = demo.docs, demo.dataset
    assert list(docs.columns) == ["review", "user", "restaurant", "label", "split", "text"]
    assert len(docs) == 300 and docs["review"].is_unique
    train = docs[docs.split == "train"]
    assert len(train) == 150
    obs = ds.table("positive", "obs").set_index("a0")["value"]
    assert set(obs.index) == set(train.review)
    np.testing.assert_array_equal(obs.loc[train.review].to_numpy(), train.label.to_numpy())
    truth = ds.table("positive", "truth").set_index("a0")["value"]
    test = docs[docs.split == "test"]
    assert set(ds.table("positive", "targets")["a0"]) == set(test.review) == set(truth.index)
    np.testing.assert_array_equal(truth.loc[test.review].to_numpy(), test.label.to_numpy())
    assert 0.3 < docs.label.mean() < 0.7
    # the text is exactly the review's has_word atoms
    hw = ds.table("has_word", "obs")
    words = hw.groupby("a0")["a1"].apply(frozenset)
    for r, text in zip(docs.review, docs.text):
        assert frozenset(text.split()) == words.get(r, frozenset())
    assert demo.annotation.labels == dict(zip(docs.review, docs.label))


def test_planted_words_drive_the_class_and_neutral_words_do_not(demo):
    big = generate_reviews(3000, seed=2)
    hw = big.dataset.table("has_word", "obs")
    lab = big.docs.set_index("review")["label"]
    X = pd.crosstab(hw.a0, hw.a1).reindex(index=big.docs.review, columns=list(VOCABULARY), fill_value=0)
    rate_pos, rate_neg = X[lab.values == 1].mean(), X[lab.values == 0].mean()
    assert (rate_pos[list(POSITIVE_WORDS)] > 2 * rate_neg[list(POSITIVE_WORDS)]).all()
    assert (rate_neg[list(NEGATIVE_WORDS)] > 2 * rate_pos[list(NEGATIVE_WORDS)]).all()
    assert (abs(rate_pos[list(NEUTRAL_WORDS)] - rate_neg[list(NEUTRAL_WORDS)]) < 0.03).all()
    assert demo.annotation.planted_words == {**{w: 1 for w in POSITIVE_WORDS}, **{w: -1 for w in NEGATIVE_WORDS}}


def test_words_alone_are_good_but_not_perfect(demo):
    from sklearn.linear_model import LogisticRegression

    hw = demo.dataset.table("has_word", "obs")
    X = pd.crosstab(hw.a0, hw.a1).reindex(index=demo.docs.review, columns=demo.vocabulary, fill_value=0).values
    y, tr = demo.docs.label.values, (demo.docs.split == "train").values
    acc = LogisticRegression(max_iter=2000).fit(X[tr], y[tr]).score(X[~tr], y[~tr])
    assert 0.75 <= acc <= 0.93


def test_links_are_symmetric_and_true_links_are_in_group_same_class(demo):
    docs = demo.docs.set_index("review")
    true = demo.annotation.true_links
    n_true = 0
    for pred, col in (("same_user", "user"), ("same_restaurant", "restaurant")):
        t = demo.dataset.table(pred, "obs")
        pairs = set(zip(t.a0, t.a1))
        assert len(pairs) == len(t) and all((b, a) in pairs for a, b in pairs)
        assert all(a != b for a, b in pairs)
        in_group = docs.loc[t.a0, col].to_numpy() == docs.loc[t.a1, col].to_numpy()
        same = docs.loc[t.a0, "label"].to_numpy() == docs.loc[t.a1, "label"].to_numpy()
        want = {(pred, a, b) for a, b, ok in zip(t.a0, t.a1, in_group & same) if ok}
        got = {x for x in true if x[0] == pred}
        assert got == want
        n_true += len(got)
        assert 0.1 < (~in_group).mean() < 0.35  # noise links exist, and are a minority
        # homophily: in-group links mostly join same-class reviews; noise links are near chance
        assert same[in_group].mean() > 0.7 and same[~in_group].mean() < same[in_group].mean() - 0.15
        degree = t.groupby("a0").size()
        assert degree.mean() < 8
    assert n_true == len(true)


def test_generation_options_are_checked_and_knobs_work():
    with pytest.raises(XcoreError, match="unknown option"):
        generate_reviews(50, seed=0, leaning=3)
    with pytest.raises(XcoreError, match="n_reviews"):
        generate_reviews(2)
    with pytest.raises(XcoreError, match="train_fraction"):
        generate_reviews(50, train_fraction=1.0)
    none = generate_reviews(200, seed=3, noise_links=0.0, max_links=1)
    docs = none.docs.set_index("review")
    t = none.dataset.table("same_user", "obs")
    assert (docs.loc[t.a0, "user"].to_numpy() == docs.loc[t.a1, "user"].to_numpy()).all()
    assert len(t) <= 2 * 200


def test_review_rules_text_parses_and_skips_zero_words():
    text = review_rules({"great": 1.25, "menu": 0.0, "rude": -2.0}, {"same_user": 0.5, "cites": 0.25}, prior=-0.1)
    rules = parse_rules(text, dialect="mln")
    assert len(rules) == 5
    assert [r.weight for r in rules] == [1.25, -2.0, 0.5, 0.25, -0.1]
    assert rules[0].text("mln") == "1.25 has_word(r, 'great') => positive(r)"
    assert rules[3].text("mln") == "0.25 cites(r1, r2) ^ positive(r1) => positive(r2)"
    assert rules[4].text("mln") == "-0.1 positive(r)"
    assert review_rules({}, {}) == ""
    with pytest.raises(XcoreError, match="finite"):
        review_rules({"great": float("nan")}, {})
    with pytest.raises(XcoreError, match="not a number"):
        review_rules({}, {"same_user": "strong"})


def test_true_weights_have_planted_signs_and_links_help_inference(demo):
    words, links = true_weights(demo)
    assert all(words[w] > 1.0 for w in POSITIVE_WORDS) and all(words[w] < -1.0 for w in NEGATIVE_WORDS)
    assert all(words[w] == 0.0 for w in NEUTRAL_WORDS)
    assert set(links) == set(LINK_PREDICATES) and all(0.05 < v < 2.0 for v in links.values())
    acc = {}
    for name, lw in (("words", {}), ("links", links)):
        m = MLNModel(review_rules(words, lw)).ground(demo.dataset).infer("gibbs", n_samples=300, burn_in=100,
                                                                         n_chains=4, seed=0)
        mg = m.marginals()
        acc[name] = float(((mg.marginal > 0.5) == (mg.truth > 0.5)).mean())
    assert acc["words"] > 0.8 and acc["links"] > acc["words"]


@pytest.mark.slow
def test_write_and_load_round_trip(tmp_path):
    data = generate_reviews(40, seed=5)
    folder = write_review_sample(data, tmp_path / "rev")
    back = load_review_sample(folder)
    assert _same_dataset(back.dataset, data.dataset)
    assert back.annotation == data.annotation
    pd.testing.assert_frame_equal(back.docs, data.docs, check_dtype=False)
    assert back.vocabulary == data.vocabulary and back.params == data.params
    assert json.loads((folder / "annotation.json").read_text())["generator"]["seed"] == 5
    assert parse_rules((folder / "model.mln").read_text(), dialect="mln")
    assert "generate_reviews(40, seed=5)" in (folder / "README.md").read_text()


def test_load_review_annotation_errors_name_the_file(tmp_path):
    f = tmp_path / "annotation.json"
    with pytest.raises(DataError, match="annotation.json"):
        load_review_annotation(tmp_path)
    f.write_text('{\n "planted_words": {"great": 1},\n "labels": {"r1": 1},,\n}\n')
    with pytest.raises(DataError, match=r"annotation.json, line 3: malformed JSON"):
        load_review_annotation(tmp_path)
    f.write_text("[1, 2]")
    with pytest.raises(DataError, match="JSON object"):
        load_review_annotation(tmp_path)
    good = {"planted_words": {"great": 1}, "true_links": [["same_user", "r1", "r2"]], "labels": {"r1": 1, "r2": 1}}
    f.write_text(json.dumps(good))
    ann = load_review_annotation(tmp_path)
    assert ann == ReviewAnnotation({"great": 1}, frozenset({("same_user", "r1", "r2")}), {"r1": 1, "r2": 1})
    for key, bad, msg in (("planted_words", {"great": 2}, "planted_words"),
                          ("true_links", [["same_user", "r1"]], "true_links"),
                          ("labels", {"r1": True}, "labels")):
        f.write_text(json.dumps({**good, key: bad}))
        with pytest.raises(DataError, match=msg):
            load_review_annotation(tmp_path)
    f.write_text(json.dumps({"labels": {}}))
    with pytest.raises(DataError, match="missing key 'planted_words'"):
        load_review_annotation(tmp_path)


def test_shipped_sample_equals_a_fresh_generation(demo):
    from xcore.data import load_sample
    from xcore.data.samples import list_samples

    folder = sample_data_dir() / "reviews_demo"
    if not folder.is_dir():
        pytest.skip("sample_data/reviews_demo not generated")
    assert "reviews_demo" in [s.name for s in list_samples()]
    ds = load_sample("reviews_demo")
    assert _same_dataset(ds, demo.dataset)
    back = load_review_sample(folder)
    assert back.annotation == demo.annotation and back.params == demo.params
    pd.testing.assert_frame_equal(back.docs, demo.docs, check_dtype=False)
    words, links = true_weights(demo)
    assert (folder / "model.mln").read_text() == review_rules(words, links)
    assert sum(f.stat().st_size for f in folder.iterdir()) < 400_000
