"""The settings of an m-NLIL run: the heads, Algorithm 1, link prediction, the GCN mode and the device."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xcore.methods.base import Settings
from xcore.nlil.mnlil import Config


class NLILSettings(Settings):
    """Everything that decides an m-NLIL run."""

    method_key: ClassVar[str] = "nlil"

    heads: tuple[str, ...] = Field((), title='Target labels (head predicates)')
    """Head predicates to learn (empty: every unary or binary predicate with targets, at most `max_heads`)."""
    max_heads: int = Field(4, ge=1, le=64, title='Most labels trained')
    path_length: int = Field(2, ge=1, le=4, title='Path length T')
    depth: int = Field(2, ge=1, le=4, title='Formula depth')
    statements: int = Field(6, ge=1, le=32, title='Primitive statements')
    width: int = Field(4, ge=1, le=16, title='Formulas per level')
    clusters: int = Field(3, ge=1, le=10, title='Clusters (rules per label)')
    init: Literal["kmeans", "frequency"] = Field("kmeans", title='Initialise by')
    """k-means on node embeddings, or by the most frequent neighbour class (the paper's GQA choice)."""
    lam: float = Field(0.1, ge=0.0, le=100.0, title='λ (distance to centre)')
    rounds: int = Field(4, ge=1, le=50, title='Rounds (Algorithm 1)')
    epochs: int = Field(100, ge=1, le=5000, title='Epochs per round')
    lr: float = Field(0.05, gt=0.0, le=1.0, title='Learning rate')
    holdout: float = Field(0.25, ge=0.0, lt=1.0, title='Held-out share')
    """Share of the labelled examples the run holds out (by example, seeded, stratified by label, through
    `xcore.methods.evaluate.held_out_parts`) for heads without a held-out set of their own; 0 trains and
    evaluates on all of them (in-sample)."""
    negatives: int = Field(2, ge=0, le=20, title='Negatives per positive')
    """Random negatives per positive (always for binary heads; for unary heads only without labelled negatives)."""
    eval: Literal["rules", "link-prediction"] = Field("rules", title='Evaluation')
    """rules: m-NLIL per head, rule precision/recall; link-prediction: path rules for every binary relation
    and its inverse (Neural LP style), filtered MRR and Hits@1/3/10 on the held-out triples, both directions."""
    rank: int = Field(3, ge=1, le=16, title='Rules per relation')
    """link-prediction: rules (soft chains of `path_length` steps) per query relation"""
    kg_epochs: int = Field(8, ge=1, le=500, title='Epochs')
    """link-prediction: epochs, each over at most `kg_queries` observed triples (both directions)"""
    kg_queries: int = Field(8000, ge=100, le=10_000_000, title='Triples per epoch')
    kg_lr: float = Field(0.1, gt=0.0, le=1.0, title='Learning rate (link prediction)')
    attention: Literal["table"] = Field("table", title='Attention generator')
    """Attention generator: learned attention tables (NLIL's Transformer generators are not built)."""
    mode: Literal["truth", "gcn"] = Field("truth", title='Rules for')
    """truth: learn rules for the labels; gcn: train a 2-layer GCN on the labels, learn rules for its predictions."""
    gcn_epochs: int = Field(200, ge=1, le=5000, title='GCN epochs')
    explainer_epochs: int = Field(100, ge=1, le=2000, title='GNNExplainer epochs')
    compare_nodes: int = Field(20, ge=1, le=500, title='Nodes compared with GNNExplainer')
    """GCN mode: how many test nodes the rules and GNNExplainer are compared on."""
    n_jobs: int = Field(1, ge=1, le=8, title='Parallel workers')
    device: Literal["cpu", "cuda", "auto"] = Field("auto", title="Device")
    """torch device of link-prediction training and ranking: cpu (the tested path), cuda (a ConfigError when
    torch finds no CUDA GPU) or auto (CUDA when available); rules mode always runs on the CPU."""
    explain_targets: int = Field(50, ge=1, le=10_000, title='Predictions explained up front')
    seed: int = Field(0, ge=0, title='Seed')

    def config(self) -> Config:
        return Config(statements=self.statements, path_length=self.path_length, depth=self.depth, width=self.width,
                      clusters=self.clusters, init=self.init, lam=self.lam, rounds=self.rounds, epochs=self.epochs,
                      lr=self.lr, n_jobs=self.n_jobs, seed=self.seed)

    explainer_fields: ClassVar[frozenset[str]] = frozenset({"explainer_epochs", "compare_nodes", "explain_targets"})
