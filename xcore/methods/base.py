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

import hashlib
import inspect
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from xcore.data import splits
from xcore.data.dataset import RelationalDataset
from xcore.errors import ConfigError, NotFittedError, XcoreError
from xcore.explain.types import Explanation, ExplanationError, ExplanationSet, ScoreSpec, json_safe, loads_strict
from xcore.methods.baselines import with_baselines
from xcore.methods.registry import REGISTRY
from xcore.runtime import Progress

PREDICTION_COLUMNS: tuple[str, ...] = ("target", "prediction", "truth")
"""The first columns of every `Estimator.predict` frame (truth may be missing); method columns follow."""

RUN_FORMAT = "xcore.run"
RUN_VERSION = 2
"""Version 2: explanations in format 3 (typed direction and effect per item); version 1 is read too."""
READABLE_RUN_VERSIONS: tuple[int, ...] = (1, 2)


# ---------------------------------------------------------------------- settings
def _field_of(error: Mapping[str, Any]) -> str:
    """The dotted field name of one pydantic error entry."""
    return ".".join(str(p) for p in error.get("loc", ())) or "settings"


def config_error(exc: ValidationError, owner: str) -> ConfigError:
    """A `ConfigError` naming the first bad field of a pydantic `ValidationError` and what is wrong."""
    first = exc.errors()[0]
    name = _field_of(first)
    value = first.get("input")
    shown = "" if isinstance(value, Mapping) else f" (got {value!r})"
    return ConfigError(f"{first.get('msg', 'invalid value')}{shown} [{owner}]", field=name)


class Settings(BaseModel):
    """Frozen, hashable, validated settings of one method run; subclasses declare the fields.

    Unknown fields, NaN/inf and out-of-range values raise `ConfigError` naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, validate_default=True,
                              use_attribute_docstrings=True)
    """`use_attribute_docstrings`: a field's docstring is its description (the form's help, `--help`)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise config_error(e, type(self).__name__) from None

    @classmethod
    def parse(cls, data: Mapping[str, Any] | None = None, **changes: Any) -> "Settings":
        """Settings from a mapping (YAML, flags, a bundle), validated; `changes` override it."""
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(f"settings must be a mapping of field names to values, got {type(data).__name__}")
        return cls(**{**dict(data or {}), **changes})

    def replace(self, **changes: Any) -> "Settings":
        """A validated copy with some fields changed (pydantic's model_copy does not validate)."""
        return type(self).parse(self.model_dump(), **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data of every field (tuples become lists)."""
        return json_safe(self.model_dump(mode="json"), "settings")

    def key(self) -> str:
        """A stable content hash of the settings (same settings, same key, in any process)."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{type(self).__name__}|{text}".encode()).hexdigest()[:24]

    method_key: ClassVar[str] = ""
    """The registry key of the method these settings belong to."""

    explainer_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields that only change how a fitted model is explained (not the model): `model_key` leaves
    them out, so changing one re-explains a cached model instead of refitting it."""

    def model_key(self) -> str:
        """A stable content hash of the fields that decide the fitted model (every field but the
        explainers' ones)."""
        data = {k: v for k, v in self.to_dict().items() if k not in self.explainer_fields}
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{type(self).__name__}|model|{text}".encode()).hexdigest()[:24]

    def explainer_settings(self, fields: tuple[str, ...]) -> dict[str, Any]:
        """The values of some explainer fields (an explainer's own settings), as plain JSON data."""
        data = self.to_dict()
        return {f: data[f] for f in fields if f in data}

    def estimator(self) -> "Estimator":
        """The estimator these settings describe (the registered method's estimator type, unfitted)."""
        from xcore.methods.registry import REGISTRY  # imports method packages by name, lazily

        return REGISTRY[self.method_key].estimator_type(self)


# ---------------------------------------------------------------------- estimator
class Estimator:
    """Base of every method's estimator: parameters in `__init__`, learned attributes after `fit`.

    As in scikit-learn, `__init__` stores its arguments unchanged (no validation, no work), so
    `get_params()` round-trips; `fit` returns self; learned attributes end in ``_``.

    Parameters
    ----------
    settings : Settings
        The method's validated settings (each subclass takes its own `Settings` type).
    """

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters as stored (scikit-learn's convention)."""
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def is_fitted(self) -> bool:
        """True once `fit` has set the learned attributes."""
        return any(k.endswith("_") and not k.startswith("_") and v is not None for k, v in vars(self).items())

    def check_fitted(self) -> None:
        """Raise `NotFittedError` before `fit`."""
        if not self.is_fitted():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit(data) first")

    def split_predicates(self, data: RelationalDataset) -> list[str] | None:
        """The target predicates whose labelled atoms are this estimator's units (None: the data's
        own, or the rows of its table): the settings' ``target`` field where the method has one."""
        target = getattr(getattr(self, "settings", None), "target", None)
        return [target] if isinstance(target, str) and target else None

    def units(self, data: RelationalDataset) -> pd.DataFrame:
        """The labelled units a held-out evaluation splits (`xcore.data.splits.units`)."""
        return splits.units(data, self.split_predicates(data))

    def holdout(self, data: RelationalDataset, test_units: list[str]) -> tuple[RelationalDataset, RelationalDataset]:
        """(training, test) data holding out `test_units`: `fit` sees only the first, `predict` the second."""
        return splits.holdout(data, test_units, self.split_predicates(data))

    def fit(self, data: RelationalDataset, progress: Progress | None = None) -> "Estimator":  # pragma: no cover
        """Learn from `data`; returns self.

        Parameters
        ----------
        data : RelationalDataset
            The relational data (observed atoms and, for targets, their truth where known).
        progress : callable, optional
            ``progress(fraction, message)``; it raises `Cancelled` when the user cancels.
        """
        raise NotImplementedError

    def predict(self, data: RelationalDataset | None = None) -> pd.DataFrame:  # pragma: no cover
        """Predictions as the one prediction frame (see `prediction_frame`).

        Parameters
        ----------
        data : RelationalDataset, optional
            New data of the same schema; None predicts the targets of the data `fit` saw.
        """
        raise NotImplementedError


def prediction_frame(target: Any, prediction: Any, truth: Any = None, **extra: Any) -> pd.DataFrame:
    """The one prediction frame shape: target, prediction, truth (NaN where unknown), then extras."""
    frame = pd.DataFrame({"target": pd.Series(target, dtype=object).reset_index(drop=True)})
    frame["prediction"] = pd.Series(prediction).reset_index(drop=True)
    frame["truth"] = pd.Series(truth).reset_index(drop=True) if truth is not None else float("nan")
    for k, v in extra.items():
        frame[k] = pd.Series(v).reset_index(drop=True) if not isinstance(v, (int, float, str)) else v
    return frame


# ---------------------------------------------------------------------- explainer
class Explainer:
    """An explanation algorithm for a fitted model: a stable `name`, a `score_spec`, `supports`, `explain`.

    `settings_fields` names the fields of the method's `Settings` that are this explainer's own
    settings (defaults, bounds and help live there once); `prediction_column` is the column of the
    model's predictions its explanations explain (None when it explains another model, such as the
    bag-of-words classifier of LIME and SHAP). `measure` checks its items against the model by
    intervention (`xcore.methods.verify`); None where the score is not an effect.

    Attributes
    ----------
    name : str
        Stable registry name (``"esms:ground-rules"``, ``"plkb:decisive"``, ...), kept in files.
    title : str
        Human title shown on the pages.
    score_spec : ScoreSpec
        What the score means: its unit, range, and whether it has a direction.
    settings_fields : tuple of str
        Fields of the method's `Settings` that belong to this explainer (not part of the fit key).
    prediction_column : str or None
        Column of ``Run.predictions`` its explanations explain; None for another model's output.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    score_spec: ClassVar[ScoreSpec]
    settings_fields: ClassVar[tuple[str, ...]] = ()
    prediction_column: ClassVar[str | None] = "prediction"

    def settings_of(self, settings: "Settings") -> dict[str, Any]:
        """This explainer's own settings within a method's settings."""
        return settings.explainer_settings(self.settings_fields)

    def key(self, settings: "Settings") -> str:
        """A stable content hash of this explainer and its own settings (with the model key, a run's
        explanations are keyed by it)."""
        text = json.dumps(self.settings_of(settings), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(f"{self.name}|{text}".encode()).hexdigest()[:24]

    def measure(self, run: "Run", data: RelationalDataset | None, explanation: Explanation,
                k: int) -> "Measurement | None":
        """The change of the explained prediction that each of the top-`k` items stands for, measured
        on the fitted model by intervention the way the method defines the item (remove the ground
        rule, zero the formula's weight, mask the features, re-infer); None: the score is not an
        effect, so there is nothing directional to check."""
        return None

    def supports(self, model: Any) -> str | None:
        """None if this explainer can explain `model`, else the reason it cannot."""
        return None

    def explain(self, model: Any, data: RelationalDataset | None = None, targets: list[str] | None = None,
                progress: Progress | None = None) -> ExplanationSet:  # pragma: no cover
        raise NotImplementedError

    def finish(self, explanations: ExplanationSet) -> ExplanationSet:
        """The set stamped with this explainer's registry name and score meaning on every member."""
        for e in explanations:
            e.method = self.name
            e.score_spec = self.score_spec
        return ExplanationSet(explanations.explanations, method=self.name, meta=explanations.meta,
                              score_spec=self.score_spec)


@dataclass
class Measurement:
    """What an intervention measured for the top items of one explanation: `change[i]` is the
    prediction with item i minus the prediction without it (NaN where it could not be measured), and
    changes within `tolerance` (solver or Monte Carlo precision) count as not moved."""

    change: Any
    tolerance: float
    how: str = ""


# ---------------------------------------------------------------------- run
@dataclass
class Run:
    """Everything one method run produced; `bundle()` is its versioned JSON form.

    `model` (the fitted estimator) and `extras` (method objects the pages use, such as the search
    history) live only in memory; a run read back with `from_bundle` has neither.

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
            exps = {str(k): ExplanationSet.from_dict(v) for k, v in data.get("explanations", {}).items()}
            summary = data.get("summary")
            method = str(data["method"])
            return cls(method=method, settings=typed_settings(method, dict(data.get("settings", {}))),
                       fingerprint=str(data.get("fingerprint", "")), predictions=frame, explanations=exps,
                       summary=None if summary is None else Explanation.from_dict(summary, "summary"),
                       metrics=dict(data.get("metrics", {})), timings=dict(data.get("timings", {})),
                       dataset=str(data.get("dataset", "")))
        except (KeyError, TypeError, ValueError) as e:
            raise ExplanationError(f"run bundle is malformed: {e}") from None


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


# ---------------------------------------------------------------------- method spec
@dataclass(frozen=True)
class MethodSpec:
    """One registered method: what the app, the command line and the study page need to run it.

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
    estimator_type : type of Estimator
        The method's estimator class.
    explainer_map : mapping of str to Explainer
        Explainer name -> explainer object (see `explainer_objects`).
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
    surrogate: str = ""
    """What explains a user's model when the method is fitted to its predictions instead of the truth
    (e.g. "m-NLIL rules"); empty: the method cannot act as a surrogate (`xcore.methods.surrogate`)."""

    def explainer_objects(self) -> Mapping[str, Explainer]:
        """The method's explainers by registry name."""
        return self.explainer_map
