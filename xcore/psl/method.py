"""ESMS in the method registry (key ``esms``): its settings, estimator, explainer, run and page."""

from __future__ import annotations

from xcore.methods.base import MethodSpec
from xcore.psl.estimator import ESMSEstimator
from xcore.psl.explainers.ground_rules import GROUND_RULES
from xcore.psl.runs import EXPLAINERS, applicable, default_settings, run
from xcore.psl.settings import ESMSSettings

SPEC = MethodSpec(
    key="esms", title="ESMS — explainable PSL", settings_type=ESMSSettings, explainers=(GROUND_RULES,),
    run=run, applicable=applicable, default_settings=default_settings, sample="lastfm_demo",
    estimator_type=ESMSEstimator, explainer_map=EXPLAINERS, surrogate="ESMS rules", page="app_pages/esms.py",
    icon=":material/account_tree:",
    paper="Embar, Srinivasan & Getoor, Learning Explainable Templated Graphical Models (UAI 2022)")
