"""The explanation panel shows each top reason's natural text in full (the item table cuts long cells)."""

from __future__ import annotations

import re

import pytest
from pagetest import click, page
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample

pytestmark = pytest.mark.xdist_group("app")

LONG = ("because the reviewer who wrote this review also wrote twelve other reviews of restaurants in the same "
        "street, every one of them positive, and three of their friends, who share most of their tastes in food "
        "and service, praised this very restaurant for its friendly staff and its tasty, fresh and generous dishes")


def shown_markdown(at: AppTest) -> str:
    """Everything the page wrote as Markdown, with Markdown's backslash escapes read as the reader sees them."""
    return "\n".join(re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown)


def panel_script() -> None:
    from ui.components import explanation_panel
    from xcore.explain import Explanation, ExplanationItem

    long = ("because the reviewer who wrote this review also wrote twelve other reviews of restaurants in the same "
            "street, every one of them positive, and three of their friends, who share most of their tastes in food "
            "and service, praised this very restaurant for its friendly staff and its tasty, fresh and generous dishes")
    items = [ExplanationItem("rule", f"r{i}(x) -> positive(x)", long if i == 4 else f"reason number {i} (*not* a_b)",
                             1.0 / (i + 1)) for i in range(12)]
    explanation_panel(Explanation("positive(r1)", "review r1 is positive", "mln", prediction=0.9, items=items),
                      key="t", k=10)


def test_long_natural_text_is_shown_in_full_under_the_table():
    at = AppTest.from_function(panel_script, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "natural" in d.value.columns)
    assert LONG in set(table["natural"])
    text = shown_markdown(at)
    assert f"5. {LONG} (score 0.2)" in text  # numbered by rank, the whole sentence, its score
    assert "1. reason number 0 (*not* a_b) (score 1)" in text  # Markdown characters shown literally
    assert "reason number 10" not in text  # the top k = 10 only (the table holds the rest)
    raw = "\n".join(m.value for m in at.markdown)
    assert "\\*not\\*" in raw  # escaped, so not drawn in italics


@pytest.mark.slow
def test_esms_page_lists_every_top_reason_in_words():
    at = page("esms", load_sample("lastfm_demo"))
    click(at, "esms_run_btn")
    table = next(d.value for d in at.dataframe if {"rank", "natural", "score"} <= set(d.value.columns))
    text = shown_markdown(at)
    top = table.sort_values("rank").head(10)
    assert len(top) >= 3
    for rank, natural in zip(top["rank"], top["natural"]):
        assert f"{rank}. {natural} (" in text, natural
