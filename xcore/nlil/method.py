"""m-NLIL as a registered method (several interpretable rules per label from graph-structured data, on
Neural Logic Inductive Learning): its `MethodSpec`."""

from __future__ import annotations

from xcore.methods.base import MethodSpec
from xcore.nlil.estimator import NLILEstimator
from xcore.nlil.explainers import GCN_RULES, GNNEXPLAINER, RULES
from xcore.nlil.heads import applicable, default_settings
from xcore.nlil.runs import EXPLAINERS, run
from xcore.nlil.settings import NLILSettings

SPEC = MethodSpec(
    key="nlil", title="m-NLIL rules from graphs", settings_type=NLILSettings, explainers=(RULES, GCN_RULES, GNNEXPLAINER),
    run=run, applicable=applicable, default_settings=default_settings, sample="scenes_demo",
    page="app_pages/nlil.py", icon=":material/hub:", estimator_type=NLILEstimator, explainer_map=EXPLAINERS,
    surrogate="m-NLIL rules",
    paper="m-NLIL: Inducing Multiple Interpretable Rules from Graph-Structured Data (on NLIL, Yang & Song, ICLR 2020)")
