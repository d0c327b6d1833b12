"""The method contract and the registry of methods (`REGISTRY`), which the app's navigation,
the command line and the study page all read.

A new method is one package with a module exposing a `MethodSpec` plus one line in
`xcore.methods.registry._ENTRIES`, then `python -m xcore.methods.catalog` (the light listing).
Specs are imported on first use, and the contract's names (`Run`, `Settings`, ...) when first read,
so `import xcore.methods` stays light (no pandas, no pydantic, no torch, no Streamlit): the command
line lists methods from `xcore.methods.catalog` without importing any of them.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from xcore.errors import ConfigError, XcoreError, wrap_foreign
from xcore.lazy import lazy_exports
from xcore.methods.cache import RunCache
from xcore.methods.registry import REGISTRY, Registry
from xcore.runtime import Progress

if TYPE_CHECKING:
    from xcore.data.dataset import RelationalDataset
    from xcore.methods.base import PREDICTION_COLUMNS, Estimator, Explainer, MethodSpec, Run, Settings, prediction_frame

__getattr__, __dir__, _CONTRACT = lazy_exports(__name__, {
    "xcore.methods.base": ["PREDICTION_COLUMNS", "Estimator", "Explainer", "MethodSpec", "Run", "Settings",
                           "prediction_frame"],
    "xcore.methods.driver": ["FITS", "explain", "validate", "validate_run"],
    "xcore.methods.evaluate": ["Evaluation", "Holdout", "KFold", "evaluate", "fit_predict"],
})

_SHARED_FITS: RunCache[Any] = RunCache(max_entries=0)
"""`run_method`'s default for `fits`: the process-wide `xcore.methods.driver.FITS` (read when used, so
importing this package stays light)."""

RUNS: RunCache[Run] = RunCache(max_entries=16)
"""The process-wide run cache (bounded); pages keep their own runs per session on top of it."""


def run_key(method: str, dataset: RelationalDataset, settings: Settings) -> tuple[str, str, str]:
    """The cache key of a run: method, the data's content fingerprint, the settings' content key."""
    return (method, dataset.fingerprint(), settings.key())


def run_method(method: str, dataset: RelationalDataset, settings: Settings | None = None,
               progress: Progress | None = None, cache: RunCache | None = RUNS,
               fits: RunCache[Any] | None = _SHARED_FITS) -> Run:
    """Run a registered method on `dataset` (its default settings when None), through the run cache.

    A run is keyed by (model key, explainer settings): when only explainer settings changed, the fitted
    model is taken from `fits` and only the explanations are computed again. Every run's explanations
    are validated by the explain driver against the run's predictions. Every failure is an
    `XcoreError`: inapplicable data and bad settings say why, and a foreign exception from a library
    is wrapped with the method named.
    """
    from xcore.methods.driver import FITS, validate_run  # numpy, pandas, pydantic: only when running

    if fits is _SHARED_FITS:
        fits = FITS
    spec = REGISTRY[method]
    reason = spec.applicable(dataset)
    if reason is not None:
        raise XcoreError(f"{spec.title} cannot run on {dataset.name!r}: {reason}")
    if settings is None:
        settings = spec.default_settings(dataset)
    if not isinstance(settings, spec.settings_type):
        raise ConfigError(f"settings for {method} must be {spec.settings_type.__name__}, "
                          f"got {type(settings).__name__}", field="settings")
    user = getattr(dataset, "user_predictions", None)
    if user is not None:  # the labels are a user's model's outputs: a surrogate run, fidelity reported
        from xcore.methods.surrogate import attach_fidelity, check_surrogate  # pandas: only for a surrogate run

        check_surrogate(spec)

    def compute() -> Run:
        try:
            fit_key = (method, dataset.fingerprint(), settings.model_key())
            fitted = None if fits is None else fits.get(fit_key)
            reuse = fitted is not None and "estimator" in inspect.signature(spec.run).parameters
            run = spec.run(dataset, settings, progress, estimator=fitted) if reuse \
                else spec.run(dataset, settings, progress)
            if fits is not None and fitted is None and run.model is not None:
                fits.put(fit_key, run.model)
            validate_run(run, dict(spec.explainer_objects()))
            if user is not None:
                attach_fidelity(run, user)
            if progress is not None:
                progress(1.0, "done")  # every method ends at 100%, whatever its last stage reported
            return run
        except Exception as e:  # noqa: BLE001 - the boundary: foreign errors become xcore errors
            raise wrap_foreign(e, spec.title) from e

    if cache is None:
        return compute()
    return cache.get_or_run(run_key(method, dataset, settings), compute)


__all__ = ["FITS", "PREDICTION_COLUMNS", "Evaluation", "Holdout", "KFold", "evaluate", "fit_predict", "REGISTRY", "RUNS", "Estimator", "Explainer", "MethodSpec", "Registry", "Run",
           "RunCache", "Settings", "explain", "prediction_frame", "run_key", "run_method", "validate", "validate_run"]
