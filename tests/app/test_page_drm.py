"""AppTest of the DRM page: trains sample, train twice, explanations with relevance, edited relevance."""

from __future__ import annotations

import pytest
from pagetest import captions, chart_titles, click, errors, item_tables, page

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")


def small(at):
    at.number_input(key="drm_max_draws").set_value(400)
    at.number_input(key="drm_folds").set_value(2)
    at.number_input(key="drm_max_epochs").set_value(40)
    at.run()
    return at


def test_gate_offers_the_trains_sample_on_other_data():
    at = page("drm", load_sample("titanic_like"))
    assert any("cannot run" in w.value for w in at.warning)
    click(at, "drm_load_sample")
    assert at.session_state["dataset"].name.startswith("trains")


def test_trains_train_twice_explain_and_edit_relevance():
    at = small(page("drm", load_sample("trains_michalski10")))
    for _ in range(2):
        click(at, "drm_train")
        assert not errors(at)
    labels = {m.label for m in at.metric}
    assert "Accuracy" in labels or any("ccuracy" in l for l in labels)
    table = item_tables(at)[0]
    assert len(table) >= 1 and table["text"].iloc[0].startswith(("eastbound(X) :-", "not_eastbound(X) :-"))
    assert ":-" in table["natural"].iloc[0] and "has_car" in table["natural"].iloc[0]
    assert any("fidelity" in c for c in captions(at))
    assert any("Neighbourhood" in str(t) for t in chart_titles(at))
    # issue 31: the linear model beside the network, the neighbourhood's size, the modes' limits
    assert any("Linear" in l for l in labels) and any("neighbours" in l.lower() for l in labels)
    assert any(c.startswith("Neighbourhood:") and "training instances" in c for c in captions(at))
    assert any("cannot express" in m.value and "negation" in m.value for m in at.markdown)
    assert not any("Fidelity undefined" in w.value for w in at.warning)
    clauses = [d.value for d in at.dataframe if "relevance" in d.value.columns and "clause" in d.value.columns][0]
    assert clauses["relevance"].iloc[0] != ""
    # swap the levels: the chosen clause's relevance label follows the edited file
    at.text_area(key="drm_relevance").set_value("r1: short, closed\nr2: wheels, load\n").run()
    assert not errors(at)
    swapped = [d.value for d in at.dataframe if "relevance" in d.value.columns and "clause" in d.value.columns][0]
    assert list(swapped["relevance"]) != list(clauses["relevance"]) or list(swapped["clause"]) != list(
        clauses["clause"])
    at.text_area(key="drm_relevance").set_value("no colon here").run()
    assert errors(at) and "relevance" in errors(at)[0]


def test_bad_modes_are_an_error_in_words():
    at = small(page("drm", load_sample("trains_michalski10")))
    at.text_area(key="drm_modes").set_value(":- modeb(1,nosuch(+car)).").run()
    click(at, "drm_train")
    assert errors(at) and "nosuch" in " ".join(errors(at))


def test_generate_random_trains_and_load_mutagenesis():
    at = page("drm", load_sample("trains_michalski10"))
    at.number_input(key="drm_gen_n").set_value(40).run()
    click(at, "drm_generate")
    assert at.session_state["dataset"].name.startswith("random trains (n=40")
    assert not errors(at)
    click(at, "drm_load_mut")
    assert at.session_state["dataset"].name == "Mutagenesis 188"
    assert not errors(at) and any("Mutagenesis 188" in c for c in captions(at))
