"""Markov logic (I-Explain) as a registered method: the spec. Settings in `xcore.mln.settings`, the
estimator in `xcore.mln.estimator`, the explainers in `xcore.mln.explainers`, the run in `xcore.mln.runs`."""

from __future__ import annotations

from xcore.methods.base import MethodSpec
from xcore.mln.estimator import MLNEstimator
from xcore.mln.explainer_names import ALIASES
from xcore.mln.explainers import EXPLAINERS
from xcore.mln.runs import applicable, default_settings, run
from xcore.mln.settings import MLNSettings

SPEC = MethodSpec(
    key="mln", title="I-Explain — Markov logic", settings_type=MLNSettings, explainers=tuple(EXPLAINERS),
    run=run, applicable=applicable, default_settings=default_settings, sample="reviews_demo",
    page="app_pages/mln.py", icon=":material/hub:", estimator_type=MLNEstimator, explainer_map=EXPLAINERS,
    explainer_aliases=ALIASES,
    paper="Al Farabi, Sarkhel, Dey & Venugopal, Interpretable Explanations for Probabilistic Inference in "
          "Markov Logic (2021)")
"""Markov logic: ground networks with evidence folded in, vectorised Gibbs sampling, exact
enumeration for small networks, weight learning, and explanations of inference — M-Explain
(formula importance), I-Explain (embedding coalitions merged by CEMC), R-Explain, and the LIME /
SHAP word baselines — with the planted review data and metrics to judge them."""
