"""The classifier's settings: everything that decides a training run (frozen, validated, cached by key)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xcore.methods.base import Settings
from xcore.plkb.classifier import PLKBClassifier


class PLKBSettings(Settings):
    """Everything that decides a training run (frozen and validated; runs are cached by its key)."""

    method_key: ClassVar[str] = "plkb"
    explainer_fields: ClassVar[frozenset[str]] = frozenset({"k", "k_auto", "k_max", "explain_rows"})

    label: str = Field(min_length=1, title='Label column')
    positive_class: str | None = Field(None, title='Positive class (one-vs-rest)')
    kb: Literal["tree", "direct"] = Field("tree", title='Knowledge base')
    max_k: int = Field(2, ge=1, le=6, title='Direct: max k')
    min_support: int = Field(1, ge=1, title='Direct: min support')
    all_nodes: bool = Field(False, title='Tree: clause per node')
    n_trees: int = Field(1, ge=1, le=200, title='Tree: trees (forest)')
    n_bins: int = Field(4, ge=2, le=50, title='Bins for numeric columns')
    knowledge: str = Field("", title='Domain knowledge (one clause per line, e.g. `0.9: POS | ~sex_female`)')
    drop: tuple[str, ...] = Field((), title='Leave out these columns')
    """Columns left out of the features (e.g. identifiers, see `identifier_columns`)."""
    test_fraction: float = Field(0.3, gt=0.0, lt=1.0, title='Test share')
    seed: int = Field(0, ge=0, title='Seed')
    max_rows: int = Field(3000, ge=10, title='Largest table trained on (rows)')
    """Larger tables are subsampled (seeded) so training stays interactive."""
    k: int = Field(2, ge=1, le=12, title='k (features per explanation)')
    """Features in each decisive-feature explanation (the smallest, with `k_auto`)."""
    k_auto: bool = Field(True, title='Grow k per row until a set decides')
    """Grow k per row, up to `k_max`, until a set of k features decides the row's prediction."""
    k_max: int = Field(8, ge=1, le=12, title='Largest k tried')
    """The largest k `k_auto` tries."""
    explain_rows: int = Field(100, ge=0, le=100_000, title='Rows explained up front')
    """How many test rows the run explains up front (any other row is explained on demand)."""

    def classifier(self) -> PLKBClassifier:
        return PLKBClassifier(kb=self.kb, max_k=self.max_k, min_support=self.min_support,
                              all_nodes=self.all_nodes, n_trees=self.n_trees, n_bins=self.n_bins,
                              positive_class=self.positive_class, knowledge=self.knowledge,
                              random_state=self.seed)
