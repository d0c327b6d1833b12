"""The fast ESMS path (focused grounding, batched PPLL, shared blocks) chooses what the reference path chooses."""

from __future__ import annotations

import numpy as np
import pytest

from xcore.esms.search import ESMSSearch
from xcore.esms.validation_split import split_targets


@pytest.fixture(scope="module")
def data():
    from xcore.data.generators import lastfm_preset

    return split_targets(lastfm_preset("small", seed=0), "rating", 0.3, seed=0)


def search(**kw) -> ESMSSearch:
    # a ground limit that some path-of-3 rules exceed: both paths must skip the same rules
    return ESMSSearch("rating", rules_per_model=8, iterations=25, block="rated", seed=1, n_jobs=2,
                      ground_limit=60_000, **kw)


@pytest.mark.slow
def test_fast_path_picks_the_reference_model_and_score(data):
    ref = search(reference=True).fit(*data)
    fast = search().fit(*data)
    skipped = lambda s: [m.split("`")[1] for m in s.skipped_rules_]  # noqa: E731 (messages differ: counted vs exact)
    assert ref.skipped_rules_ and skipped(fast) == skipped(ref)
    assert [r.text("psl") for r in fast.best_rules_] == [r.text("psl") for r in ref.best_rules_]
    assert fast.best_iteration_ == ref.best_iteration_
    assert fast.best_score_ == ref.best_score_
    assert list(fast.history_["rules"]) == list(ref.history_["rules"])
    np.testing.assert_allclose(fast.history_["score"], ref.history_["score"], rtol=1e-6, atol=1e-9)
    # the fast path grounds far fewer rows: only ground rules with a target atom
    assert (fast.rule_stats_["valid_ground_rules"].sum() * 3 < ref.rule_stats_["valid_ground_rules"].sum())
