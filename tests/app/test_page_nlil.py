"""AppTest of the m-NLIL page: the gate's sample button, generated scenes, training twice, rules with
their pattern, a selected target's firing rule and matching subgraph, bad settings shown in words."""

from __future__ import annotations

import json

import pytest
from pagetest import captions, click, errors, item_tables, page

from xcore.data.generators.scenes import make_scenes
from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def titles(at) -> list[str]:
    """The titles of the plotly charts on the page."""
    out = []
    for c in at.get("plotly_chart"):
        title = json.loads(c.proto.spec).get("layout", {}).get("title") or {}
        out.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return out


def quick(at) -> None:
    at.number_input(key="nlil_epochs").set_value(40)
    at.number_input(key="nlil_rounds").set_value(2)
    at.run()


def test_gate_offers_the_generated_scenes_and_training_shows_several_rules_per_label():
    at = page("nlil", load_sample("titanic_like"))
    assert any("cannot run" in w.value for w in at.warning)
    click(at, "nlil_load_sample")
    assert at.session_state["dataset"].name == "scenes_demo"
    quick(at)
    click(at, "nlil_train")
    assert not errors(at)
    rules = [d.value for d in at.dataframe if "rule" in d.value.columns][0]
    for label in ("street", "table"):
        assert rules[(rules["head"] == label) & (rules["cluster"] != "union")]["rule"].nunique() >= 2


def test_trains_twice_shows_the_classic_rule_and_explains_the_collapse():
    at = page("nlil", load_sample("trains_michalski10"))
    quick(at)
    for _ in range(2):
        click(at, "nlil_train")
        assert not errors(at)
    rules = [d.value for d in at.dataframe if "rule" in d.value.columns][0]
    assert any("has_car(X, Z)" in r and "short(Z)" in r and "closed(Z)" in r for r in rules["rule"])
    assert float({m.label: m.value for m in at.metric}["Recall"]) == 1.0
    assert any("held-out split" in c and "no separate held-out set" in c for c in captions(at))
    assert any("already covers 4 of the 4 positive training examples" in w.value for w in at.warning)


def test_scenes_rules_pattern_and_firing_subgraph():
    at = page("nlil", make_scenes(n_scenes=40, seed=2))
    at.multiselect(key="nlil_heads").set_value(["street"])
    at.slider(key="nlil_depth").set_value(1)
    quick(at)
    click(at, "nlil_train")
    assert not errors(at)
    run = list(at.session_state["_runs"].values())[-1]
    assert set(run.model.rules_["head"]) == {"street"}
    assert any(t.startswith("street(X) <- ") for t in titles(at))  # the rule drawn as a pattern
    table = item_tables(at)[0]
    assert len(table) == len(run.model.labels_["street"].rules)
    assert any("rule precision" in c for c in captions(at))
    fired = run.predictions[run.predictions["rule_fires"]]
    assert len(fired)
    at.text_input(key="nlil_pred_filter").set_value(fired["target"].iloc[0])
    at.run()
    assert not at.exception
    assert any("Matching facts:" in c for c in captions(at))
    assert any(t.startswith(f"Why {fired['target'].iloc[0]}: street(X) <- ") for t in titles(at))


def test_no_label_chosen_says_so_and_disables_training():
    at = page("nlil", make_scenes(n_scenes=10, seed=0))
    at.multiselect(key="nlil_heads").set_value([])
    at.run()
    assert any("at least one target label" in i.value for i in at.info)
    assert at.button(key="nlil_train").disabled


def test_gcn_mode_compares_rules_with_gnnexplainer():
    at = page("nlil", make_scenes(n_scenes=30, seed=1))
    at.multiselect(key="nlil_heads").set_value(["table"])
    at.slider(key="nlil_depth").set_value(1)
    at.radio(key="nlil_mode").set_value("gcn")
    quick(at)
    for _ in range(2):
        click(at, "nlil_train")
        assert not errors(at)
    cmp = [d.value for d in at.dataframe if "fidelity+" in d.value.columns][0]
    assert list(cmp["explainer"]) == ["m-NLIL rules", "GNNExplainer (top-k edges)"]
    assert any("GNNExplainer edge mask" in c for c in captions(at))
    assert any("fidelity to the GCN" in c for c in captions(at))


@pytest.mark.slow
def test_family_sample_runs_link_prediction_with_the_per_relation_table():
    at = page("nlil", load_sample("family"))
    assert at.radio(key="nlil_eval").value == "link-prediction"
    assert any("Will train every relation and its inverse (12 relations" in c for c in captions(at))
    at.number_input(key="nlil_kg_epochs").set_value(1)
    at.number_input(key="nlil_kg_queries").set_value(500)
    at.run()
    click(at, "nlil_train")
    assert not errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert 0.0 < float(metrics["Mrr"]) <= 1.0 if "Mrr" in metrics else any("MRR" in k.upper() for k in metrics)
    table = [d.value for d in at.dataframe if "hits@10" in d.value.columns][0]
    assert len(table) == 12 and set(table.columns) >= {"relation", "queries", "mrr", "hits@1", "hits@3"}
    rules = [d.value for d in at.dataframe if "confidence" in d.value.columns][0]
    assert set(rules["relation"]) >= {"aunt", "aunt^-1"}
    assert any("ties count half" in c for c in captions(at))


@pytest.mark.slow
def test_max_heads_leaves_labels_out_and_the_page_says_which():
    from xcore.data.generators.scenes import PlantedRule

    labels = {f"l{i}": (PlantedRule("car", "on"),) for i in range(6)}
    at = page("nlil", make_scenes(n_scenes=10, labels=labels, seed=0))
    at.run()
    chosen = at.multiselect(key="nlil_heads").value
    assert len(chosen) == 4
    assert any("Will train: l0, l1, l2, l3" in c for c in captions(at))
    assert any("left out:" in c for c in captions(at))
