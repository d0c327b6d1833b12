"""The method contract every xcore method follows (scikit-learn's estimator rules, PyG's
Explainer/ExplainerAlgorithm split).

- `Settings`: frozen, hashable, validated on construction (pydantic v2; a bad value raises
  `ConfigError` naming the field); `estimator()` builds the estimator they describe.
- `Estimator`: `__init__` only stores parameters; `fit(data, progress=None)` learns attributes whose
  names end in ``_`` and returns self; `predict(data)` returns one frame shape for every method.
- `Explainer`: a stable registry name, a `ScoreSpec`, `supports(model)` and `explain(...)`.
- `Run`: everything one run produced, with a versioned JSON bundle the pages, reports, the study
  page and the command line read.
- `MethodSpec`: what the registry holds per method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from xcore.data.dataset import RelationalDataset

# the contract's parts live in their own modules; this module re-exports them, the import path every
# method package, page and test uses (`from xcore.methods.base import Run`)
from xcore.methods.estimator import PREDICTION_COLUMNS, Estimator, prediction_frame
from xcore.methods.explainer import Explainer, Measurement
from xcore.methods.run import READABLE_RUN_VERSIONS, RUN_FORMAT, RUN_VERSION, Run, typed_settings
from xcore.methods.settings import Settings, config_error
from xcore.runtime import Progress

__all__ = ["PREDICTION_COLUMNS", "READABLE_RUN_VERSIONS", "RUN_FORMAT", "RUN_VERSION", "Estimator", "Explainer",
           "Measurement", "MethodSpec", "Run", "Settings", "config_error", "prediction_frame", "typed_settings"]


# ---------------------------------------------------------------------- method spec
@dataclass(frozen=True)
class MethodSpec:
    """One registered method: what the app, the command line and the study page need to run it.

    A dataclass: its constructor's parameters are the attributes below, in this order.

    Attributes
    ----------
    key : str
        Registry key; also the page's url path and the command line's method name.
    title : str
        Page and report title.
    settings_type : type of Settings
        The method's frozen settings; forms and ``xcore run --set`` are built from its fields.
    explainers : tuple of str
        Names of the method's explainers, in display order.
    run : callable
        ``run(dataset, settings, progress, estimator=None) -> Run``: fit (or reuse a fit), predict, explain.
    applicable : callable
        ``applicable(dataset) -> str | None``: why the method cannot run on the data, or None.
    default_settings : callable
        ``default_settings(dataset) -> Settings`` chosen from the data.
    sample : str
        The bundled sample the page offers first.
    page : str
        The app page module that shows the method (``"app_pages/esms.py"``); empty when it has none.
    icon : str
        The page's navigation icon (a Streamlit ``:material/...:`` name).
    paper : str
        The paper the method comes from, as cited on its page and in reports.
    estimator_type : type of Estimator
        The method's estimator class (required): ``settings.estimator()`` builds it with the settings as
        its one parameter, and `xcore.methods.evaluate` fits one per fold.
    explainer_map : mapping of str to Explainer
        Explainer name -> explainer object (see `explainer_objects`).
    surrogate : str
        What explains a user's model when the method is fitted to its predictions instead of the truth
        (e.g. ``"m-NLIL rules"``); empty when the method cannot act as a surrogate.
    """

    key: str
    title: str
    settings_type: type[Settings]
    explainers: tuple[str, ...]
    run: Callable[[RelationalDataset, Settings, Progress | None], Run]
    applicable: Callable[[RelationalDataset], str | None]
    default_settings: Callable[[RelationalDataset], Settings]
    sample: str
    """A bundled sample this method runs on (the page offers it with one click)."""
    page: str = ""
    icon: str = ":material/science:"
    paper: str = ""
    estimator_type: type[Estimator] = field(kw_only=True)
    """The method's estimator class (required), built by `Settings.estimator()` with the settings as its
    one parameter; `xcore.methods.evaluate` fits one per fold."""
    explainer_map: Mapping[str, Explainer] = field(default_factory=dict)
    """Registry name -> the explainer object (the method's `EXPLAINERS`)."""
    explainer_aliases: Mapping[str, str] = field(default_factory=dict)
    """Old explainer names (in bundles and studies written before a rename) -> today's registry names;
    `Run.from_bundle` reads the old ones as today's."""
    surrogate: str = ""
    """What explains a user's model when the method is fitted to its predictions instead of the truth
    (e.g. "m-NLIL rules"); empty: the method cannot act as a surrogate (`xcore.methods.surrogate`)."""

    def explainer_objects(self) -> Mapping[str, Explainer]:
        """The method's explainers by registry name."""
        return self.explainer_map
