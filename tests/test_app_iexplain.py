"""AppTest of the Markov-logic page: exact and Gibbs inference on friends/smokers, explanations, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from xcore.data.samples import load_sample

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "pages" / "iexplain.py")
pytestmark = pytest.mark.xdist_group("app")


def fresh() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["dataset"] = load_sample("friends_smokers")
    at.run()
    assert not at.exception, at.exception
    return at


def test_exact_then_gibbs_agree_and_explain():
    at = fresh()
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    exact = at.session_state["mln_model"].marginals().set_index("atom")["marginal"]
    assert any("Importance" in m.value for m in at.markdown)
    at.radio(key="mln_method").set_value("gibbs")
    at.run()
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    gibbs = at.session_state["mln_model"].marginals().set_index("atom")["marginal"]
    assert (gibbs - exact).abs().max() < 0.05
    assert "Max R-hat" in [m.label for m in at.metric]


def test_rule_syntax_error_is_shown():
    at = fresh()
    at.text_area(key="mln_rules").set_value("1.5 smokes(x => cancer(x)")
    at.button(key="mln_run").click()
    at.run()
    assert not at.exception, at.exception
    assert any("line 1" in e.value for e in at.error)
