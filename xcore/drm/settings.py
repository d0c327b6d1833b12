"""The settings of a deep relational machine run: feature drawing, the network search, the held-out
fold and the explanations."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from xcore.drm.relevance import parse_relevance
from xcore.methods.base import Settings


class DRMSettings(Settings):
    """Settings of a DRM run: feature drawing, the network search, and the explanations."""

    method_key: ClassVar[str] = "drm"

    seed: int = Field(0, ge=0, title="Seed")
    max_draws: int = Field(2000, ge=1, le=200_000, title="Draws (MaxDraws)", description="DrawFeatures' MaxDraws")
    max_literals: int = Field(4, ge=1, le=10, title="Longest feature body", description="longest drawn feature body")
    depth: int = Field(0, ge=0, le=5, title="Depth i (0: the modes' set(i))",
                       description="bottom-clause layers (0: the modes' set(i), else 2)")
    modes: str = Field("", title="Mode declarations (Aleph syntax; empty: derived from the data)",
                       description="Aleph mode directives; empty: derived from the data")
    relevance: str = Field("", title="Relevance levels",
                           description="relevance levels, least relevant first ('label: pred, pred')")
    folds: int = Field(10, ge=2, le=50, title="Folds (the run holds out one)", description=(
        "the run holds out the first of this many seeded stratified folds (at most the size of the smallest "
        "class) as its test set; the paper's k-fold protocol is xcore.methods.evaluate with KFold(folds)"))
    fold_predicate: str = Field("", title="Fold predicate", description=(
        "a binary predicate (example, fold), left out of the background; the run holds out its first fold; "
        "empty: seeded folds"))
    hidden: tuple[tuple[int, ...], ...] = ((32,),)
    learning_rates: tuple[float, ...] = Field((0.01,), title="Learning rates")
    weight_decays: tuple[float, ...] = Field((0.001, 0.01, 0.03), title="Weight decays",
                                             description="L2 penalties tried on the inner validation splits")
    dropout: float = Field(0.2, ge=0.0, lt=1.0, title="Dropout")
    distinct_inputs: bool = Field(True, title="Let validation try one input per distinct feature extension",
                                  description=(
        "the inner validation chooses the network's inputs between every feature and one column per distinct "
        "feature extension (the linear model takes the same); off: every feature, repeats included"))
    max_epochs: int = Field(100, ge=1, le=5000, title="Max epochs",
                            description="epochs of each validation run (retraining: at most 2x)")
    inner_folds: int = Field(3, ge=2, le=10, title="Inner validation splits",
                             description="validation splits whose loss curves choose the network")
    hamming: int = Field(5, ge=0, le=10_000, title="Neighbourhood radius k (Hamming)",
                         description="neighbourhood radius k (Hamming distance)")
    min_neighbours: int = Field(30, ge=0, le=10_000, title="Neighbours: widen k until n training instances (0: fixed k)",
                                description=(
        "n > 0: widen the radius from `hamming` until it holds n training instances (the n nearest, ties "
        "included); 0: the paper's fixed radius, which on thousands of features is usually empty"))
    beam: int = Field(5, ge=1, le=100, title="Beam width")
    max_body: int = Field(6, ge=1, le=20, title="Most features per explanation",
                          description="most features in an explanation clause")
    explain_rows: int = Field(20, ge=1, le=100_000, title="Predictions explained up front")

    @field_validator("hidden")
    @classmethod
    def _sizes(cls, v: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
        if not v or any(not layer or any(h < 1 for h in layer) for layer in v):
            raise ValueError("hidden must list at least one architecture of positive layer sizes")
        return v

    @field_validator("learning_rates")
    @classmethod
    def _lrs(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not (0 < x < 10) for x in v):
            raise ValueError("learning rates must be in (0, 10)")
        return v

    @field_validator("weight_decays")
    @classmethod
    def _wds(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if not v or any(not (0 <= x < 10) for x in v):
            raise ValueError("weight decays must be in [0, 10)")
        return v

    @field_validator("relevance")
    @classmethod
    def _relevance(cls, v: str) -> str:
        parse_relevance(v)
        return v

    explainer_fields: ClassVar[frozenset[str]] = frozenset(
        {"hamming", "min_neighbours", "beam", "max_body", "explain_rows"})
