"""What ESMS computes once per rule: its PPLL weight on the training data and its hinge block on the
validation data, both cached (`SearchCache`) across iterations and across a gamma sweep.

The fast path (default; issue 13) grounds each rule on its own with ``ground(..., only_targets=True)``:
a count capped at the ground limit decides, exactly as the reference path does, whether the rule is
too large, and only the ground rules with a target atom (the only ones PPLL and MAP use) are
materialised; training ground rules are learned and dropped a batch at a time. The reference path
grounds all rules of a dataset at once. Rules too large to ground (`GroundingTooLarge`) are skipped
and recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import numpy as np

from xcore.data.dataset import RelationalDataset
from xcore.errors import GroundingTooLarge
from xcore.logic.ast import Rule
from xcore.logic.atoms import AtomStore
from xcore.logic.estimate import estimate_groundings
from xcore.logic.grounding import GroundRules, ground
from xcore.logic.rule_identity import rule_key
from xcore.psl.data_keys import PPLLCache, ppll_data_key, target_labels
from xcore.psl.joint_ppll import GridPotential, grid_potential, learn_calibrated_weights, learn_joint_weights
from xcore.psl.ppll import learn_weight
from xcore.psl.rule_forms import RuleForm, rule_form
from xcore.runtime import Progress

BATCH = 16
"""Rules whose training ground rules are held at once in the fast path (then learned and dropped)."""


@dataclass
class SearchCache:
    """What ESMS reuses across iterations and across a gamma sweep: PPLL weights and rule blocks."""

    ppll: PPLLCache = field(default_factory=PPLLCache)
    forms: dict[tuple[str, str], RuleForm] = field(default_factory=dict)
    """(validation fingerprint, rule_key) -> the rule's hinge block on the validation data."""
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    """(fingerprint, rule_key) -> why the rule could not be grounded."""
    stores: dict[str, AtomStore] = field(default_factory=dict)
    grids: dict[tuple[str, str], GridPotential] = field(default_factory=dict)
    """(PPLL data key, rule_key) -> the rule's potentials on the grid (joint weight learning)."""

    def store(self, dataset: RelationalDataset, fp: str) -> AtomStore:
        """The atom store of `dataset` (fingerprint `fp`), built once."""
        if fp not in self.stores:
            self.stores[fp] = AtomStore.from_dataset(dataset)
        return self.stores[fp]


Charges = dict[int, dict[str, float]]
"""Iteration -> stage -> seconds: a rule's grounding and PPLL time, charged to the first candidate using it."""


@dataclass
class RulePreparation:
    """Grounds and weighs the rules of one search into its `SearchCache`.

    After `prepare`: `stats` (ground rules and seconds of each rule grounded here, on training and
    validation data) and `skip_seconds` (fast path: seconds spent finding rules over the ground limit).
    """

    cache: SearchCache
    target: str
    w_max: float
    ground_limit: int | None
    reference: bool
    weight_learning: str
    stats: dict[str, dict] = field(default_factory=dict)
    skip_seconds: float = 0.0

    def prepare(self, rule_of: dict[str, Rule], first_user: dict[str, int], train_store: AtomStore,
                train_fp: str, valid_store: AtomStore, valid_fp: str,
                report: Progress) -> tuple[dict[str, float], Charges]:
        """PPLL weights (cached per training data) and validation hinge blocks (cached) of every rule.

        Returns the weights by `rule_key` and the grounding / PPLL seconds charged to the first
        iteration using each rule.
        """
        charges: Charges = {}

        def charge(k: str, what: str, seconds: float) -> None:
            d = charges.setdefault(first_user[k], {})
            d[what] = d.get(what, 0.0) + seconds

        weights = self._learn_weights(rule_of, train_store, train_fp, report, charge)
        need = [k for k in rule_of if k in weights and (valid_fp, k) not in self.cache.forms
                and (valid_fp, k) not in self.cache.failed]
        for k, g, secs in self._batches(need, rule_of, valid_store, valid_fp, report, 0.4, 0.6, "validation"):
            t1 = time.perf_counter()
            self.cache.forms[(valid_fp, k)] = rule_form(g, valid_store)
            charge(k, "ground", secs + time.perf_counter() - t1)
            self.stats.setdefault(k, {"rule": k}).update(valid_ground_rules=g.n, valid_seconds=secs)
        return weights, charges

    def _learn_weights(self, rule_of: dict[str, Rule], train_store: AtomStore, train_fp: str, report: Progress,
                       charge: Callable[[str, str, float], None]) -> dict[str, float]:
        """Every rule's PPLL weight, from the cache or learned a batch of groundings at a time (only one
        batch of ground rules is in memory; the reference path grounds all rules first)."""
        cache = self.cache
        weights: dict[str, float] = {}
        ppll_key = ppll_data_key(train_fp, self.target)
        scored = np.isfinite(target_labels(train_store, self.target))
        need = []
        for k, r in rule_of.items():
            if (train_fp, k) in cache.failed:
                continue
            w = cache.ppll.get(r, ppll_key, self.w_max)
            if w is None or (self.weight_learning != "per_rule" and (ppll_key, k) not in cache.grids):
                need.append(k)
            else:
                weights[k] = w
        report(0.02, f"grounding {len(need)} new rules on the training data")
        for k, g, secs in self._batches(need, rule_of, train_store, train_fp, report, 0.02, 0.4, "training"):
            charge(k, "ground", secs)
            self.stats[k] = {"rule": k, "train_ground_rules": g.n, "train_seconds": secs}
            t1 = time.perf_counter()
            A, b = g.linear_form(train_store)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # log(0) in far tails
                w = learn_weight(A, b, g.rule.squared, train_store.truth, scored=scored, w_max=self.w_max).weight
            if self.weight_learning != "per_rule":
                cache.grids[(ppll_key, k)] = grid_potential(A, b, g.rule.squared, train_store.truth, scored)
            cache.ppll.put(g.rule, ppll_key, self.w_max, w)
            weights[k] = w
            charge(k, "ppll", time.perf_counter() - t1)
        return weights

    def joint(self, rules: list[Rule], train_fp: str) -> list[Rule]:
        """The rules of one candidate with weights learned together (`xcore.psl.joint_ppll`)."""
        key = ppll_data_key(train_fp, self.target)
        grids = [self.cache.grids.get((key, rule_key(r))) for r in rules]
        learnable = [i for i, g in enumerate(grids) if g is not None and not rules[i].is_hard]
        if self.weight_learning == "calibrated" and learnable:
            w = learn_calibrated_weights([grids[i] for i in learnable], grids[learnable[0]].truth,
                                         [not rules[i].body for i in learnable], self.w_max)
        else:
            w = learn_joint_weights([grids[i] for i in learnable], self.w_max)
        out = list(rules)
        for i, wi in zip(learnable, w):
            out[i] = rules[i].with_weight(float(wi))
        return out

    def ground_start(self, rules: Sequence[Rule], valid_store: AtomStore, valid_fp: str) -> list[str]:
        """Ground the starting model's rules on the validation data into the block cache; their keys."""
        keys = [f"start:{rule_key(r)}" for r in rules]
        todo = [i for i, k in enumerate(keys) if (valid_fp, k) not in self.cache.forms]
        if todo:
            gp = ground([rules[i] for i in todo], valid_store, limit=self.ground_limit)
            for i, g in zip(todo, gp):
                self.cache.forms[(valid_fp, keys[i])] = rule_form(g, valid_store)
        return keys

    def _batches(self, keys: list[str], rule_of: dict[str, Rule], store: AtomStore, fp: str, report: Progress,
                 lo: float, hi: float, what: str) -> Iterator[tuple[str, GroundRules, float]]:
        """(key, ground rules, seconds) of each rule that fits the limit, grounded a batch at a time
        (all at once in the reference path); progress from `lo` to `hi`."""
        step = max(len(keys) if self.reference else BATCH, 1)
        for start in range(0, len(keys), step):
            batch = keys[start:start + step]
            yield from self._ground_many(
                [rule_of[k] for k in batch], batch, store, fp,
                lambda f, start=start, n=len(batch): report(lo + (hi - lo) * (start + f * n) / len(keys),
                                                            f"grounding rules on the {what} data"))
            report(lo + (hi - lo) * min(start + step, len(keys)) / len(keys),
                   f"{what} data: {min(start + step, len(keys))}/{len(keys)} rules grounded")

    def _ground_many(self, rules: list[Rule], keys: list[str], store: AtomStore, fp: str,
                     progress: Callable[[float], None]) -> list[tuple[str, GroundRules, float]]:
        """Ground rules (one DuckDB session in the reference path); rules above the size limit are
        recorded and skipped."""
        if not rules:
            return []
        if not self.reference:  # one rule per call: a rule over the limit costs only its own capped count
            return self._ground_each(rules, keys, store, fp, progress)
        keep = list(range(len(rules)))
        for _attempt in range(2):
            try:
                gp = ground([rules[i] for i in keep], store, limit=self.ground_limit,
                            progress=lambda f, msg: progress(f))
                return [(keys[i], g, g.seconds) for i, g in zip(keep, gp)]
            except GroundingTooLarge:
                keep = self._within_limit(rules, keys, keep, store, fp)
        out = []
        for i in keep:  # the estimate was too low for some rule: ground one by one
            try:
                g = ground([rules[i]], store, limit=self.ground_limit)[0]
            except GroundingTooLarge as e:
                self.cache.failed[(fp, keys[i])] = str(e)
                continue
            out.append((keys[i], g, g.seconds))
        return out

    def _ground_each(self, rules: list[Rule], keys: list[str], store: AtomStore, fp: str,
                     progress: Callable[[float], None]) -> list[tuple[str, GroundRules, float]]:
        """The fast path: each rule grounded on its own, only its ground rules with a target atom."""
        out = []
        for i, rule in enumerate(rules):
            t0 = time.perf_counter()
            try:
                g = ground([rule], store, limit=self.ground_limit, only_targets=True)[0]
            except GroundingTooLarge as e:
                self.cache.failed[(fp, keys[i])] = str(e)
                self.skip_seconds += time.perf_counter() - t0
            else:
                out.append((keys[i], g, g.seconds))
            progress((i + 1) / len(rules))
        return out

    def _within_limit(self, rules: list[Rule], keys: list[str], keep: list[int], store: AtomStore,
                      fp: str) -> list[int]:
        """The rules whose estimated groundings fit the limit (only when some rule is too large: estimate
        all once, record the big ones as failed)."""
        ok = []
        for i in keep:
            est = estimate_groundings(rules[i], store)
            if self.ground_limit is not None and est > self.ground_limit:
                self.cache.failed[(fp, keys[i])] = str(GroundingTooLarge(rules[i].text(), est, self.ground_limit))
            else:
                ok.append(i)
        return ok
