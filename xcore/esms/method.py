"""ESMS in the method registry (key ``esms``): its settings, estimator, explainer, run and page."""

from __future__ import annotations

from xcore.esms.estimator import ESMSEstimator
from xcore.esms.explainers.ground_rules import GROUND_RULES
from xcore.esms.runs import EXPLAINERS, applicable, default_settings, run
from xcore.esms.settings import ESMSSettings
from xcore.methods.base import MethodSpec

SPEC = MethodSpec(
    key="esms", title="ESMS — explainable PSL", settings_type=ESMSSettings, explainers=(GROUND_RULES,),
    run=run, applicable=applicable, default_settings=default_settings, sample="lastfm_demo",
    estimator_type=ESMSEstimator, explainer_map=EXPLAINERS, surrogate="ESMS rules", page="app_pages/esms.py",
    icon=":material/account_tree:",
    paper="Embar, Srinivasan & Getoor, Learning Explainable Templated Graphical Models (UAI 2022)")
