"""DRM explanations against references: fidelity by its set definition, beam search against exhaustive
enumeration of the subset lattice, the paper's relevance example (Example 35), and Remark 27
(structuring never changes fidelity)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from xcore.drm.explain import (
    Unstructured,
    beam_search,
    clause_relevance,
    fidelity,
    neighbourhood,
    select,
    structure,
    structured_fidelity,
)
from xcore.drm.relevance import better, leq, parse_relevance
from xcore.errors import ConfigError


def fidelity_by_sets(X: np.ndarray, pos: np.ndarray, feats: tuple[int, ...]) -> float:
    """(|AgreePos| + |AgreeNeg|) / |E+ u E-| with the instance itself in E+ (always covered)."""
    covered = {b for b in range(len(X)) if all(X[b, f] for f in feats)}
    e_plus = {b for b in range(len(X)) if pos[b]}
    e_minus = set(range(len(X))) - e_plus
    return (len(covered & e_plus) + len(e_minus - covered) + 1) / (len(X) + 1)


@pytest.mark.parametrize("seed", range(12))
def test_beam_search_with_a_wide_beam_is_exhaustive(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 12)), int(rng.integers(1, 7))
    A = rng.random((n, m)) < 0.6
    pos = rng.random(n) < 0.5
    active = np.arange(m)
    subsets = [s for k in range(1, m + 1) for s in combinations(range(m), k)]
    fids = {s: fidelity_by_sets(A, pos, s) for s in subsets}
    best = max(fids.values())
    found = beam_search(A, pos, active, [None] * m, beam=10_000, max_len=m, max_clauses=10_000)
    assert found and all(u.fidelity == pytest.approx(best) for u in found)
    assert {u.features for u in found} == {s for s, f in fids.items() if f == pytest.approx(best)}
    narrow = beam_search(A, pos, active, [None] * m, beam=1, max_len=m)
    assert narrow and narrow[0].fidelity <= best + 1e-12
    for u in narrow:
        assert u.fidelity == pytest.approx(fidelity_by_sets(A, pos, u.features))


def test_fidelity_vectorised_equals_set_definition():
    rng = np.random.default_rng(1)
    A = rng.random((15, 6)) < 0.5
    pos = rng.random(15) < 0.4
    for s in [(0,), (1, 2), (0, 3, 5)]:
        cov = np.all(A[:, list(s)], axis=1)
        assert fidelity(cov[:, None], pos)[0] == pytest.approx(fidelity_by_sets(A, pos, s))


def test_neighbourhood_is_hamming_ball_split_by_prediction():
    X = np.array([[1, 1, 0, 0], [1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 0]], dtype=np.int8)
    pred = np.array([1, 1, 0, 0])
    nb = neighbourhood(X, X[0], np.array([1, 2, 3]), pred, 1, k=1)
    assert list(nb.members) == [1, 3] and list(nb.positive) == [True, False]


def paper_example_35():
    """F2 = short, F3 = closed (r2); F4 = wheels, F9 = load (r1); r1 < r2."""
    rel = parse_relevance("r1: wheels, load\nr2: short, closed\n")
    preds = {2: ["has_car", "short"], 3: ["has_car", "closed"], 4: ["has_car", "wheels"], 9: ["has_car", "load"]}
    intervals = [rel.interval(preds[i]) if i in preds else None for i in range(10)]
    return rel, intervals


def test_relevance_ordering_reproduces_example_35():
    rel, intervals = paper_example_35()
    assert intervals[2] == (1, 1) and intervals[4] == (0, 0)
    h = clause_relevance((2, 3, 4, 9), intervals)
    assert h == [(0, 1)]  # {[r1, r2]}
    h1 = sorted(set(clause_relevance((2, 3), intervals)) | set(clause_relevance((4, 9), intervals)))
    h2 = sorted(set(clause_relevance((3, 4), intervals)) | set(clause_relevance((2, 9), intervals)))
    assert h1 == [(0, 0), (1, 1)] and h2 == [(0, 1)]
    assert leq(h2, h1) and better(h1, h2) and not better(h2, h1)
    u = Unstructured((2, 3, 4, 9), 1.0, h)
    best = structure(u, intervals)
    assert best and best[0].blocks == ((2, 3), (4, 9))  # the paper's H1
    assert rel.show(best[0].relevance) == "{[r1,r1], [r2,r2]}"


def test_dictionary_ordering_prefers_relevance_among_equal_fidelity():
    rel, intervals = paper_example_35()
    clauses = [Unstructured((4,), 1.0, clause_relevance((4,), intervals)),
               Unstructured((2,), 1.0, clause_relevance((2,), intervals)),
               Unstructured((2, 4), 0.9, clause_relevance((2, 4), intervals))]
    plain, chosen = select(clauses)
    assert plain == 1 or plain == 0
    assert clauses[chosen].features == (2,)  # short (r2) beats wheels (r1) at equal fidelity


@pytest.mark.parametrize("seed", range(8))
def test_structuring_preserves_fidelity(seed):
    """Remark 27: every structured alternative, evaluated as a program, has the unstructured fidelity."""
    rng = np.random.default_rng(seed)
    X = (rng.random((20, 8)) < 0.7).astype(np.int8)
    pos = rng.random(20) < 0.5
    rel = parse_relevance("a: p0, p1\nb: p2, p3\nc: p4, p5\nd: p6, p7\n")
    intervals = [rel.interval([f"p{i}"]) for i in range(8)]
    feats = tuple(sorted(rng.choice(8, size=int(rng.integers(3, 7)), replace=False).tolist()))
    u = Unstructured(feats, fidelity_by_sets(X, pos, feats), clause_relevance(feats, intervals))
    for s in structure(u, intervals, limit=100):
        assert structured_fidelity(s.blocks, X, pos) == pytest.approx(u.fidelity)
        assert better(s.relevance, u.relevance)
        assert sorted(s.blocks[0] + s.blocks[1]) == list(feats)


def test_bad_relevance_text_names_the_field_and_line():
    with pytest.raises(ConfigError, match="relevance.*line 2"):
        parse_relevance("r1: a\nnonsense\n")
    with pytest.raises(ConfigError, match="two relevance levels"):
        parse_relevance("r1: a\nr2: a\n")
