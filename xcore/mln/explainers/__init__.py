"""The Markov-logic explainers, one per module, by registry name."""

from __future__ import annotations

from xcore.methods.base import Explainer
from xcore.mln.explainers.i_explain import IExplain
from xcore.mln.explainers.lime_words import LimeWords
from xcore.mln.explainers.m_explain import MExplain
from xcore.mln.explainers.r_explain import RExplain
from xcore.mln.explainers.shap_words import ShapWords

EXPLAINERS: dict[str, Explainer] = {e.name: e for e in (MExplain(), IExplain(), RExplain(), LimeWords(), ShapWords())}
"""Registry name -> explainer, in display order."""
