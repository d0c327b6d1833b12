"""`Run`: everything one method run produced, with the versioned JSON bundle the pages, reports, the
study page and the command line read."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

from xcore.errors import ConfigError, XcoreError
from xcore.explain.types import Explanation, ExplanationError, ExplanationSet, json_safe, loads_strict
from xcore.methods.baselines import with_baselines
from xcore.methods.registry import REGISTRY
from xcore.methods.settings import Settings

RUN_FORMAT = "xcore.run"
RUN_VERSION = 2
"""Version 2: explanations in format 3 (typed direction and effect per item); version 1 is read too."""
READABLE_RUN_VERSIONS: tuple[int, ...] = (1, 2)


@dataclass
class Run:
    """Everything one method run produced; `bundle()` is its versioned JSON form.

    `model` (the fitted estimator) and `extras` (method objects the pages use, such as the search
    history) live only in memory; a run read back with `from_bundle` has neither.

    A dataclass: its constructor's parameters are the attributes below, in this order.

    Attributes
    ----------
    method : str
        Registry key of the method that ran (``"esms"``, ``"mln"``, ...).
    settings : Settings or dict
        The validated settings; a bundle read back gets its method's `Settings` type again (a plain
        dict when they are not exactly its fields, e.g. a bundle written before a field was added or removed).
    fingerprint : str
        Content fingerprint of the dataset the run used (`RelationalDataset.fingerprint`).
    predictions : pandas.DataFrame
        One row per target: ``target``, the model's ``prediction`` (and method columns such as
        ``truth``, ``split`` or ``mid``).
    explanations : dict of str to ExplanationSet
        Explainer name -> its explanations, each validated by the explain driver.
    summary : Explanation or None
        The model-level explanation (learned rules, weights), where the method has one.
    metrics : dict of str to float
        Quality figures, with ``baseline_<metric>`` beside each (majority class / mean predictor).
    timings : dict of str to float
        Seconds per stage.
    dataset : str
        The dataset's name.
    model : Estimator or None
        The fitted estimator (in memory only).
    extras : dict
        Method objects the pages read (in memory only).
    """

    method: str
    settings: Settings | dict
    fingerprint: str
    predictions: pd.DataFrame
    explanations: dict[str, ExplanationSet] = field(default_factory=dict)
    summary: Explanation | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    dataset: str = ""
    model: Any = None
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the trivial predictor's figure beside every metric (majority class, mean predictor)
        self.metrics = with_baselines(dict(self.metrics), self.predictions)

    def explanation(self, explainer: str, target: str) -> Explanation:
        """The explanation of `target` by the explainer with registry name `explainer`."""
        if explainer not in self.explanations:
            raise XcoreError(f"no explanations by {explainer!r} in this run; it has: "
                             f"{', '.join(self.explanations) or 'none'}")
        exps = self.explanations[explainer]
        if target not in exps:
            raise XcoreError(f"{explainer} has no explanation of {target!r}")
        return exps[target]

    @property
    def settings_dict(self) -> dict[str, Any]:
        return self.settings.to_dict() if isinstance(self.settings, Settings) else dict(self.settings)

    def bundle(self) -> dict[str, Any]:
        """Plain JSON data: method, settings, fingerprint, predictions, explanations, summary, metrics."""
        preds = self.predictions.astype(object).where(self.predictions.notna(), None)
        return {
            "format": RUN_FORMAT, "version": RUN_VERSION, "method": self.method, "dataset": self.dataset,
            "settings": self.settings_dict, "fingerprint": self.fingerprint,
            "predictions": {"columns": [str(c) for c in preds.columns],
                            "rows": json_safe(_finite_rows(preds.values.tolist()), "predictions")},
            "explanations": {k: v.to_dict() for k, v in self.explanations.items()},
            "summary": None if self.summary is None else self.summary.to_dict(),
            "metrics": json_safe({k: v for k, v in self.metrics.items() if _is_finite(v)}, "metrics"),
            "timings": json_safe(self.timings, "timings"),
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.bundle(), indent=indent, allow_nan=False, ensure_ascii=True)

    @classmethod
    def from_bundle(cls, data: Any) -> "Run":
        """A run from `bundle()` output (or its JSON text), validated; no model, no extras."""
        if isinstance(data, (str, bytes, bytearray)):
            data = loads_strict(data, "run bundle")
        if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
            raise ExplanationError(f"not an xcore run bundle (format must be {RUN_FORMAT!r})")
        if data.get("version") not in READABLE_RUN_VERSIONS or isinstance(data.get("version"), bool):
            raise ExplanationError(f"run bundle version {data.get('version')!r} is not one this xcore reads "
                                   f"({', '.join(map(str, READABLE_RUN_VERSIONS))})")
        try:
            preds = data["predictions"]
            frame = pd.DataFrame(preds["rows"], columns=preds["columns"])
            method = str(data["method"])
            aliases = explainer_aliases(method)
            exps = {aliases.get(str(k), str(k)): renamed(ExplanationSet.from_dict(v), aliases)
                    for k, v in data.get("explanations", {}).items()}
            summary = data.get("summary")
            settings = with_aliases(dict(data.get("settings", {})), aliases)
            return cls(method=method, settings=typed_settings(method, settings),
                       fingerprint=str(data.get("fingerprint", "")), predictions=frame, explanations=exps,
                       summary=None if summary is None else Explanation.from_dict(summary, "summary"),
                       metrics=dict(data.get("metrics", {})), timings=dict(data.get("timings", {})),
                       dataset=str(data.get("dataset", "")))
        except (KeyError, TypeError, ValueError) as e:
            raise ExplanationError(f"run bundle is malformed: {e}") from None


def explainer_aliases(method: str) -> Mapping[str, str]:
    """The method's old explainer names -> today's (none for a method this xcore does not know)."""
    return REGISTRY[method].explainer_aliases if method in REGISTRY else {}


def renamed(explanations: ExplanationSet, aliases: Mapping[str, str]) -> ExplanationSet:
    """The set with an old explainer name (its own and its members') read as today's."""
    if not aliases:
        return explanations
    for e in explanations:
        e.method = aliases.get(e.method, e.method)
    explanations.method = aliases.get(explanations.method, explanations.method)
    return explanations


def with_aliases(settings: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """Settings whose explainer fields (names containing "explainer": a name or a list of them) hold
    today's names."""
    if not aliases:
        return settings
    out: dict[str, Any] = {}
    for k, v in settings.items():
        if "explainer" not in k:
            out[k] = v
        elif isinstance(v, str):
            out[k] = aliases.get(v, v)
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[k] = [aliases.get(x, x) for x in v]
        else:
            out[k] = v
    return out


def typed_settings(method: str, settings: dict[str, Any]) -> "Settings | dict[str, Any]":
    """`settings` as `method`'s Settings type when they are exactly one (every field written, each
    valid); otherwise the dict as written, so a bundle from an older xcore never claims a default it
    did not run with."""
    try:
        typed = REGISTRY[method].settings_type.parse(settings)
    except ConfigError:
        return settings
    return typed if json.loads(json.dumps(typed.to_dict())) == settings else settings


def _is_finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


def _finite_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """Rows with non-finite floats replaced by None (JSON has no NaN)."""
    return [[None if isinstance(v, float) and not math.isfinite(v) else v for v in r] for r in rows]
