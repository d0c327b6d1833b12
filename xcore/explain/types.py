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
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Literal, Mapping, get_args

import numpy as np
import pandas as pd

from xcore.errors import XcoreError

ItemKind = Literal["ground_rule", "ground_formula", "rule", "feature_clause", "feature_set", "feature", "word"]
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)
"""The kinds of explanation item: one ground PSL rule, one ground Markov-logic formula, a lifted
(first-order) rule or formula, a clause over features, a set of features, one feature, or one word
(bag-of-words baselines such as LIME and SHAP)."""

V1_KINDS: dict[str, str] = {"formula": "ground_formula"}
"""Item kinds of format version 1 that version 2 renamed (v1 "formula" items were ground formulas)."""

Ordering = Literal["abs_score", "score", "given"]
ORDERINGS: tuple[str, ...] = get_args(Ordering)
"""How items are ranked: by |score| descending (default), by score descending, or as given."""

ATOM_ROLES: tuple[str, ...] = ("body", "head")
"""Where an atom sits in a ground rule."""

EXPLANATION_FORMAT = "xcore.explanation"
EXPLANATION_SET_FORMAT = "xcore.explanation_set"
FORMAT_VERSION = 3
READABLE_VERSIONS: tuple[int, ...] = (1, 2, 3)

DIRECTIONS: tuple[int, ...] = (1, -1, 0)
"""An item's direction: +1 pushes the explained prediction up, -1 down, 0 its score has no direction."""

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


class ExplanationError(XcoreError):
    """An explanation is malformed (bad field, non-finite score, invalid or tampered JSON)."""


# ---------------------------------------------------------------------- JSON-safe values
def json_safe(value: Any, where: str = "value") -> Any:
    """Return `value` as plain JSON data (dict/list/str/int/float/bool/None), or raise.

    numpy scalars and arrays become Python numbers and lists, tuples become lists, so a value
    round-trips through JSON to an equal value. Non-finite floats and non-string keys are rejected.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if not math.isfinite(f):
            raise ExplanationError(f"{where}: {f} is not a finite number (JSON cannot hold it)")
        return f
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [json_safe(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ExplanationError(f"{where}: key {k!r} is not a string")
            out[k] = json_safe(v, f"{where}[{k!r}]")
        return out
    raise ExplanationError(f"{where}: {type(value).__name__} is not JSON-safe")


def _finite(value: Any, where: str, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ExplanationError(f"{where} must be a number, got {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f):
        raise ExplanationError(f"{where} must be finite, got {f}")
    return f


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ExplanationError(f"{where} must be a string, got {type(value).__name__}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ExplanationError(f"{where} must be true or false, got {type(value).__name__}")
    return bool(value)


def _string_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple, np.ndarray)):
        raise ExplanationError(f"{where} must be a list of strings")
    return [_string(v, f"{where}[{i}]") for i, v in enumerate(value)]


# ---------------------------------------------------------------------- item
@dataclass
class ExplanationItem:
    """One ranked reason: a ground rule, formula, feature clause or feature set, with its score.

    `atoms` are canonical atom (or feature) strings; `target_index` says which of them is the
    explained target (None if absent). For ground rules, `roles[i]` is "body" or "head" and
    `observed[i]` says whether atom i is observed evidence (True) or open/inferred (False).
    `extras` holds JSON-safe method-specific values (rule weight, coefficient, an interval, ...).
    `direction` (+1 up, -1 down, 0 none) and `effect` (the signed change of the explained prediction
    the item stands for, None where the method cannot say it) are set by the explainer; an effect's
    sign must agree with a non-zero direction.
    """

    kind: ItemKind
    text: str
    natural: str
    score: float
    atoms: list[str] = field(default_factory=list)
    target_index: int | None = None
    roles: list[str] | None = None
    observed: list[bool] | None = None
    explainable: bool = True
    extras: dict[str, Any] = field(default_factory=dict)
    direction: int = 0
    effect: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ITEM_KINDS:
            raise ExplanationError(f"item kind {self.kind!r} is not one of {', '.join(ITEM_KINDS)}")
        self.text = _string(self.text, "item text")
        self.natural = _string(self.natural, "item natural-language text")
        self.score = _finite(self.score, f"score of item {self.text!r}")  # type: ignore[assignment]
        if isinstance(self.direction, (bool, np.bool_)) or not isinstance(self.direction, (int, np.integer)) \
                or int(self.direction) not in DIRECTIONS:
            raise ExplanationError(f"direction of item {self.text!r} must be 1, -1 or 0, got {self.direction!r}")
        self.direction = int(self.direction)
        self.effect = _finite(self.effect, f"effect of item {self.text!r}", optional=True)
        if self.effect is not None and self.effect != 0 and self.direction != 0 \
                and (self.effect > 0) != (self.direction > 0):
            raise ExplanationError(f"item {self.text!r}: effect {self.effect:+.3g} disagrees with its direction "
                                   f"{self.direction:+d}")
        self.atoms = _string_list(self.atoms, f"atoms of item {self.text!r}")
        n = len(self.atoms)
        if self.target_index is not None:
            if isinstance(self.target_index, (bool, np.bool_)) or not isinstance(self.target_index, (int, np.integer)):
                raise ExplanationError(f"target_index of item {self.text!r} must be an integer or None")
            self.target_index = int(self.target_index)
            if not 0 <= self.target_index < n:
                raise ExplanationError(
                    f"target_index {self.target_index} of item {self.text!r} is outside its {n} atoms")
        if self.roles is not None:
            self.roles = _string_list(self.roles, f"roles of item {self.text!r}")
            bad = [r for r in self.roles if r not in ATOM_ROLES]
            if bad:
                raise ExplanationError(f"item {self.text!r}: atom role {bad[0]!r} is not 'body' or 'head'")
            if len(self.roles) != n:
                raise ExplanationError(f"item {self.text!r} has {n} atoms but {len(self.roles)} roles")
        if self.observed is not None:
            if isinstance(self.observed, (str, bytes)) or not isinstance(self.observed, (list, tuple, np.ndarray)):
                raise ExplanationError(f"observed flags of item {self.text!r} must be a list of booleans")
            self.observed = [_bool(v, f"observed[{i}] of item {self.text!r}") for i, v in enumerate(self.observed)]
            if len(self.observed) != n:
                raise ExplanationError(f"item {self.text!r} has {n} atoms but {len(self.observed)} observed flags")
        self.explainable = _bool(self.explainable, f"explainable flag of item {self.text!r}")
        if not isinstance(self.extras, Mapping):
            raise ExplanationError(f"extras of item {self.text!r} must be a dict")
        self.extras = json_safe(self.extras, f"extras of item {self.text!r}")

    @property
    def target_atom(self) -> str | None:
        """The target's canonical text if this item involves it, else None."""
        return None if self.target_index is None else self.atoms[self.target_index]

    def atom_table(self) -> pd.DataFrame:
        """One row per atom: atom, role (body/head/None), observed (bool/None), is_target."""
        n = len(self.atoms)
        return pd.DataFrame({
            "atom": pd.Series(self.atoms, dtype=object),
            "role": pd.Series(self.roles if self.roles is not None else [None] * n, dtype=object),
            "observed": pd.Series(self.observed if self.observed is not None else [None] * n, dtype=object),
            "is_target": np.arange(n) == (-1 if self.target_index is None else self.target_index),
        })

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data for this item (all fields, always)."""
        return {
            "kind": self.kind, "text": self.text, "natural": self.natural, "score": self.score,
            "direction": self.direction, "effect": self.effect, "atoms": list(self.atoms), "target_index": self.target_index,
            "roles": None if self.roles is None else list(self.roles),
            "observed": None if self.observed is None else list(self.observed),
            "explainable": self.explainable, "extras": json_safe(self.extras),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "item") -> "ExplanationItem":
        """Rebuild an item from `to_dict` output; raises `ExplanationError` on unknown/missing keys."""
        data = _check_keys(data, where, required=("kind", "text", "natural", "score"),
                           optional=("direction", "effect", "atoms", "target_index", "roles", "observed",
                                     "explainable", "extras"))
        if isinstance(data["kind"], str):
            data["kind"] = V1_KINDS.get(data["kind"], data["kind"])
        try:
            return cls(**data)
        except ExplanationError as e:
            raise ExplanationError(f"{where}: {e}") from None


def _check_keys(data: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...],
                fmt: str | None = None) -> dict:
    """A copy of JSON object `data` after checking its format tag (if `fmt`) and its keys."""
    if not isinstance(data, dict):
        raise ExplanationError(f"{where} must be a JSON object, got {type(data).__name__}")
    if fmt is not None:
        _check_format(data, fmt, where)
    missing = [k for k in required if k not in data]
    if missing:
        raise ExplanationError(f"{where} is missing {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise ExplanationError(f"{where} has unknown field(s) {', '.join(repr(k) for k in unknown)}")
    return dict(data)


def _rank_order(items: list[ExplanationItem], ordering: str) -> list[ExplanationItem]:
    """Items in rank order; stable, so ties keep their given order."""
    if ordering == "given" or len(items) < 2:
        return list(items)
    scores = np.array([it.score for it in items], dtype=float)
    key = -np.abs(scores) if ordering == "abs_score" else -scores
    return [items[i] for i in np.argsort(key, kind="stable")]


def _items_frame(items: list[ExplanationItem], expand_extras: bool) -> pd.DataFrame:
    """One row per item in the given order, with a 1-based rank column."""
    n = len(items)
    frame = pd.DataFrame({
        "rank": np.arange(1, n + 1, dtype="int64"),
        "kind": pd.Series([it.kind for it in items], dtype=object),
        "text": pd.Series([it.text for it in items], dtype=object),
        "natural": pd.Series([it.natural for it in items], dtype=object),
        "score": np.array([it.score for it in items], dtype="float64"),
        "direction": np.array([it.direction for it in items], dtype="int64"),
        "effect": np.array([np.nan if it.effect is None else it.effect for it in items], dtype="float64"),
        "explainable": np.array([it.explainable for it in items], dtype=bool),
        "atoms": pd.Series([list(it.atoms) for it in items], dtype=object),
        "target_atom": pd.Series([it.target_atom for it in items], dtype=object),
        "roles": pd.Series([None if it.roles is None else list(it.roles) for it in items], dtype=object),
        "observed": pd.Series([None if it.observed is None else list(it.observed) for it in items], dtype=object),
        "extras": pd.Series([json.dumps(it.extras, sort_keys=True) for it in items], dtype=object),
    })
    if expand_extras:
        keys: dict[str, None] = {}
        for it in items:
            for k in it.extras:
                keys.setdefault(k, None)
        for k in keys:
            col = f"extra_{k}"
            if col in frame.columns:
                raise ExplanationError(f"extras key {k!r} clashes with column {col!r}")
            frame[col] = pd.Series([_scalar_or_json(it.extras.get(k)) for it in items], dtype=object)
    return frame


def _scalar_or_json(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


def _reject_constant(name: str) -> None:
    raise ExplanationError(f"JSON contains {name}, which is not a finite number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ExplanationError(f"JSON object has the key {k!r} twice")
        out[k] = v
    return out


def loads_strict(text: Any, what: str) -> Any:
    """Parse JSON text strictly (no NaN/Infinity); errors name line and column."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ExplanationError(f"{what} JSON is not UTF-8: {e}") from None
    if not isinstance(text, str):
        raise ExplanationError(f"{what} JSON must be a string, got {type(text).__name__}")
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise ExplanationError(f"{what} JSON is malformed: line {e.lineno}, column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise ExplanationError(f"{what} JSON is nested too deeply") from None


def _check_format(data: dict, expected: str, where: str) -> None:
    fmt, version = data.get("format"), data.get("version")
    if fmt != expected:
        raise ExplanationError(f"{where}: format is {fmt!r}, expected {expected!r}")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ExplanationError(f"{where}: unsupported format version {version!r} "
                               f"(this xcore reads {', '.join(map(str, READABLE_VERSIONS))})")



# ---------------------------------------------------------------------- score meaning and target
@dataclass(frozen=True)
class ScoreSpec:
    """What an explanation's scores mean: a short label, a sentence, whether the sign matters, a unit.

    Pages caption every score with `caption()`; the study page and reports read it from the JSON.
    """

    label: str
    measures: str
    signed: bool = False
    """The score's sign is the item's direction (Shapley values, LIME/SHAP coefficients, forces)."""
    unit: str = ""
    directed: bool = True
    """Items carry a direction at all; False for scores such as fidelity, coverage or precision."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", _string(self.label, "score label"))
        object.__setattr__(self, "measures", _string(self.measures, "score meaning"))
        object.__setattr__(self, "signed", _bool(self.signed, "score signed flag"))
        object.__setattr__(self, "unit", _string(self.unit, "score unit"))
        object.__setattr__(self, "directed", _bool(self.directed, "score directed flag"))
        if self.signed and not self.directed:
            raise ExplanationError(f"score {self.label!r}: a signed score gives its items a direction")

    def caption(self) -> str:
        """One sentence for a chart caption from this spec alone: label, meaning, how direction is shown, unit."""
        if self.signed:
            sign = "Its sign is the direction: positive pushes the prediction up, negative pushes it down."
        elif self.directed:
            sign = ("Larger means more influence; the score has no sign of its own, so each reason's direction "
                    "(up or down) is shown by its colour and its words.")
        else:
            sign = "Larger means more influence; this score has no direction (it says neither up nor down)."
        unit = f" Unit: {self.unit}." if self.unit else ""
        return f"Score {self.label}: {self.measures} {sign}{unit}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "measures": self.measures, "signed": self.signed, "unit": self.unit,
                "directed": self.directed}

    @classmethod
    def from_dict(cls, data: Any, where: str = "score spec") -> "ScoreSpec":
        data = _check_keys(data, where, required=("label", "measures"), optional=("signed", "unit", "directed"))
        return cls(**data)


_ATOM_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.S)
_ROW_RE = re.compile(r"^\s*row\s+(\S+)\s*$")


def _split_args(text: str) -> list[str]:
    """Arguments of an atom text split on top-level commas (quotes and brackets respected)."""
    out, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch in "([":
            depth += 1
            cur.append(ch)
        elif ch in ")]":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur or out:
        out.append("".join(cur).strip())
    return out


@dataclass(frozen=True)
class Target:
    """What an explanation explains, structured: a ground atom (predicate + arguments) or a row.

    `text` is the one canonical text (``rating(u1, a2)``, ``row 17``) that indexes explanation sets.
    """

    predicate: str | None = None
    args: tuple[str, ...] = ()
    row: str | None = None

    def __post_init__(self) -> None:
        if (self.predicate is None) == (self.row is None):
            raise ExplanationError("a target is either an atom (predicate + arguments) or a row, not both")
        object.__setattr__(self, "args", tuple(_string(a, "target argument") for a in self.args))

    @property
    def text(self) -> str:
        if self.row is not None:
            return f"row {self.row}"
        return f"{self.predicate}({', '.join(self.args)})"

    @classmethod
    def atom(cls, predicate: str, args: Iterable[Any]) -> "Target":
        return cls(predicate=predicate, args=tuple(str(a) for a in args))

    @classmethod
    def of_row(cls, row: Any) -> "Target":
        return cls(row=str(row))

    @classmethod
    def parse(cls, text: str) -> "Target | None":
        """The structured form of a target text, or None when it is neither an atom nor ``row N``."""
        m = _ROW_RE.match(text)
        if m:
            return cls(row=m.group(1))
        m = _ATOM_RE.match(text)
        if m:
            return cls(predicate=m.group(1), args=tuple(_split_args(m.group(2))))
        return None

    def to_dict(self) -> dict[str, Any]:
        if self.row is not None:
            return {"row": self.row}
        return {"predicate": self.predicate, "args": list(self.args)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "target") -> "Target":
        data = _check_keys(data, where, required=(), optional=("predicate", "args", "row"))
        if "row" in data:
            return cls(row=_string(data["row"], f"{where} row"))
        if "predicate" not in data:
            raise ExplanationError(f"{where} needs a predicate or a row")
        return cls(predicate=_string(data["predicate"], f"{where} predicate"),
                   args=tuple(_string_list(data.get("args", []), f"{where} args")))

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
        self.target = _string(self.target, "explanation target")
        if self.prediction_kind not in PREDICTION_KINDS:
            raise ExplanationError(f"prediction_kind of {self.target!r} must be one of "
                                   f"{', '.join(repr(k) for k in PREDICTION_KINDS)}, got {self.prediction_kind!r}")
        if self.score_spec is not None and not isinstance(self.score_spec, ScoreSpec):
            raise ExplanationError(f"score_spec of {self.target!r} must be a ScoreSpec")
        self.target_text = _string(self.target_text, f"target_text of {self.target!r}")
        self.method = _string(self.method, f"method of {self.target!r}")
        self.prediction = _finite(self.prediction, f"prediction for {self.target!r}", optional=True)
        self.truth = _finite(self.truth, f"truth for {self.target!r}", optional=True)
        if self.ordering not in ORDERINGS:
            raise ExplanationError(f"ordering {self.ordering!r} is not one of {', '.join(ORDERINGS)}")
        if isinstance(self.items, (str, bytes, Mapping)) or not isinstance(self.items, Iterable):
            raise ExplanationError(f"items of {self.target!r} must be a list of ExplanationItem")
        items = list(self.items)
        for i, it in enumerate(items):
            if not isinstance(it, ExplanationItem):
                raise ExplanationError(f"item {i} of {self.target!r} is a {type(it).__name__}, not an ExplanationItem")
        self.items = _rank_order(items, self.ordering)
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
        return _items_frame(self.items, expand_extras)

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
        data = _check_keys(data, where, required=("format", "version", "target", "items"),
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


def _sign(value: Any) -> int:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return 0
    return 0 if not math.isfinite(v) or v == 0 else (1 if v > 0 else -1)


def legacy_direction(item: ExplanationItem, signed_score: bool) -> int:
    """The direction of an item read from format version 1 or 2, which stored it only implicitly:
    ``extras["direction"]`` or a ground rule's ``extras["force"]``, a formula's weight times the sign of
    the target's literal, else the sign of a signed score. Used only when reading those versions."""
    ex = item.extras
    for key in ("direction", "force"):
        if ex.get(key) is not None:
            return _sign(ex[key])
    if ex.get("weight") is not None and ex.get("sign") is not None:
        return _sign(float(ex["weight"]) * float(ex["sign"]))
    return _sign(item.score) if signed_score else 0


def check_k(k: Any, allow_zero: bool = False) -> int:
    """`k` as an int if it is a valid cutoff (>= 1, or >= 0 with `allow_zero`); the rule every metric@k shares."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ExplanationError(f"k must be an integer, got {k!r}")
    low = 0 if allow_zero else 1
    if k < low:
        raise ExplanationError(f"k must be at least {low}, got {k}")
    return int(k)


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
        self.method = _string(self.method, "explanation set method")
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
        frame = _items_frame(items, expand_extras)
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
        data = _check_keys(data, "explanation set", required=("format", "version", "explanations"),
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
