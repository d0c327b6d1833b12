"""Text shown to users carries short numbers, and the global view's tables show their numbers first.

Found in the browser: rule text with 15-digit learned weights ("0.8285433219120312 smokes(A)"); the global
view's table cut its top_k_share column and the model table hid the weight behind the rule text.
"""

from __future__ import annotations

import pandas as pd

from xcore.explain.global_view import global_importance
from xcore.explain.render import item_table, short_numbers
from xcore.explain.types import Explanation, ExplanationItem, ExplanationSet
from xcore.logic import parse_rules
from xcore.viz import global_importance_figure, ranked_bar_figure
from xcore.viz.views import GLOBAL_TABLE_COLUMNS, global_table, model_table

LONG = "0.8285433219120312 smokes(A) => cancer(A)"


def test_short_numbers_cuts_long_decimals_only():
    assert short_numbers(LONG) == "0.8285 smokes(A) => cancer(A)"
    assert short_numbers("-12.345678901: a(X) ^2") == "-12.35: a(X) ^2"
    assert short_numbers("1.5e-07 and 3.0000000000001e-05 x") == "1.5e-07 and 3e-05 x"
    kept = "friends(u01, u101) & rating(x, 0.5) -> p(x2.1234567)"  # names and short values unchanged
    assert short_numbers(kept) == kept


def test_files_keep_full_precision():
    rule = parse_rules("0.8285433219120312 smokes(A) => cancer(A)", dialect="mln")[0]
    assert "0.8285433219120312" in rule.text("mln")


def explanation() -> Explanation:
    items = [ExplanationItem("rule", LONG, LONG, 0.82854332, direction=1),
             ExplanationItem("rule", "1.123456789 friends(A, B) => smokes(A)", "", -0.5, direction=-1)]
    return Explanation("model", "model", "mln", items=items)


def test_item_table_and_bars_show_short_weights():
    table = item_table(explanation())
    assert "0.8285433219120312" not in " ".join(table["text"]) + " ".join(table["natural"])
    assert table["text"].iloc[0] == "0.8285 smokes(A) => cancer(A)"
    fig = ranked_bar_figure(explanation())
    labels = [y for t in fig.data for y in t.y]
    assert not any("43321912" in y for y in labels)


def test_model_table_puts_the_weight_before_the_text():
    table = model_table(explanation())
    assert list(table.columns) == ["rank", "score", "explainable", "text"]
    assert table["text"].iloc[0] == "0.8285 smokes(A) => cancer(A)" and table["score"].iloc[0] == 0.8285


def test_global_table_puts_numbers_first_and_text_last():
    e = explanation()
    frame = global_importance(ExplanationSet([e, Explanation("t2", "t2", "mln", items=e.items)]), k=2)
    table = global_table(frame)
    assert list(table.columns) == list(GLOBAL_TABLE_COLUMNS) and table.columns[-1] == "group"
    assert pd.api.types.is_numeric_dtype(table["top_k_share"])
    assert not any("3321912" in g for g in table["group"])
    fig = global_importance_figure(frame, k=2)
    assert not any("3321912" in y for y in fig.data[0].y)
