"""The method contract and the registry of methods (`REGISTRY`), which the app's navigation,
the command line and the study page all read.

A new method is one package with a module exposing a `MethodSpec` plus one line in `_ENTRIES`.
Specs are imported on first use, so `import xcore.methods` stays light (no torch, no Streamlit).
"""

from __future__ import annotations

import importlib
from typing import Iterator, Mapping

from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError, XcoreError, wrap_foreign
from xcore.methods.base import (PREDICTION_COLUMNS, Estimator, Explainer, MethodSpec, Run, Settings,
                                prediction_frame)
from xcore.methods.cache import RunCache
from xcore.runtime import Progress

_ENTRIES: dict[str, str] = {
    "esms": "xcore.psl.method:SPEC",
    "mln": "xcore.mln.method:SPEC",
    "plkb": "xcore.plkb.method:SPEC",
    "nlil": "xcore.nlil.method:SPEC",
}
"""Registry key -> "module:attribute" of the method's `MethodSpec`, in navigation order."""


class Registry(Mapping[str, MethodSpec]):
    """Method key -> `MethodSpec`, importing each method's package on first access."""

    def __init__(self, entries: Mapping[str, str]) -> None:
        self._entries = dict(entries)
        self._loaded: dict[str, MethodSpec] = {}

    def __getitem__(self, key: str) -> MethodSpec:
        if key not in self._entries:
            raise ConfigError(f"unknown method {key!r}; registered: {', '.join(self._entries)}", field="method")
        if key not in self._loaded:
            module, attr = self._entries[key].split(":")
            self._loaded[key] = getattr(importlib.import_module(module), attr)
        return self._loaded[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


REGISTRY = Registry(_ENTRIES)
RUNS = RunCache(max_entries=16)
"""The process-wide run cache (bounded); pages keep their own runs per session on top of it."""


def run_key(method: str, dataset: RelationalDataset, settings: Settings) -> tuple[str, str, str]:
    """The cache key of a run: method, the data's content fingerprint, the settings' content key."""
    return (method, dataset.fingerprint(), settings.key())


def run_method(method: str, dataset: RelationalDataset, settings: Settings | None = None,
               progress: Progress | None = None, cache: RunCache | None = RUNS) -> Run:
    """Run a registered method on `dataset` (its default settings when None), through the run cache.

    Every failure is an `XcoreError`: inapplicable data and bad settings say why, and a foreign
    exception from a library is wrapped with the method named.
    """
    spec = REGISTRY[method]
    reason = spec.applicable(dataset)
    if reason is not None:
        raise XcoreError(f"{spec.title} cannot run on {dataset.name!r}: {reason}")
    if settings is None:
        settings = spec.default_settings(dataset)
    if not isinstance(settings, spec.settings_type):
        raise ConfigError(f"settings for {method} must be {spec.settings_type.__name__}, "
                          f"got {type(settings).__name__}", field="settings")

    def compute() -> Run:
        try:
            return spec.run(dataset, settings, progress)
        except Exception as e:  # noqa: BLE001 - the boundary: foreign errors become xcore errors
            raise wrap_foreign(e, spec.title) from e

    if cache is None:
        return compute()
    return cache.get_or_run(run_key(method, dataset, settings), compute)


__all__ = ["PREDICTION_COLUMNS", "REGISTRY", "RUNS", "Estimator", "Explainer", "MethodSpec", "Registry", "Run",
           "RunCache", "Settings", "prediction_frame", "run_key", "run_method"]
