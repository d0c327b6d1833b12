"""The one explanation type every method returns: ranked items for a target, plus a collection type.

An `Explanation` says why a model predicted what it did for one *target* (an atom such as
``rating('u12', 'a29')`` or an instance such as ``row 17``; `Target` is its structured form). It
holds `ExplanationItem`s (ground rules, ground formulas, lifted rules, feature clauses, feature
sets, single features, words), each with a score, the atoms it involves and an `explainable` flag;
a `ScoreSpec` says what the scores mean. Items are ranked by |score| (descending, ties keep their given order) unless
the explanation is built with ``ordering="given"`` or ``ordering="score"``.
Every item says, as first-class fields set once by its explainer from the method's mathematics, which
way it pushes the explained prediction (`direction`: +1 up, -1 down, 0 the score has no direction)
and, where the method can say it, by how much (`effect`: the signed change of the prediction the item
stands for). The explanation records the one prediction it explains (`prediction`, and what it is:
`prediction_kind`). Every view renders these fields through `xcore.explain.render`.
Both types serialise to JSON and back exactly (format version 3; versions 1 and 2 are read too, their
items' directions derived once on reading from what those versions stored); malformed JSON raises
`ExplanationError`.
"""


from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Literal, Mapping, get_args

import numpy as np
import pandas as pd

# the item, score and target types and the JSON checks live in their own modules; they are
# re-exported here, the one import path every method and page uses
from xcore.explain.items import (  # noqa: F401
    ATOM_ROLES,
    DIRECTIONS,
    ITEM_KINDS,
    V1_KINDS,
    ExplanationItem,
    ItemKind,
    items_frame,
    legacy_direction,
    rank_order,
)
from xcore.explain.json_checks import (  # noqa: F401
    FORMAT_VERSION,
    READABLE_VERSIONS,
    ExplanationError,
    check_finite,
    check_k,
    check_keys,
    check_string,
    json_safe,
    loads_strict,
)
from xcore.explain.score_spec import ScoreSpec
from xcore.explain.target import Target

Ordering = Literal["abs_score", "score", "given"]
ORDERINGS: tuple[str, ...] = get_args(Ordering)
"""How items are ranked: by |score| descending (default), by score descending, or as given."""

EXPLANATION_FORMAT = "xcore.explanation"
EXPLANATION_SET_FORMAT = "xcore.explanation_set"

PREDICTION_KINDS: tuple[str, ...] = ("", "probability", "soft truth", "class", "score")
"""What an explanation's prediction is: a probability, a soft truth value in [0, 1], a class (0/1 as
the predicted class of a binary label), another score, or unknown ("", read from old files)."""

ITEM_COLUMNS: tuple[str, ...] = (
    "rank", "kind", "text", "natural", "score", "direction", "effect", "explainable",
    "atoms", "target_atom", "roles", "observed", "extras",
)
"""Columns of `Explanation.to_frame` (before optional expanded extras)."""

EXPLANATION_COLUMNS: tuple[str, ...] = ("target", "target_text", "method", "prediction", "truth")
"""Per-explanation columns prepended by `ExplanationSet.to_frame` (long format)."""

__all__ = ["ATOM_ROLES", "DIRECTIONS", "EXPLANATION_COLUMNS", "EXPLANATION_FORMAT", "EXPLANATION_SET_FORMAT",
           "FORMAT_VERSION", "ITEM_COLUMNS", "ITEM_KINDS", "ORDERINGS", "PREDICTION_KINDS", "READABLE_VERSIONS",
           "V1_KINDS", "Explanation", "ExplanationError", "ExplanationItem", "ExplanationSet", "ItemKind", "Ordering",
           "ScoreSpec", "Target", "check_k", "json_safe", "legacy_direction", "loads_strict"]


# ---------------------------------------------------------------------- explanation
@dataclass
class Explanation:
    """Why one target got its prediction: ranked items from one explanation method.

    `target` is the canonical atom/instance text (``rating('u12', 'a29')``, ``row 17``),
    `target_text` its natural-language form. `items` are re-ranked on construction according to
    `ordering` (default: |score| descending, stable). `meta` holds JSON-safe method details.
    """

    target: str
    target_text: str = ""
    method: str = ""
    prediction: float | None = None
    truth: float | None = None
    items: list[ExplanationItem] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    ordering: Ordering = "abs_score"
    score_spec: ScoreSpec | None = None
    """What the item scores mean (None only for explanations read from version-1 JSON)."""
    prediction_kind: str = ""
    """What `prediction` is (one of `PREDICTION_KINDS`): the model's own prediction for the target."""

    def __post_init__(self) -> None:
        self.target = check_string(self.target, "explanation target")
        if self.prediction_kind not in PREDICTION_KINDS:
            raise ExplanationError(f"prediction_kind of {self.target!r} must be one of "
                                   f"{', '.join(repr(k) for k in PREDICTION_KINDS)}, got {self.prediction_kind!r}")
        if self.score_spec is not None and not isinstance(self.score_spec, ScoreSpec):
            raise ExplanationError(f"score_spec of {self.target!r} must be a ScoreSpec")
        self.target_text = check_string(self.target_text, f"target_text of {self.target!r}")
        self.method = check_string(self.method, f"method of {self.target!r}")
        self.prediction = check_finite(self.prediction, f"prediction for {self.target!r}", optional=True)
        self.truth = check_finite(self.truth, f"truth for {self.target!r}", optional=True)
        if self.ordering not in ORDERINGS:
            raise ExplanationError(f"ordering {self.ordering!r} is not one of {', '.join(ORDERINGS)}")
        if isinstance(self.items, (str, bytes, Mapping)) or not isinstance(self.items, Iterable):
            raise ExplanationError(f"items of {self.target!r} must be a list of ExplanationItem")
        items = list(self.items)
        for i, it in enumerate(items):
            if not isinstance(it, ExplanationItem):
                raise ExplanationError(f"item {i} of {self.target!r} is a {type(it).__name__}, not an ExplanationItem")
        self.items = rank_order(items, self.ordering)
        if not isinstance(self.meta, Mapping):
            raise ExplanationError(f"meta of {self.target!r} must be a dict")
        self.meta = json_safe(self.meta, f"meta of {self.target!r}")

    # ------------------------------------------------------------------ ranking
    def ranked(self) -> list[ExplanationItem]:
        """All items in rank order (rank 1 first)."""
        return list(self.items)

    def top(self, k: int) -> list[ExplanationItem]:
        """The first `k` items in rank order (fewer if there are fewer)."""
        return self.items[:check_k(k, allow_zero=True)]

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def target_ref(self) -> Target | None:
        """The structured target (atom or row) parsed from the canonical target text."""
        return Target.parse(self.target)

    @property
    def n_explainable(self) -> int:
        return sum(it.explainable for it in self.items)

    # ------------------------------------------------------------------ tables
    def to_frame(self, expand_extras: bool = False) -> pd.DataFrame:
        """One row per item with its 1-based rank; columns `ITEM_COLUMNS`.

        `atoms`/`roles`/`observed` hold lists; `extras` holds the extras as JSON text. With
        `expand_extras`, each extras key also becomes an ``extra_<key>`` column.
        """
        return items_frame(self.items, expand_extras)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, tagged with format and version."""
        return {
            "format": EXPLANATION_FORMAT, "version": FORMAT_VERSION,
            "target": self.target, "target_text": self.target_text, "method": self.method,
            "prediction": self.prediction, "prediction_kind": self.prediction_kind, "truth": self.truth,
            "ordering": self.ordering,
            "target_ref": None if self.target_ref is None else self.target_ref.to_dict(),
            "score_spec": None if self.score_spec is None else self.score_spec.to_dict(),
            "meta": json_safe(self.meta), "items": [it.to_dict() for it in self.items],
        }

    def to_json(self, indent: int | None = None) -> str:
        """JSON text that `Explanation.from_json` turns back into an equal explanation."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=True)

    @classmethod
    def from_dict(cls, data: Any, where: str = "explanation") -> "Explanation":
        """Rebuild from `to_dict` output, validating every field."""
        data = check_keys(data, where, required=("format", "version", "target", "items"),
                           optional=("target_text", "method", "prediction", "prediction_kind", "truth", "ordering",
                                     "meta", "target_ref", "score_spec"),
                           fmt=EXPLANATION_FORMAT)
        version = data["version"]
        del data["format"], data["version"]
        data.pop("target_ref", None)  # derived from the target text
        if data.get("score_spec") is not None:
            data["score_spec"] = ScoreSpec.from_dict(data["score_spec"], f"{where} score spec")
        target = data["target"]
        label = f"{where} {target!r}" if isinstance(target, str) else where
        raw_items = data["items"]
        if not isinstance(raw_items, list):
            raise ExplanationError(f"{label}: items must be a JSON list")
        data["items"] = [ExplanationItem.from_dict(it, f"{label}, item {i}") for i, it in enumerate(raw_items)]
        if version < 3:  # versions 1 and 2 had no direction field: derive it once from what they stored
            signed = data.get("score_spec") is not None and data["score_spec"].signed
            for it in data["items"]:
                it.direction = legacy_direction(it, signed)
        try:
            return cls(**data)
        except ExplanationError as e:
            raise ExplanationError(f"{where}: {e}") from None

    @classmethod
    def from_json(cls, text: str | bytes) -> "Explanation":
        """Parse and validate JSON written by `to_json`; raises `ExplanationError` if malformed."""
        return cls.from_dict(loads_strict(text, "explanation"))


# ---------------------------------------------------------------------- collection
@dataclass
class ExplanationSet:
    """Explanations of many targets (unique targets), e.g. every prediction of one model.

    Index by target text (``s["rating('u1', 'a2')"]``) or by position; iterate in given order.
    """

    explanations: list[Explanation] = field(default_factory=list)
    method: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    score_spec: ScoreSpec | None = None
    """What the scores of every explanation in the set mean (given to members that lack one)."""

    def __post_init__(self) -> None:
        if isinstance(self.explanations, (str, bytes, Mapping)) or not isinstance(self.explanations, Iterable):
            raise ExplanationError("explanations must be a list of Explanation")
        self.explanations = list(self.explanations)
        self._index: dict[str, int] = {}
        for i, e in enumerate(self.explanations):
            if not isinstance(e, Explanation):
                raise ExplanationError(f"entry {i} is a {type(e).__name__}, not an Explanation")
            if e.target in self._index:
                raise ExplanationError(f"target {e.target!r} is explained twice (entries {self._index[e.target]} and {i})")
            self._index[e.target] = i
        self.method = check_string(self.method, "explanation set method")
        if self.score_spec is not None:
            if not isinstance(self.score_spec, ScoreSpec):
                raise ExplanationError("score_spec of an explanation set must be a ScoreSpec")
            for e in self.explanations:
                if e.score_spec is None:
                    e.score_spec = self.score_spec
        if not isinstance(self.meta, Mapping):
            raise ExplanationError("meta of an explanation set must be a dict")
        self.meta = json_safe(self.meta, "explanation set meta")

    def __len__(self) -> int:
        return len(self.explanations)

    def __iter__(self) -> Iterator[Explanation]:
        return iter(self.explanations)

    def __contains__(self, target: object) -> bool:
        return target in self._index

    def __getitem__(self, key: str | int) -> Explanation:
        if isinstance(key, str):
            if key not in self._index:
                raise KeyError(key)
            return self.explanations[self._index[key]]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self.explanations[int(key)]
        raise TypeError(f"index an ExplanationSet by target text or position, not {type(key).__name__}")

    @property
    def targets(self) -> list[str]:
        return [e.target for e in self.explanations]

    # ------------------------------------------------------------------ tables
    def to_frame(self, expand_extras: bool = False) -> pd.DataFrame:
        """Long format: one row per (target, item), columns `EXPLANATION_COLUMNS` + `ITEM_COLUMNS`.

        `rank` restarts at 1 for each target. Targets with no items contribute no rows
        (see `summary` for one row per target).
        """
        exps = self.explanations
        items = [it for e in exps for it in e.items]
        counts = np.array([len(e.items) for e in exps], dtype="int64")
        frame = items_frame(items, expand_extras)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        frame["rank"] = np.arange(len(items), dtype="int64") - starts + 1
        columns = {
            "target": np.array([e.target for e in exps], dtype=object),
            "target_text": np.array([e.target_text for e in exps], dtype=object),
            "method": np.array([e.method for e in exps], dtype=object),
            "prediction": np.array([np.nan if e.prediction is None else e.prediction for e in exps], dtype="float64"),
            "truth": np.array([np.nan if e.truth is None else e.truth for e in exps], dtype="float64"),
        }
        for pos, col in enumerate(EXPLANATION_COLUMNS):
            values = np.repeat(columns[col], counts)
            frame.insert(pos, col, pd.Series(values, dtype=values.dtype))
        return frame

    def summary(self) -> pd.DataFrame:
        """One row per target: target, method, prediction, truth, n_items, n_explainable, top_score, top_explainable."""
        rows = [{
            "target": e.target, "target_text": e.target_text, "method": e.method,
            "prediction": np.nan if e.prediction is None else e.prediction,
            "truth": np.nan if e.truth is None else e.truth,
            "n_items": len(e.items), "n_explainable": e.n_explainable,
            "top_score": e.items[0].score if e.items else np.nan,
            "top_explainable": bool(e.items[0].explainable) if e.items else False,
        } for e in self.explanations]
        cols = ["target", "target_text", "method", "prediction", "truth", "n_items",
                "n_explainable", "top_score", "top_explainable"]
        return pd.DataFrame(rows, columns=cols)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": EXPLANATION_SET_FORMAT, "version": FORMAT_VERSION, "method": self.method,
            "score_spec": None if self.score_spec is None else self.score_spec.to_dict(),
            "meta": json_safe(self.meta), "explanations": [e.to_dict() for e in self.explanations],
        }

    def to_json(self, indent: int | None = None) -> str:
        """JSON text that `ExplanationSet.from_json` turns back into an equal set."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=True)

    @classmethod
    def from_dict(cls, data: Any) -> "ExplanationSet":
        data = check_keys(data, "explanation set", required=("format", "version", "explanations"),
                           optional=("method", "meta", "score_spec"), fmt=EXPLANATION_SET_FORMAT)
        raw = data["explanations"]
        if not isinstance(raw, list):
            raise ExplanationError("explanation set: explanations must be a JSON list")
        exps = [Explanation.from_dict(e, f"explanation {i}") for i, e in enumerate(raw)]
        spec = data.get("score_spec")
        spec = None if spec is None else ScoreSpec.from_dict(spec, "explanation set score spec")
        return cls(exps, method=data.get("method", ""), meta=data.get("meta", {}), score_spec=spec)

    @classmethod
    def from_json(cls, text: str | bytes) -> "ExplanationSet":
        """Parse and validate JSON written by `to_json`; raises `ExplanationError` if malformed."""
        return cls.from_dict(loads_strict(text, "explanation set"))
