"""What identifies the data PPLL weights are learned on and whose labels: the fingerprint, the scored
target's labels and the thread-safe PPLL weight cache keyed by both."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import PARTITIONS
from xcore.errors import XcoreError
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.rule_identity import rule_key


# ---------------------------------------------------------------------- data identity
def dataset_fingerprint(dataset: RelationalDataset) -> str:
    """A hash of a dataset's schema and every table (values included): the PPLL cache's data key."""
    h = hashlib.sha256()
    for p in dataset.schema:
        h.update(f"{p.name}/{p.arity}/{','.join(p.types)}/{p.closed}|".encode())
        for part in PARTITIONS:
            t = dataset.tables[p.name][part]
            h.update(f"{part}:{len(t)}|".encode())
            if len(t):
                h.update(pd.util.hash_pandas_object(t, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


# ---------------------------------------------------------------------- whose labels are learned
def target_labels(store: AtomStore, target: str | None) -> np.ndarray:
    """Truth labels of `target`'s atoms only (NaN at other targets); every label when `target` is None.

    A model *of* one predicate learns from and is scored on that predicate's labels. The labels of
    other open predicates (e.g. `smokes` beside the target `cancer`) stay context for the ground
    rules, but scoring them would learn how the rule predicts *them* (the reverse direction).
    """
    if target is None:
        return store.truth
    if target not in store.predicates:
        raise XcoreError(f"{target!r} is not a predicate of the dataset")
    p = store.predicates[target]
    cols = store.target_index[p.offset + p.n_obs:p.offset + p.n]
    out = np.full(store.n_targets, np.nan)
    out[cols] = store.truth[cols]
    return out


def ppll_data_key(fingerprint: str, target: str | None) -> str:
    """The PPLL cache's data key: the training data and whose labels are scored."""
    return fingerprint if target is None else f"{fingerprint}:{target}"


# ---------------------------------------------------------------------- PPLL cache
@dataclass
class PPLLCache:
    """Learned PPLL weights keyed by (training-data fingerprint, canonical rule, w_max).

    Thread-safe; `hits`/`misses` count look-ups so callers can show how much learning was saved.
    """

    weights: dict[tuple[str, str, float], float] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    @staticmethod
    def key(rule: Rule, data_key: str, w_max: float) -> tuple[str, str, float]:
        return (data_key, rule_key(rule), float(w_max))

    def get(self, rule: Rule, data_key: str, w_max: float) -> float | None:
        with self._lock:
            w = self.weights.get(self.key(rule, data_key, w_max))
            if w is None:
                self.misses += 1
            else:
                self.hits += 1
            return w

    def put(self, rule: Rule, data_key: str, w_max: float, weight: float) -> None:
        with self._lock:
            self.weights[self.key(rule, data_key, w_max)] = float(weight)

    def __len__(self) -> int:
        return len(self.weights)

    def __getstate__(self) -> dict:
        return {"weights": dict(self.weights), "hits": self.hits, "misses": self.misses}

    def __setstate__(self, state: dict) -> None:
        self.weights, self.hits, self.misses = state["weights"], state["hits"], state["misses"]
        self._lock = threading.Lock()
