"""`ground(..., only_targets=True)`: exactly the ground rules of the full grounding that contain a target."""

from __future__ import annotations

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.schema import Predicate
from xcore.logic.atoms import AtomStore
from xcore.logic.grounding import ground

RULES = [
    "1.0: likes(A, B) & sim(B, C) -> likes(A, C) ^2",            # target literal in body and head (left join)
    "1.0: ~likes(A, B) & sim(B, C) & seen(A, C) -> ~likes(A, C) ^2",
    "1.0: friend(A, B) & likes(B, C) & likes(A, C) -> sim(C, C) ^2",  # two target literals in the body
    "1.0: pop(B) & seen(A, B) -> likes(A, B) ^2",
    "1.0: likes(A, B) ^2",                                        # prior: target literal only
    "1.0: friend(A, B) -> friend(B, A) ^2",                       # no target predicate at all
    "1.0: likes('u1', B) & sim(B, C) -> likes('u2', C) ^2",       # constants
]


def dataset(seed: int = 0) -> RelationalDataset:
    """Random people/items with `likes` partly observed, partly targets (some with and some without truth)."""
    rng = np.random.default_rng(seed)
    people, items = [f"u{i}" for i in range(8)], [f"i{i}" for i in range(9)]
    pairs = pd.DataFrame([(p, i) for p in people for i in items], columns=["a0", "a1"])
    split = rng.random(len(pairs))

    def t2(xs, ys, p):
        rows = [(a, b) for a in xs for b in ys if a != b and rng.random() < p]
        return pd.DataFrame({"a0": [a for a, _ in rows], "a1": [b for _, b in rows],
                             "value": rng.uniform(0, 1, len(rows))})

    schema = [Predicate("likes", 2, ("user", "item"), closed=False), Predicate("sim", 2, ("item", "item")),
              Predicate("friend", 2, ("user", "user")), Predicate("seen", 2, ("user", "item")),
              Predicate("pop", 1, ("item",))]
    obs = pairs[split < 0.4].assign(value=rng.uniform(0, 1, int((split < 0.4).sum())))
    targets = pairs[split >= 0.4].reset_index(drop=True)
    tables = {"likes": {"obs": obs, "targets": targets, "truth": targets.iloc[::2].assign(value=0.5)},
              "sim": {"obs": t2(items, items, 0.3)}, "friend": {"obs": t2(people, people, 0.3)},
              "seen": {"obs": pairs.sample(frac=0.6, random_state=seed).assign(value=1.0)},
              "pop": {"obs": pd.DataFrame({"a0": items, "value": rng.uniform(0, 1, len(items))})}}
    return RelationalDataset(schema, tables)


def test_only_targets_keeps_exactly_the_rows_with_a_target_in_the_same_order():
    for seed in range(3):
        store = AtomStore.from_dataset(dataset(seed))
        full = ground(RULES, store, limit=None)
        focused = ground(RULES, store, limit=None, only_targets=True)
        for g, h in zip(full, focused):
            has = (store.target_index_ext[g.atom_ids] >= 0).any(axis=1) if g.n else np.zeros(0, bool)
            assert has.any() or "friend(B, A)" in g.rule.text()
            np.testing.assert_array_equal(g.atom_ids[has], h.atom_ids, err_msg=g.rule.text())
            np.testing.assert_array_equal(g.bindings[has], h.bindings, err_msg=g.rule.text())
            A, b = g.linear_form(store)
            A2, b2 = h.linear_form(store)
            assert (A[has] != A2).nnz == 0 and np.array_equal(b[has], b2)
        assert focused.n_ground_rules < full.n_ground_rules
