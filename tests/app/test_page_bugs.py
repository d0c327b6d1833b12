"""The eight bugs a new user hit (method-contract issue), each asserted on what the pages display."""

from __future__ import annotations

import pytest
from pagetest import captions, chart_titles, click, errors, item_tables, page, shown_targets

from xcore.data import load
from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def test_1_run_search_and_train_twice_show_results_both_times():
    at = page("esms", load_sample("lastfm_demo"))
    for _ in range(2):
        click(at, "esms_run_btn")
        assert not errors(at)
        assert {"Test MSE", "MEP@1"} <= {m.label for m in at.metric}
        assert item_tables(at) and len(item_tables(at)[0]) >= 1
    at = page("plkb", load_sample("titanic_like"))
    for _ in range(2):
        click(at, "plkb_train")
        assert not errors(at)
        assert "Accuracy" in {m.label for m in at.metric}
        assert item_tables(at)


def _upload(labels: str) -> object:
    rows = "\n".join(f"{i % 3},{(i * 7) % 5},{lab}" for i, lab in enumerate(labels))
    return load(("mydata.csv", f"a,b,label\n{rows}\n".encode()))


def test_2_two_uploads_with_one_name_and_size_get_their_own_model():
    first, second = _upload("xy" * 30), _upload("xxyy" * 15)
    assert first.name == second.name and len(first.tabular) == len(second.tabular)
    at = page("plkb", first)
    click(at, "plkb_train")
    truth_first = sorted(at.session_state["_runs"][next(reversed(at.session_state["_runs"]))].predictions["truth"])
    at.session_state["dataset"] = second
    at.run()
    click(at, "plkb_train")
    runs = list(at.session_state["_runs"].values())
    assert len(runs) == 2 and runs[0] is not runs[1]
    assert runs[1].fingerprint == second.fingerprint() != first.fingerprint()
    assert sorted(runs[1].predictions["truth"]) != truth_first or \
        not runs[1].predictions.equals(runs[0].predictions)


def test_3_unticking_an_explainable_flag_gives_a_new_run():
    ds = load_sample("friends_smokers")
    at = page("mln", ds)
    click(at, "mln_run")
    before = list(at.session_state["_runs"].values())[-1]
    assert all(it.explainable for e in before.explanations["mln:m-explain"] for it in e.items)
    at.session_state["dataset"] = ds.with_flags("friends", explainable=False)
    at.run()
    assert not item_tables(at), "results of the old flags are not shown"
    click(at, "mln_run")
    after = list(at.session_state["_runs"].values())[-1]
    assert after is not before
    flags = [it.explainable for e in after.explanations["mln:m-explain"] for it in e.items
             if any(a.startswith("friends(") for a in it.atoms)]
    assert flags and not any(flags)


def test_4_friends_and_smokers_explanations_are_drawn():
    at = page("mln", load_sample("friends_smokers"))
    click(at, "mln_run")
    titles = " ".join(chart_titles(at))
    assert "Top relational formulas" in titles  # friends(x, y) is the data's link predicate
    assert "Relational support" in titles
    assert any("I(f, Q)" in c for c in captions(at))


def test_5_a_tiny_three_class_table_trains_or_says_why():
    rows = "a,b,label\n1,2,x\n2,3,y\n3,4,z\n1,3,x\n2,2,y\n3,3,z\n"
    at = page("plkb", load(("tiny.csv", rows.encode())))
    assert any("3 classes" in i.value and "choose which class" in i.value for i in at.info)  # asks, no pick
    at.selectbox(key="plkb_positive_class").set_value("x")
    at.run()
    click(at, "plkb_train")
    assert "Accuracy" in {m.label for m in at.metric} or errors(at)
    assert all("ValueError" not in e for e in errors(at))


def test_6_first_demo_press_in_a_new_session_after_another_session():
    for _ in range(2):  # two browser sessions of one server process, one after the other
        at = page("esms", load_sample("friends_smokers"))
        click(at, "esms_demo")
        assert not errors(at)
        assert {"Test MSE", "MEP@1"} <= {m.label for m in at.metric}
        assert item_tables(at)


def test_7_a_method_that_cannot_run_says_why_before_the_button_and_offers_its_sample():
    evidence = load(("facts.csv", b"predicate,arg1,arg2,value,partition\nknows,a,b,1,obs\n"), fmt="long_csv")
    at = page("esms", evidence)
    assert any("no predicate has target atoms" in w.value for w in at.warning)
    click(at, "esms_load_sample")
    assert at.session_state["dataset"].name == "lastfm_demo"
    assert not at.warning
    at = page("plkb", load_sample("friends_smokers"))
    assert any("label column" in w.value for w in at.warning)
    at = page("plkb", load_sample("titanic_like"))
    at.text_area(key="plkb_knowledge").set_value("0.9: POS | ~NoSuchFeature_1")
    click(at, "plkb_train")
    assert any("NoSuchFeature" in e for e in errors(at)), "the reason is shown open, in words"


def test_8_switching_data_hides_the_previous_results_and_the_demo_resets_settings():
    at = page("esms", load_sample("lastfm_demo"))
    at.slider(key="esms_gamma").set_value(0.0)
    at.number_input(key="esms_iterations").set_value(3)
    at.run()
    click(at, "esms_run_btn")
    assert any(t.startswith("rating(") for t in shown_targets(at))
    at.session_state["dataset"] = load_sample("titanic_like")  # survived(row, value) is a binary target
    at.run()
    assert not any(t.startswith("rating(") for t in shown_targets(at))
    click(at, "esms_demo")
    assert at.session_state["dataset"].name == "lastfm_demo"
    run = list(at.session_state["_runs"].values())[-1]
    assert run.settings.iterations == 20 and run.settings.gamma == 0.5 and run.settings.block == "rated"
    assert run.metrics["mep@1"] > 0
    at = page("mln", load_sample("friends_smokers"))
    click(at, "mln_run")
    assert any(t.startswith("smokes(") for t in shown_targets(at))
    at.session_state["dataset"] = load_sample("reviews_demo")
    at.run()
    assert not any(t.startswith("smokes(") for t in shown_targets(at))
    assert "has_word(r, 'great') => positive(r)" in at.text_area(key="mln_rules").value
