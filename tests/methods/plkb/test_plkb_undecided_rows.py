"""Rough edge: when every size-k sub-query ties at [0, 1], the classifier says no k features decide."""

from __future__ import annotations

from xcore.explain.text import explanation_text
from xcore.methods import run_method
from xcore.plkb.explainers import DecisiveExplainer
from xcore.plkb.settings import PLKBSettings
from xcore.plkb.tables import generated_dataset


def test_row_279_of_the_seed_1_strings_has_no_decisive_pair_but_a_decisive_triple():
    ds = generated_dataset("Synthetic strings", seed=1)
    run = run_method("plkb", ds, PLKBSettings(label="label", explain_rows=0, k_auto=False), cache=None)
    pair = DecisiveExplainer(k=2).explain(run.model, targets=["row 279"])["row 279"]
    assert pair.meta.get("undecided") is True
    assert "No set of 2 features decides" in explanation_text(pair)
    # by default k grows per row until a set decides, and the explanation says which k it took
    grown = DecisiveExplainer(k=2).explain(_with_auto(run.model), targets=["row 279"])["row 279"]
    assert grown.meta["k"] == 3 and "the smallest that does has 3" in grown.meta["note"]
    assert grown.items[0].direction != 0 and "pushes it" in explanation_text(grown)
    assert all(it.extras["omega_lo"] == 0.0 and it.extras["omega_hi"] == 1.0 for it in pair.items[:3])
    triple = DecisiveExplainer(k=3).explain(run.model, targets=["row 279"])["row 279"]
    assert not triple.meta.get("undecided")
    best = triple.items[0]
    assert not (best.extras["omega_lo"] <= 1e-6 and best.extras["omega_hi"] >= 1 - 1e-6)


def _with_auto(model):
    from xcore.methods.driver import with_settings

    return with_settings(model, model.settings.replace(k_auto=True))


def test_what_if_says_so_too_when_no_k_set_decides_the_edited_row():
    """Seen in a browser screenshot: the what-if panel ranked ten tied [0, 1] pairs without the note."""
    ds = generated_dataset("Synthetic strings", seed=1)
    run = run_method("plkb", ds, PLKBSettings(label="label", explain_rows=0, k=2), cache=None)
    row = run.model.row("row 279").iloc[0].to_dict()
    pair = run.model.what_if(row, k=2)
    assert pair.meta.get("undecided") is True and "No set of 2 features decides" in pair.meta["note"]
    assert not run.model.what_if(row, k=3).meta.get("undecided")
