"""Ties in `decisive_features` are decided with a tolerance, then by evaluation order (issue 11)."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from xcore.data.generators.strings import make_strings
from xcore.plkb import PLKBClassifier
from xcore.plkb.explain import SCORE_TOL, decisive_features, tie_order
from xcore.plkb.lp import DEFAULT_FACE_TOL, Interval


def _exact_mid(probs: list[Fraction], feat_sets: list[frozenset], sub_atoms: frozenset) -> Fraction:
    """Midpoint of the relevant-KB answer by hand: the median interval of the matching clauses' p."""
    qs = sorted(p for p, fs in zip(probs, feat_sets) if fs <= sub_atoms)
    m = len(qs)
    if m == 0:
        return Fraction(1, 2)
    return qs[m // 2] if m % 2 else (qs[m // 2 - 1] + qs[m // 2]) / 2


def test_tolerance_not_below_face_tolerance():
    assert SCORE_TOL >= DEFAULT_FACE_TOL


def test_exact_ties_keep_lexicographic_order_on_synthetic_strings():
    """Syn L=8/A=3 (seed 1, n=200), Direct KB max_k=3, k=5: brute force with exact fractions."""
    s = make_strings(8, 3, n=200, seed=1)
    clf = PLKBClassifier(kb="direct", max_k=3, positive_class=True).fit(s.X, s.y)
    kb, dom = clf.kb_, clf.domain_
    probs = [Fraction(int(round(p * n)), int(n)) for p, n in zip(kb.prob, kb.support)]
    feat_sets = [frozenset(kb.atoms[kb.indptr[i] + 1:kb.indptr[i + 1]].tolist()) for i in range(len(kb))]
    codes = clf.encode(s.X)
    n_tied_rows = 0
    for r in range(40):
        c = codes[r]
        atoms = dom.offsets + c
        mids = {S: _exact_mid(probs, feat_sets, frozenset(atoms[list(S)].tolist()))
                for S in combinations(range(8), 5)}
        sign = 1 if clf.reasoner_.interval(c).positive else -1
        best = max(sign * v for v in mids.values())
        optimal = [S for S in combinations(range(8), 5) if sign * mids[S] == best]
        n_tied_rows += len(optimal) > 1
        res = decisive_features(clf.reasoner_, c, 5)
        assert res.features == optimal[0], (r, res.features, optimal)
        assert sign * mids[res.features] == best
    assert n_tied_rows > 0  # the case the rule is about does occur


class _NoisyReasoner:
    """A stand-in reasoner: mid = value of the subset plus per-subset noise of ~1e-9."""

    def __init__(self, values: dict, noise: dict) -> None:
        self.values, self.noise = values, noise
        self.kb = type("K", (), {"domain": type("D", (), {"features": [f"f{i}" for i in range(4)],
                                                           "query_text": staticmethod(lambda c: str(c))})()})()

    def interval(self, codes):
        key = tuple(int(i) for i in np.flatnonzero(np.asarray(codes) >= 0))
        v = self.values.get(len(key), {}).get(key, 0.6) + self.noise.get(key, 0.0)
        return Interval(v, v)


@pytest.mark.parametrize("max_exhaustive", [3000, 1])  # exhaustive and hill-climb
def test_noise_below_tolerance_does_not_reorder(max_exhaustive):
    values = {2: {(0, 1): 0.8, (0, 2): 0.8, (2, 3): 0.8}}
    noise = {(0, 2): 3e-9, (2, 3): 5e-9}  # later candidates look better by solver noise only
    r = _NoisyReasoner(values, noise)
    res = decisive_features(r, np.array([0, 0, 0, 0]), 2, positive=True, max_exhaustive=max_exhaustive)
    if max_exhaustive > 1:
        assert res.features == (0, 1)
    assert abs(res.interval.mid - 0.8) < 1e-8
    assert list(res.candidates["features"].iloc[:1]) in ([("f0", "f1")], [("f0", "f2")], [("f2", "f3")])


def test_tie_order_groups_within_tolerance():
    scores = [0.5, 0.8 + 4e-9, 0.8, 0.3, 0.8 + 2e-9]
    assert tie_order(scores, tol=1e-7) == [1, 2, 4, 0, 3]
    assert tie_order(scores, tol=0.0) == [1, 4, 2, 0, 3]
