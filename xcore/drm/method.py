"""The deep relational machine as a registered method (Srinivasan, Vig & Bain): its `MethodSpec`."""

from __future__ import annotations

from xcore.drm.estimator import DRMEstimator
from xcore.drm.explainers import FIDELITY, STRUCTURED
from xcore.drm.problem import applicable
from xcore.drm.runs import EXPLAINERS, default_settings, run
from xcore.drm.settings import DRMSettings
from xcore.methods.base import MethodSpec

SPEC = MethodSpec(
    key="drm", title="Deep relational machine", settings_type=DRMSettings, explainers=(FIDELITY, STRUCTURED),
    run=run, applicable=applicable, default_settings=default_settings, sample="trains_michalski10",
    page="app_pages/drm.py", icon=":material/hub:", estimator_type=DRMEstimator, explainer_map=EXPLAINERS,
    surrogate="DRM feature clauses",
    paper="Srinivasan, Vig & Bain, Logical Explanations for Deep Relational Machines Using Relevance Information")
