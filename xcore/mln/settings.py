"""`MLNSettings`: everything that decides a Markov-logic run (rules, weight learning, inference, the
held-out share, explainers)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from xcore.errors import ConfigError
from xcore.methods.base import Settings
from xcore.mln.explainer_names import LEGACY, canonical_explainer
from xcore.mln.queries import parse_query
from xcore.mln.workflow import ExplainSettings

EXACT_LIMIT = 20
"""Exact enumeration handles up to this many query atoms; `inference="auto"` samples above it."""


class MLNSettings(Settings):
    """Everything that decides a Markov-logic run: rules, weight learning, inference, explainers."""

    method_key: ClassVar[str] = "mln"
    explainer_fields: ClassVar[frozenset[str]] = frozenset(
        {"explainers", "C", "S", "T", "top_k", "lime_samples", "aggregation", "work"})

    target: str | None = Field(None, title='Query predicate to explain')
    """The query predicate to explain (any arity, e.g. advisedBy(x, y)); None picks the program's
    declared query predicate, else an open one with query atoms."""
    query: str | None = Field(None, title='Query atoms')
    """Tuffy-style query: which atoms to explain, a predicate (``advisedBy``) or atom patterns of one
    predicate (``advisedBy(Person380, y)``); its predicate overrides `target`. None: every atom."""
    rules: str = Field("", title='Weighted first-order clauses')
    """Weighted clauses (Alchemy syntax); empty uses the sample's model or rules built from the data."""
    learn: Literal["none", "pll", "linear+pll"] = Field("none", title='Weight learning')
    """none: weights as written. linear+pll: word formulas from a logistic regression on the words (the
    paper uses an SVM), relational formulas by pseudo-likelihood. pll: every weight by pseudo-likelihood."""
    inference: Literal["auto", "exact", "gibbs"] = Field("auto", title='Inference')
    """exact enumeration (up to 20 query atoms), sampling ("gibbs": by the Sampler setting), or auto: exact
    when it fits, else sampling."""
    sampler: Literal["auto", "gibbs", "mcsat"] = Field("auto", title='Sampler')
    """gibbs: single-site Gibbs (fast, but frozen by hard or heavy formulas); mcsat: MC-SAT, which moves
    inside hard formulas (slower per sample); auto: MC-SAT when a hard formula or one of weight >= 5 ties
    two query atoms, else Gibbs. Also used by I-/R-/M-Explain's coalitions."""
    n_samples: int = Field(1000, ge=10, le=1_000_000, title='Samples per chain')
    burn_in: int = Field(200, ge=0, le=1_000_000, title='Burn-in sweeps')
    n_chains: int = Field(4, ge=2, le=256, title='Chains')
    test_size: float = Field(0.25, ge=0.0, lt=1.0, title='Held-out share of labelled query atoms')
    """The run learns from the other labelled query atoms and infers these with the rest as evidence
    (split seeded by `seed`); 0, or fewer than two labelled atoms: no held-out part."""
    explainers: tuple[str, ...] = Field(tuple(LEGACY), title='Explainers')
    """LIME and SHAP explain a bag-of-words classifier and need word evidence."""
    C: float = Field(0.2, gt=0.0, le=1.0, title='C (clusters per object)')
    S: float = Field(0.5, gt=0.0, le=1.0, title='S (share sampled per cluster)')
    T: int = Field(10, ge=1, le=1000, title='T (coalitions)')
    top_k: int = Field(10, ge=1, le=1000, title='Top-k per query')
    lime_samples: int = Field(1000, ge=10, le=1_000_000, title='LIME samples')
    aggregation: Literal["cemc", "exact_footrule"] = Field("exact_footrule", title='Rank aggregation')
    """How I-/R-Explain merge coalition lists: the exact weighted-footrule optimum, or CEMC (the paper)."""
    work: Literal["equal", "per_coalition"] = Field("equal", title='Sampling work')
    """Sampling work: "equal" gives M-Explain and all coalitions together the same atom updates;
    "per_coalition" runs the Gibbs options in every coalition (the paper; several times M-Explain's)."""
    seed: int = Field(0, ge=0, title='Seed')

    @field_validator("explainers", mode="before")
    @classmethod
    def _renamed(cls, value: Any) -> Any:
        """Old explainer names (``lime``, ``shap``) as today's, so old bundles and studies still read."""
        if isinstance(value, (list, tuple)):
            return tuple(canonical_explainer(v) if isinstance(v, str) else v for v in value)
        return value

    def model_post_init(self, context: object) -> None:
        if self.query is not None:
            parse_query(self.query)  # a ConfigError names the field and column
        unknown = [e for e in self.explainers if e not in LEGACY]
        if unknown:
            raise ConfigError(f"unknown explainer {unknown[0]!r}; use any of {', '.join(LEGACY)}", field="explainers")

    def query_target(self) -> str | None:
        """The query predicate to run: the query's predicate when there is a query, else `target`."""
        return parse_query(self.query)[0].predicate if self.query is not None else self.target

    def explain_settings(self, explainers: tuple[str, ...] | None = None) -> ExplainSettings:
        """The workflow's explainer parameters for these settings (`explainers`: only those)."""
        names = self.explainers if explainers is None else explainers
        return ExplainSettings(methods=tuple(LEGACY[e] for e in names), C=self.C, S=self.S, T=self.T,
                               top_k=self.top_k, n_samples=self.n_samples, burn_in=self.burn_in,
                               n_chains=self.n_chains, sampler=self.sampler, lime_samples=self.lime_samples,
                               aggregation=self.aggregation, work=self.work, seed=self.seed)


