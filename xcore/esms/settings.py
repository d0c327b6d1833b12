"""ESMS's settings: everything that decides a run (frozen and validated; runs are cached by its key)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from xcore.methods.base import Settings


class ESMSSettings(Settings):
    """Everything that decides an ESMS run (frozen and validated; runs are cached by its key)."""

    method_key: ClassVar[str] = "esms"

    target: str = Field(min_length=1, title="Target predicate")
    """The predicate whose labelled atoms the rules learn to predict (T(A) or T(A, B))."""
    block: str | None = Field(None, title="Block predicate (optional)")
    """Conjoined to every rule so only relevant pairs ground."""
    explainable: tuple[str, ...] | None = Field(None, title="Explainable predicates")
    """Predicates to mark explainable (None keeps the dataset's flags)."""
    gamma: float = Field(0.0, ge=0.0, le=1.0, title="Explainability bias γ")
    """How much the search prefers models with explainable rules (0: accuracy only)."""
    alpha: float = Field(0.25, ge=0.0, le=1.0, title="α (explainable share)")
    """Share of each drawn model's rules taken from explainable templates."""
    rules_per_model: int = Field(15, ge=1, le=200, title="Rules per model L_M")
    iterations: int = Field(100, ge=1, le=100_000, title="Iterations N")
    """Candidate models drawn and scored on the validation split."""
    metric: Literal["mse", "mae", "rmse", "aupr", "auroc"] = Field("mse", title="Validation metric")
    seed: int = Field(0, ge=0, title="Seed")
    n_jobs: int = Field(2, ge=1, le=256, title="Parallel workers")
    """Candidate models scored at once on this machine."""
    valid_fraction: float = Field(0.2, gt=0.0, lt=0.5, title="Validation share")
    test_fraction: float = Field(0.2, gt=0.0, lt=0.5, title="Test share")
    counterparts: bool = Field(False, title="Add counterpart templates (¬evidence → ¬target, as HyPER does)")
    """The paper's templates only push the target up; counterparts also pull it down when the evidence is
    low (HyPER-style)."""
    weight_learning: Literal["per_rule", "joint", "calibrated"] = Field("per_rule", title="Rule weights")
    """"per_rule": the paper's PPLL of each rule on its own (what the LastFM benchmark uses); "joint":
    each candidate model's weights learned together with the priors by joint PPLL; "calibrated": each
    candidate's weights (with the priors) chosen so that every training atom's MAP value, the others at
    their truth, fits its label in squared error, so a rule's weight is what it adds to the base rate
    (0/1 targets T(A) need one of the joint ways; `xcore.psl.joint_ppll`)."""
    closed_world: bool = Field(False, title="Closed world: absent atoms of the target's domain are 0")
    """Read absent atoms of the target's domain as 0 (needed when every truth value is 1)."""
    closed_world_limit: int = Field(200_000, ge=1, title="Closed world: most atoms added")
    """Most negative atoms the closed-world reading may add (else a block predicate is needed)."""
    project_rules: bool = Field(False, title="Use the project's rules as a starting model")
    """Also score the rules that came with the data (a PSL project's model) as a starting model:
    one more candidate with its own weights and hard rules, kept when it scores best."""
    scheduler: str = Field("", max_length=500, title="Dask scheduler address")
    """Dask scheduler address (``tcp://host:8786``) to evaluate candidates on; empty: this machine."""

    def search_kwargs(self) -> dict:
        return dict(gamma=self.gamma, alpha=self.alpha, rules_per_model=self.rules_per_model,
                    iterations=self.iterations, metric=self.metric, block=self.block,
                    n_jobs=self.n_jobs, seed=self.seed, counterparts=self.counterparts,
                    weight_learning=self.weight_learning)



DEMO_SETTINGS = ESMSSettings(target="rating", block="rated", gamma=0.5, rules_per_model=10,
                             iterations=20)
"""The page's demo button: the bundled LastFM-shaped sample, runs end to end in seconds."""
