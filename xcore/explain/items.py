"""One ranked reason of an explanation (`ExplanationItem`), its kinds, rank order and table form."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

import numpy as np
import pandas as pd

from xcore.explain.json_checks import (
    ExplanationError,
    check_bool,
    check_finite,
    check_keys,
    check_string,
    check_string_list,
    json_safe,
)

ItemKind = Literal["ground_rule", "ground_formula", "rule", "feature_clause", "feature_set", "feature", "word"]
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)
"""The kinds of explanation item: one ground PSL rule, one ground Markov-logic formula, a lifted
(first-order) rule or formula, a clause over features, a set of features, one feature, or one word
(bag-of-words baselines such as LIME and SHAP)."""

V1_KINDS: dict[str, str] = {"formula": "ground_formula"}
"""Item kinds of format version 1 that version 2 renamed (v1 "formula" items were ground formulas)."""

ATOM_ROLES: tuple[str, ...] = ("body", "head")
"""Where an atom sits in a ground rule."""

DIRECTIONS: tuple[int, ...] = (1, -1, 0)
"""An item's direction: +1 pushes the explained prediction up, -1 down, 0 its score has no direction."""


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
        self.text = check_string(self.text, "item text")
        self.natural = check_string(self.natural, "item natural-language text")
        self.score = check_finite(self.score, f"score of item {self.text!r}")  # type: ignore[assignment]
        if isinstance(self.direction, (bool, np.bool_)) or not isinstance(self.direction, (int, np.integer)) \
                or int(self.direction) not in DIRECTIONS:
            raise ExplanationError(f"direction of item {self.text!r} must be 1, -1 or 0, got {self.direction!r}")
        self.direction = int(self.direction)
        self.effect = check_finite(self.effect, f"effect of item {self.text!r}", optional=True)
        if self.effect is not None and self.effect != 0 and self.direction != 0 \
                and (self.effect > 0) != (self.direction > 0):
            raise ExplanationError(f"item {self.text!r}: effect {self.effect:+.3g} disagrees with its direction "
                                   f"{self.direction:+d}")
        self.atoms = check_string_list(self.atoms, f"atoms of item {self.text!r}")
        n = len(self.atoms)
        if self.target_index is not None:
            if isinstance(self.target_index, (bool, np.bool_)) or not isinstance(self.target_index, (int, np.integer)):
                raise ExplanationError(f"target_index of item {self.text!r} must be an integer or None")
            self.target_index = int(self.target_index)
            if not 0 <= self.target_index < n:
                raise ExplanationError(
                    f"target_index {self.target_index} of item {self.text!r} is outside its {n} atoms")
        if self.roles is not None:
            self.roles = check_string_list(self.roles, f"roles of item {self.text!r}")
            bad = [r for r in self.roles if r not in ATOM_ROLES]
            if bad:
                raise ExplanationError(f"item {self.text!r}: atom role {bad[0]!r} is not 'body' or 'head'")
            if len(self.roles) != n:
                raise ExplanationError(f"item {self.text!r} has {n} atoms but {len(self.roles)} roles")
        if self.observed is not None:
            if isinstance(self.observed, (str, bytes)) or not isinstance(self.observed, (list, tuple, np.ndarray)):
                raise ExplanationError(f"observed flags of item {self.text!r} must be a list of booleans")
            self.observed = [check_bool(v, f"observed[{i}] of item {self.text!r}") for i, v in enumerate(self.observed)]
            if len(self.observed) != n:
                raise ExplanationError(f"item {self.text!r} has {n} atoms but {len(self.observed)} observed flags")
        self.explainable = check_bool(self.explainable, f"explainable flag of item {self.text!r}")
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
        data = check_keys(data, where, required=("kind", "text", "natural", "score"),
                           optional=("direction", "effect", "atoms", "target_index", "roles", "observed",
                                     "explainable", "extras"))
        if isinstance(data["kind"], str):
            data["kind"] = V1_KINDS.get(data["kind"], data["kind"])
        try:
            return cls(**data)
        except ExplanationError as e:
            raise ExplanationError(f"{where}: {e}") from None


def rank_order(items: list[ExplanationItem], ordering: str) -> list[ExplanationItem]:
    """Items in rank order; stable, so ties keep their given order."""
    if ordering == "given" or len(items) < 2:
        return list(items)
    scores = np.array([it.score for it in items], dtype=float)
    key = -np.abs(scores) if ordering == "abs_score" else -scores
    return [items[i] for i in np.argsort(key, kind="stable")]


def items_frame(items: list[ExplanationItem], expand_extras: bool) -> pd.DataFrame:
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
            frame[col] = pd.Series([scalar_or_json(it.extras.get(k)) for it in items], dtype=object)
    return frame


def scalar_or_json(v: Any) -> Any:
    """A table cell: lists and dicts as JSON text, scalars as they are."""
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


def sign_of(value: Any) -> int:
    """+1, -1 or 0: the sign of a number (0 for anything else)."""
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
            return sign_of(ex[key])
    if ex.get("weight") is not None and ex.get("sign") is not None:
        return sign_of(float(ex["weight"]) * float(ex["sign"]))
    return sign_of(item.score) if signed_score else 0
